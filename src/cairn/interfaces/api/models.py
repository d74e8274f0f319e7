"""The HTTP API's request models and its documented response shapes (OpenAPI).

Responses are built by :func:`cairn.model.serialize.to_data` — the same JSON as
``cairn … --json`` — and these models only describe them: :class:`HitOut` lists every
field of :class:`cairn.model.Hit` (a test keeps them equal).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cairn.model.core import SearchMode
from cairn.model.search_request import SearchRequest as Request

Mode = SearchMode


class SearchRequest(BaseModel):
    """``POST /v1/search``: the parameters of ``cairn search``, as the OpenAPI document
    describes them; each field is the :class:`cairn.model.SearchRequest` field of the
    same name (:meth:`to_request`), with the HTTP API's bounds."""

    model_config = ConfigDict(extra="forbid")

    def to_request(self) -> Request:
        """The search this body asks for.

        Raises:
            QueryError: a value the request refuses (the bounds here are narrower).
        """
        return Request.from_mapping(self.model_dump())

    query: str = Field(
        max_length=4096,
        description="Words (any may match), \"phrases\", -exclusions and filters (tag:, "
        "todo:, priority:, path:, format:, source:, type:, prop:KEY=VALUE, before:, "
        "after:, role:, kind:)",
    )
    mode: Mode | None = Field(
        None, description="keyword (BM25), semantic or hybrid; default: hybrid when the "
        "index has embeddings, else keyword")
    limit: int | None = Field(None, ge=1, le=100, description="Number of hits "
                              "(default: [search] limit, 10)")
    offset: int = Field(0, ge=0, le=10000, description="Hits to skip (paging)")
    explain: bool = Field(False, description="Give each hit its ranks, raw scores and "
                          "fused summands")
    alternates: bool = Field(False, description="Also chat messages off the canonical "
                             "branch")
    expand: bool | None = Field(None, description="Graph expansion (default: [graph] "
                                "expand, off)")
    sort: str | None = Field(None, max_length=200, description="Order by fields, comma-"
                             "separated: relevance, deadline, scheduled, priority, modified, "
                             "title (default: relevance)")
    rerank: bool | None = Field(None, description="Re-rank the top hits with the [rerank] "
                                "reranker (default: [rerank] enabled, off)")


class TimestampOut(BaseModel):
    """An Org timestamp (see ``cairn show --json``)."""

    raw: str = Field(description="The text as written")
    active: bool = Field(description="<…> (true) or […] (false)")
    start: str = Field(description="ISO start")
    end: str | None = Field(description="ISO end of a range")
    repeater: str | None = Field(description="e.g. +1w")
    warning: str | None = Field(description="e.g. -3d")
    role: str = Field(description="scheduled, deadline, closed, property or body")
    diary: bool = Field(description="A diary sexp")


class HitOut(BaseModel):
    """One search hit: the fields of ``cairn search --json``'s hits, in that order."""

    rank: int = Field(description="1-based position")
    score: float = Field(description="The fused score (higher is better)")
    unit_id: str = Field(description="The unit's stable id")
    document_id: str = Field(description="Its document's id")
    title: str = Field(description="The unit's title")
    outline_path: list[str] = Field(description="Heading titles from the top down")
    doc_title: str = Field(description="The document's title")
    path: str = Field(description="File path relative to its source root")
    abs_path: str = Field(description="Absolute file path")
    root: str = Field(description="The source root's folder")
    format: str = Field(description="org, markdown, text, okf, chatgpt, …")
    line_start: int = Field(description="First line of the unit (1-based)")
    line_end: int = Field(description="Last line (inclusive)")
    snippet: str = Field(description="A passage around the best match (untrusted note text)")
    kind: str = Field(description="preamble, heading, code, concept or message")
    tags: list[str] = Field(description="Own then inherited tags")
    todo: str | None = Field(description="TODO keyword")
    siblings: list[str] = Field(description="Titles of sibling headings (or the "
                                "neighbouring messages)")
    highlights: list[list[int]] = Field(description="[start, end] offsets of matches in "
                                        "snippet")
    explain: dict[str, Any] = Field(description="Ranks, raw scores, summands (with explain)")
    priority: str | None = Field(description="Priority cookie (A …)")
    planning: list[TimestampOut] = Field(description="SCHEDULED/DEADLINE/CLOSED timestamps")
    block: str | None = Field(
        default=None,
        description="The Obsidian block (^id, without ^) of the unit holding the first of "
        "the query's words, or null",
    )


class SearchOut(BaseModel):
    """``POST /v1/search``: the same JSON as ``cairn search --json``."""

    query: str = Field(description="The query as given")
    took_ms: float = Field(description="Time taken, in milliseconds")
    notes: list[str] = Field(description="Notes for the user (an unknown filter value, …)")
    hits: list[HitOut] = Field(description="The hits, best first")


class ErrorOut(BaseModel):
    """An error: what went wrong, and its kind (``NotFound``, ``QueryError``, …); a
    server error gives only a generic message and an ``id`` to find it in the log."""

    error: str = Field(description="What went wrong")
    type: str = Field(description="NotFound, QueryError, Forbidden, … or ServerError")
    id: str | None = Field(None, description="The request id (server errors): the log "
                           "line with the details carries it")


class HealthOut(BaseModel):
    """``GET /healthz``."""

    status: Literal["ok", "degraded"] = Field(
        description="ok; degraded while a child process (the watcher) is dead or "
        "restarting")
    children: dict[str, str] | None = Field(
        default=None, description="What is wrong with which child process (degraded)")


Data = dict[str, Any]
"""A JSON object documented in docs/reference/json.md (``cairn show --json``, ``cairn stats
--json``, the graph commands' ``--json``)."""
