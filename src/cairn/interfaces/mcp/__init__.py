"""``cairn mcp``: an MCP server (the official ``mcp`` SDK, 2.x) over one :class:`Cairn`.

:func:`cairn.interfaces.mcp.server.build_server` makes the server; ``cairn mcp`` runs it
over stdio (what desktop and coding agents launch) or streamable HTTP on loopback. The
tools are declared one module per group in :mod:`.tools` (:data:`.tools.TOOLS`: read
tools always listed, write tools only when enabled), the resources in
:mod:`.resources`. Importing this package does not import the SDK; :mod:`.server` does.
"""
