"""``cairn serve``: the HTTP API (see :mod:`cairn.interfaces.api`); FastAPI and uvicorn
are imported only when the command runs."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, err, fail

if TYPE_CHECKING:
    from cairn.app import Cairn


def serve(
    host: Annotated[str | None, typer.Option(
        "--host", help="Address to bind (default: \\[serve] host, 127.0.0.1); any other "
        "than loopback needs a token.", show_default=False)] = None,
    port: Annotated[int | None, typer.Option(
        "--port", min=1, max=65535, help="Port (default: \\[serve] port, 8765).",
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
    workers: Annotated[int | None, typer.Option(
        "--workers", min=1, max=64, help="Server processes answering on the one port "
        "(each with its own connections, model and vector matrix; the first keeps the "
        "index runs). More than 1 keeps a slow search from delaying the others on a "
        "machine with several cores (default: 1).",
        show_default=False)] = None,
    db: DbOpt = None,
) -> None:
    """Serve the HTTP API and the web UI until Ctrl-C.

    Endpoints: /v1/search, /v1/units/ID, /v1/graph/…, /metrics. The bearer token is
    read from $CAIRN_TOKEN (or the variable \\[serve] token_env names): needed for
    POST /v1/index and for any non-loopback bind.
    """
    try:
        from cairn.serving.warm import advertise

        with common.open_cairn(db) as cairn, _watching(watch, cairn), _dreaming(cairn, db):
            from cairn.interfaces.api.security import Policy
            from cairn.interfaces.api.server import serve as run

            conf = cairn.config.serve
            host_, port_ = host or conf.host, port or conf.port
            policy = Policy.for_bind(
                host_, port_, token=os.environ.get(conf.token_env) or None,
                allowed_hosts=(*conf.allowed_hosts, *(allow_host or ())),
                cors_origins=(*conf.cors_origins, *(cors_origin or ())),
                max_body_bytes=conf.max_body_bytes, max_query_chars=conf.max_query_chars,
            )
            procs = workers or 1
            many = f" with {procs} processes" if procs > 1 else ""
            _check_free(host_, port_)
            err.print(f"cairn: serving {escape(str(cairn.config.db_path))} on "
                      f"http://{escape(host_)}:{port_}{many} (Ctrl-C stops)")
            from cairn.app.serving import serve_mode

            serve_mode()  # numpy is not loaded yet: one BLAS thread; background reloads
            from cairn.serving.index_worker import attach

            attach(cairn)  # index runs a request starts go to a child process
            with advertise(cairn, "serve"):  # the CLI's hybrid searches come here
                run(cairn, policy, host=host_, port=port_, workers=procs)
    except CairnError as exc:
        raise fail(exc, False) from None


def _check_free(host: str, port: int) -> None:
    """Refuse, before saying "serving", an address another process listens on (or that
    cannot be bound at all).

    Raises:
        CairnError: the address and the system's reason.
    """
    from cairn.serving.workers import bind

    try:
        bind(host, port).close()
    except OSError as exc:
        raise CairnError(
            f"cannot serve on http://{host}:{port}: {exc.strerror or exc} (is another "
            "server using it? choose another --port or [serve] port)"
        ) from None


@contextmanager
def _watching(enabled: bool, cairn: Cairn) -> Iterator[None]:
    """With ``--watch``: a child process that follows the registered folders (as
    ``cairn watch`` does) on the same index at a lower CPU priority, for as long as the
    server runs (:mod:`cairn.serving.watch_child`); it stops (after its current
    batch) when the block ends. The server's own index runs (``POST /v1/index``) are
    handed to it meanwhile: it holds the writer lock."""
    if not enabled:
        yield
        return
    from cairn.serving.index_worker import INDEX_NICE
    from cairn.serving.watch_child import WatchChild

    child = WatchChild(cairn.config, nice=INDEX_NICE)
    cairn.background.hand_index_to(child)  # it holds the writer lock: POST /v1/index runs there
    try:
        yield
    finally:
        cairn.background.hand_index_to(None)
        child.close()


@contextmanager
def _dreaming(cairn: Cairn, db: Path | None) -> Iterator[None]:
    """With ``[dream] schedule_minutes`` > 0: a thread with its own ``Cairn`` on the
    same index runs the dream report on that schedule for as long as the server runs."""
    minutes = cairn.maintain.settings.schedule_minutes
    if minutes <= 0:
        yield
        return
    stop = threading.Event()

    def loop() -> None:
        try:
            with common.open_cairn(db) as own:
                own.maintain.every(
                    stop,
                    on_report=lambda r: err.print(
                        f"cairn: dream report {r.id}: {len(r.findings)} findings", markup=False),
                    on_error=lambda e: err.print(f"cairn: dream failed: {e}", markup=False),
                )
        except CairnError as exc:
            err.print(f"cairn: dream schedule stopped: {escape(str(exc))}")

    thread = threading.Thread(target=loop, name="cairn-dream", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=30)


def register(app: typer.Typer) -> None:
    """Add ``serve`` to ``app``."""
    app.command()(serve)
