"""``cairn daemon status`` and ``cairn daemon stop``: the query daemon the CLI starts
for semantic and hybrid searches (:mod:`cairn.serving.daemon`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as common
from cairn.config import Config, load_config
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, JsonOpt, emit_json, fail, out

daemon_app = typer.Typer(
    help="The query daemon that keeps the model loaded between searches.",
    no_args_is_help=True,
)


def _config(db: DbOpt) -> Config:
    """The configuration of the index chosen as usual (``--db``, ``CAIRN_DB`` …)."""
    return load_config(db=db or common.state.db_path, config_file=common.state.config)


@daemon_app.command("status")
def status(db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Say whether a query daemon runs for the index.

    A `cairn search` starts one when no `cairn serve`, `mcp` or `watch` runs for the
    index; it exits after \\[daemon] idle_minutes without a search. CAIRN_DAEMON=0 (or
    \\[daemon] idle_minutes = 0) never starts or uses one. Sockets and adverts of
    daemons that are gone are removed.
    """
    from cairn.serving import daemon

    try:
        config = _config(db)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    daemon.sweep()
    found = daemon.running(config)
    data: dict[str, Any] = {
        "db": str(config.db_path),
        "enabled": daemon.enabled(config),
        "idle_minutes": daemon.idle_minutes(config),
        "daemons": [{"pid": int(ad["pid"]), "started": str(ad.get("started", ""))}
                    for ad in found],
    }
    if as_json:
        emit_json(data)
        return
    for d in data["daemons"]:
        out.print(f"query daemon running for {escape(data['db'])}: pid {d['pid']}, "
                  f"started {d['started']}; `cairn daemon stop` stops it")
    if not found:
        state = "on" if data["enabled"] else "off (CAIRN_DAEMON=0 or \\[daemon] idle_minutes = 0)"
        out.print(f"no query daemon runs for {escape(data['db'])}; starting one is {state}")


@daemon_app.command("stop")
def stop(
    db: DbOpt = None,
    every: Annotated[
        bool, typer.Option("--all", help="Stop every query daemon of this user, any index "
                                 "(those in this user's socket folder).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Stop the query daemon of the index.

    The next search starts a new one, unless CAIRN_DAEMON=0. Sockets and adverts of
    daemons that are gone are removed.
    """
    from cairn.serving import daemon

    try:
        config = None if every else _config(db)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    pids = daemon.stop(config)
    if as_json:
        emit_json({"stopped": pids})
        return
    if pids:
        out.print("stopped query daemon " + ", ".join(f"pid {p}" for p in pids))
    else:
        out.print("no query daemon was running")


def register(app: typer.Typer) -> None:
    """Add the ``daemon`` group to ``app``."""
    app.add_typer(daemon_app, name="daemon")
