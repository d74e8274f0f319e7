"""The MCP tools, one module per group; each module declares its tools in ``TOOLS``.

:data:`TOOLS` is the server's whole list, in the order ``tools/list`` answers it: the
groups in :data:`GROUPS` order, read tools before write tools. A new tool is a function
in its group's module (first parameter the :class:`ToolContext`) named in that
module's ``TOOLS``; a new group is a module added to :data:`GROUPS`.
"""

from __future__ import annotations

from types import ModuleType

from cairn.interfaces.mcp.tools import graph, index, maintenance, memory, notes, search
from cairn.interfaces.mcp.tools.base import Tool, ToolContext

GROUPS: tuple[ModuleType, ...] = (search, notes, graph, index, maintenance, memory)
"""The tool modules, in the order their tools are listed."""

TOOLS: tuple[Tool, ...] = tuple(sorted(
    (tool for group in GROUPS for tool in group.TOOLS), key=lambda tool: tool.write))
"""Every tool of the server (a stable sort: read tools first, each group's order kept)."""

__all__ = ["GROUPS", "TOOLS", "Tool", "ToolContext"]
