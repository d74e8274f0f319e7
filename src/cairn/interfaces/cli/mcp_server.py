"""``cairn mcp``: the MCP server (see :mod:`cairn.interfaces.mcp`) over stdio or
streamable HTTP; the SDK is imported only when the command runs."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, err, fail


def mcp(
    transport: Annotated[str, typer.Option(
        "--transport", help="stdio (what an agent launches) or http (streamable HTTP at "
        "/mcp on loopback).")] = "stdio",
    allow_write: Annotated[bool, typer.Option(
        "--allow-write", help="Also list and allow the tools that change the index "
        "(index); default: \\[mcp] allow_write, off.")] = False,
    host: Annotated[str | None, typer.Option(
        "--host", help="HTTP transport: loopback address to bind (default: \\[mcp] host, "
        "127.0.0.1).", show_default=False)] = None,
    port: Annotated[int | None, typer.Option(
        "--port", min=1, max=65535, help="HTTP transport: port (default: \\[mcp] port, "
        "8766).", show_default=False)] = None,
    db: DbOpt = None,
) -> None:
    """Run the MCP server for AI agents.

    Tools search, get, neighbors, backlinks, path, recent, stats, list_roots
    (read-only unless --allow-write), and cairn:// resources.
    """
    try:
        if transport not in ("stdio", "http"):
            raise CairnError(f"unknown transport {transport!r}: use stdio or http")
        from cairn.serving.warm import advertise

        with common.open_cairn(db) as cairn:
            from cairn.interfaces.mcp.server import build_server, http_app

            server = build_server(cairn, allow_write=allow_write or None)
            from cairn.app.serving import serve_mode

            serve_mode()  # numpy is not loaded yet: one BLAS thread; background reloads
            from cairn.serving.index_worker import attach

            attach(cairn)  # index runs a request starts go to a child process
            if transport == "stdio":
                with advertise(cairn, "mcp"):  # the CLI's hybrid searches come here
                    server.run("stdio")
                return
            import uvicorn

            from cairn.interfaces.api.limits import server_options

            conf = cairn.config.mcp
            host_, port_ = host or conf.host, port or conf.port
            app = http_app(server, host=host_, port=port_)
            err.print(f"cairn: MCP over streamable HTTP at http://{escape(host_)}:{port_}/mcp")
            with advertise(cairn, "mcp"):
                # the header deadline and connection limit of `cairn serve`: slow
                # sockets must not keep other clients out
                uvicorn.run(app, host=host_, port=port_, **server_options())
    except CairnError as exc:
        raise fail(exc, False) from None


def register(app: typer.Typer) -> None:
    """Add ``mcp`` to ``app``."""
    app.command()(mcp)
