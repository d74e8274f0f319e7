"""The graph tools: neighbours, backlinks and a shortest path in the typed graph
(every node a client names is confined to the registered folders first)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from cairn.interfaces.mcp.tools.base import Tool, ToolContext
from cairn.model import UNTRUSTED_NOTICE
from cairn.model.serialize import to_data

Node = Annotated[str, Field(description="A unit or document id, or PATH[:LINE]",
                            max_length=4096)]


def neighbors(
    ctx: ToolContext,
    node: Node,
    hops: Annotated[int, Field(ge=1, le=3, description="How far to walk")] = 1,
    relations: Annotated[list[str] | None, Field(
        description="Only these relations (references, parent, related, ...)")] = None,
    direction: Annotated[Literal["out", "in", "both"], Field(
        description="out (links it makes), in (links to it) or both")] = "both",
    limit: Annotated[int, Field(ge=1, le=500, description="At most this many")] = 100,
) -> dict[str, Any]:
    """Notes linked to a note within a few hops in the typed graph (links, headings,
    shared tags, declared relations), each with the edge that reached it."""
    c = ctx.cairn
    data = c.graph.neighbors(c.doors.confine(node), hops=hops, relations=relations,
                             direction=direction, limit=limit)
    return {**to_data(data), "notice": UNTRUSTED_NOTICE}


def backlinks(
    ctx: ToolContext,
    node: Node,
    internal: Annotated[bool, Field(
        description="Also links from inside the same document")] = False,
) -> dict[str, Any]:
    """Which notes link to this one, with the linking unit, file and line."""
    c = ctx.cairn
    data = c.graph.backlinks(c.doors.confine(node), include_internal=internal)
    return {**to_data(data), "notice": UNTRUSTED_NOTICE}


def path(
    ctx: ToolContext,
    source: Node,
    target: Node,
    directed: Annotated[bool, Field(description="Follow links only forwards")] = False,
    max_hops: Annotated[int, Field(ge=1, le=12, description="Longest path tried")] = 6,
) -> dict[str, Any]:
    """A shortest chain of links between two notes (length null when there is none)."""
    c = ctx.cairn
    data = c.graph.path(c.doors.confine(source), c.doors.confine(target),
                        direction="out" if directed else "both", max_hops=max_hops)
    return {**to_data(data), "notice": UNTRUSTED_NOTICE}


TOOLS = (Tool(neighbors), Tool(backlinks), Tool(path))
