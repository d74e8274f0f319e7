"""The note tools: read one unit, document or file (``get``), and the notes changed
lately (``recent``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from cairn.interfaces.mcp.tools.base import Tool, ToolContext, untrusted, view_ids
from cairn.model import UNTRUSTED_NOTICE
from cairn.model.serialize import to_data


def get(
    ctx: ToolContext,
    ref: Annotated[str, Field(
        description="A unit or document id (from a search hit), a unique id prefix, or "
        "PATH[:LINE] relative to a registered folder (a line picks the heading there)",
        max_length=4096)],
) -> dict[str, Any]:
    """Read one unit (a heading's section, a chat message) or a whole document: its
    body, outline path, siblings, properties, tags, TODO state, links, backlinks and
    line span in the file. kind says which: unit, document, or file (a chat export
    holding several documents: get one of them by id).
    """
    view = ctx.cairn.doors.get(ref)
    return untrusted(to_data(view), ctx.cairn, view_ids(view))


def recent(
    ctx: ToolContext,
    since: Annotated[str, Field(
        description="An ISO date or time (2026-03-01, 2026-03-01T09:30, UTC) or an age "
        "(7d, 12h, 30m)", max_length=64)],
    limit: Annotated[int, Field(ge=1, le=1000, description="At most this many")] = 50,
) -> dict[str, Any]:
    """Notes whose file changed since a time, newest first: what the user has been
    working on lately."""
    docs = ctx.cairn.doors.recent(since, limit=limit)
    return {"since": since, "documents": to_data(docs), "notice": UNTRUSTED_NOTICE}


TOOLS = (Tool(get), Tool(recent))
