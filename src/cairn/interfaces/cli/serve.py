"""``cairn serve``: the HTTP API (see :mod:`cairn.interfaces.api`); FastAPI and uvicorn
are imported only when the command runs."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, err, fail


def serve(
    host: Annotated[str | None, typer.Option(
        "--host", help="Address to bind (default: [serve] host, 127.0.0.1); any other "
        "than loopback needs a token.", show_default=False)] = None,
    port: Annotated[int | None, typer.Option(
        "--port", min=1, max=65535, help="Port (default: [serve] port, 8765).",
        show_default=False)] = None,
    allow_host: Annotated[list[str] | None, typer.Option(
        "--allow-host", help="Also accept this Host header (a name clients use for this "
        "server; repeatable).", show_default=False)] = None,
    cors_origin: Annotated[list[str] | None, typer.Option(
        "--cors-origin", help="Allow this browser origin, e.g. http://localhost:5173 "
        "(repeatable; default: none).", show_default=False)] = None,
    watch: Annotated[bool, typer.Option(
        "--watch", help="Also follow the registered folders' changes (as `cairn watch` "
        "does), so what the API answers stays current.")] = False,
    db: DbOpt = None,
) -> None:
    """Serve the HTTP API (/v1/search, /v1/units/ID, /v1/graph/…, /metrics) until
    Ctrl-C. The bearer token is read from $CAIRN_TOKEN (or the variable [serve]
    token_env names): needed for POST /v1/index and for any non-loopback bind."""
    try:
        with common.open_cairn(db) as cairn, _watching(watch, db):
            from cairn.interfaces.api.app import serve as run
            from cairn.interfaces.api.security import Policy

            conf = cairn.config.serve
            host_, port_ = host or conf.host, port or conf.port
            policy = Policy.for_bind(
                host_, port_, token=os.environ.get(conf.token_env) or None,
                allowed_hosts=(*conf.allowed_hosts, *(allow_host or ())),
                cors_origins=(*conf.cors_origins, *(cors_origin or ())),
                max_body_bytes=conf.max_body_bytes, max_query_chars=conf.max_query_chars,
            )
            err.print(f"cairn: serving {escape(str(cairn.config.db_path))} on "
                      f"http://{escape(host_)}:{port_} (Ctrl-C stops)")
            run(cairn, policy, host=host_, port=port_)
    except CairnError as exc:
        raise fail(exc, False) from None


@contextmanager
def _watching(enabled: bool, db: Path | None) -> Iterator[None]:
    """With ``--watch``: a watcher thread with its own ``Cairn`` on the same index for
    as long as the server runs; it stops (after its current batch) when the block ends."""
    if not enabled:
        yield
        return
    from cairn.interfaces import watch as watcher

    stop = threading.Event()
    problems: list[str] = []

    def follow() -> None:
        try:
            with common.open_cairn(db, create=True) as own:
                watcher.watch(own, stop=stop)
        except CairnError as exc:
            problems.append(str(exc))
            err.print(f"cairn: watching stopped: {escape(str(exc))}")

    thread = threading.Thread(target=follow, name="cairn-watch", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=30)


def register(app: typer.Typer) -> None:
    """Add ``serve`` to ``app``."""
    app.command()(serve)
