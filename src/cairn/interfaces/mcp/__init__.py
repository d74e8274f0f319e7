"""``cairn mcp``: an MCP server (the official ``mcp`` SDK, 2.x) over one :class:`Cairn`.

:func:`cairn.interfaces.mcp.server.build_server` makes the server; ``cairn mcp`` runs it
over stdio (what desktop and coding agents launch) or streamable HTTP on loopback. The
tools are listed in :data:`cairn.interfaces.mcp.server.TOOLS` (one registry: read
tools always, write tools only when enabled). Importing this package does not import
the SDK; :mod:`.server` does.
"""
