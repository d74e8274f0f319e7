"""The index tools: its figures (``stats``), the registered folders (``list_roots``),
and a re-index run (``index``, a write tool)."""

from __future__ import annotations

from typing import Any

from cairn.interfaces.mcp.tools.base import Tool, ToolContext
from cairn.model.serialize import to_data


def stats(ctx: ToolContext) -> dict[str, Any]:
    """The index at a glance: how many files, documents, units and links, by format;
    the last indexing run; files that failed."""
    return dict(to_data(ctx.cairn.stats()))


def list_roots(ctx: ToolContext) -> dict[str, Any]:
    """The folders the user registered: only files under them can be read."""
    return {"roots": to_data(ctx.cairn.roots())}


def index(ctx: ToolContext) -> dict[str, Any]:
    """Re-index every registered folder (changes the index, never a note file): new,
    changed and removed files are picked up. Returns what the run did."""
    with ctx.lock:
        return dict(to_data(ctx.cairn.background.run()))


TOOLS = (Tool(stats), Tool(list_roots), Tool(index, write=True))
