"""The search tool: the user's notes searched as ``cairn search --json`` does."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from cairn.interfaces.mcp.tools.base import Tool, ToolContext, untrusted
from cairn.model import SearchMode, SearchRequest
from cairn.model.search_body import search_body


def search(
    ctx: ToolContext,
    query: Annotated[str, Field(
        description="Words (any may match), \"phrases\", -exclusions and filters such as "
        "tag:work todo:open path:projects/ before:2026-01-01 type:meeting prop:KEY=VALUE",
        max_length=4096)],
    mode: Annotated[SearchMode | None, Field(
        description="keyword (BM25), semantic (embeddings) or hybrid (both fused); "
        "default: hybrid when the index has embeddings, else keyword")] = None,
    filters: Annotated[list[str], Field(
        description="More filters, each like tag:work or -todo:DONE (added to the query)",
        max_length=32)] = [],  # noqa: B006 - a schema default, never mutated
    limit: Annotated[int, Field(ge=1, le=100, description="Number of hits")] = 10,
    offset: Annotated[int, Field(ge=0, le=10000, description="Hits to skip (paging)")] = 0,
    explain: Annotated[bool, Field(description="Give each hit its ranks and scores")] = False,
    alternates: Annotated[bool, Field(
        description="Also chat messages off the canonical branch")] = False,
    expand: Annotated[bool | None, Field(
        description="Follow links 1-2 hops from the top hits and re-rank "
        "(default: the configuration, off)")] = None,
    sort: Annotated[str | None, Field(
        description="Order by fields, comma-separated: relevance, deadline, scheduled, "
        "priority, modified, title (default: relevance)", max_length=200)] = None,
    rerank: Annotated[bool | None, Field(
        description="Re-rank the top hits with the configured cross-encoder or /rerank "
        "endpoint (default: the configuration, off)")] = None,
) -> dict[str, Any]:
    """Search the user's notes. Returns hits best first: each with its title, outline
    path (headings above it), file path and line span, tags, TODO state and a snippet;
    pass a hit's unit_id to `get` for the full text. Same hits as `cairn search --json`.
    """
    request = SearchRequest.of(query, mode=mode, filters=tuple(filters), limit=limit,
                               offset=offset, explain=explain, alternates=alternates,
                               expand=expand, sort=sort, rerank=rerank)
    res = ctx.cairn.search(request)
    body = search_body(request.text.strip(), res)
    return untrusted(body, ctx.cairn, [h.unit_id for h in res.hits])


TOOLS = (Tool(search),)
