"""The ``cairn`` Typer application (Typer + Rich). Thin: each command calls one method
of Cairn. Imported only when a command needs it: :func:`cairn.interfaces.cli.main` runs
a plain ``cairn search`` without it (:mod:`._fast`).

One module per command group, each with ``register(app)``: :mod:`.index`,
:mod:`.search`, :mod:`.show`, :mod:`.status` (stats, roots, validate, check),
:mod:`.graph` (``cairn graph …``), :mod:`.evaluate` (``eval``), :mod:`.serve` (the HTTP
API) and :mod:`.mcp_server` (``cairn mcp``); :mod:`._common` holds
the shared options, consoles, opening of the index and error output, and JSON goes
through :mod:`cairn.model.serialize`. No command module imports this one.

Every command takes ``--json`` and then prints exactly one JSON document on stdout.
Errors print ``error: <reason>`` on stderr and exit with status 2 (or 1 for
"not found").
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as _common
import cairn.interfaces.cli.agenda as agenda
import cairn.interfaces.cli.daemon as daemon
import cairn.interfaces.cli.dream as dream
import cairn.interfaces.cli.enrich as enrich
import cairn.interfaces.cli.evaluate as evaluate
import cairn.interfaces.cli.export as export
import cairn.interfaces.cli.graph as graph
import cairn.interfaces.cli.index as index
import cairn.interfaces.cli.mcp_server as mcp_server
import cairn.interfaces.cli.memory as memory
import cairn.interfaces.cli.redact as redact
import cairn.interfaces.cli.restore as restore
import cairn.interfaces.cli.search as search
import cairn.interfaces.cli.serve as serve
import cairn.interfaces.cli.show as show
import cairn.interfaces.cli.status as status
import cairn.interfaces.cli.store as store
import cairn.interfaces.cli.terms as terms
import cairn.interfaces.cli.watch as watch
from cairn.interfaces.cli._common import emit_json, err
from cairn.interfaces.cli._plain import backend_error

app = typer.Typer(
    name="cairn",
    help=(
        "cairn: a local-first knowledge engine over your plain-text notes.\n\n"
        "Index folders of Org, Markdown and text notes into one SQLite file, then search "
        "them.\n\nQuick start:\n\n"
        "  cairn index ~/notes          # register and index a folder\n\n"
        "  cairn search 'budget review' # hybrid: keywords (BM25) and meaning\n\n"
        "  cairn search 'tag:work todo:open'\n\n"
        "  cairn show notes/plan.org:12 # the heading at that line\n\n"
        "The index lives in your data folder (see `cairn stats`); use --db or CAIRN_DB "
        "to choose another file."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
)


@app.callback()
def _main(
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            envvar="CAIRN_DB",
            help="Index file for every command (default: $CAIRN_DB, else \\[store] path, else "
            "the user data dir's cairn.db); --db after the command beats it.",
            show_default=False,
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="cairn.toml to read (default: $CAIRN_CONFIG, else the "
            "user config dir's cairn.toml).",
        ),
    ] = None,
) -> None:
    _common.state.db_path = db
    _common.state.config = config


for _group in (
    index, watch, search, show, status, graph, evaluate, serve, mcp_server, store, dream,
    restore, agenda, redact, terms, memory, export, enrich, daemon,
):
    _group.register(app)


def reflow(text: str) -> str:
    """A help text with each prose paragraph on one line, for Rich to wrap to the
    terminal: in Typer's ``rich`` markup mode a docstring's own line breaks stay, and
    each line was then wrapped again on its own (a ragged short line mid-sentence). A
    paragraph whose lines are all indented (the examples) keeps its lines."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(
        p if all(line.startswith("  ") for line in p.split("\n"))
        else " ".join(line.strip() for line in p.split("\n"))
        for p in paragraphs
    )


def _reflow_helps(typer_app: typer.Typer) -> None:
    """:func:`reflow` the help of every command of ``typer_app`` and of its groups (the
    docstrings stay wrapped in the source)."""
    for info in typer_app.registered_commands:
        doc = info.help if info.help is not None else inspect.getdoc(info.callback)
        if doc:
            info.help = reflow(doc)
    for group in typer_app.registered_groups:
        if group.help:
            group.help = reflow(group.help)
        sub = group.typer_instance
        if sub is not None:
            if isinstance(sub.info.help, str):
                sub.info.help = reflow(sub.info.help)
            _reflow_helps(sub)


_reflow_helps(app)


def run() -> None:
    """Run the Typer application on ``sys.argv`` (see :func:`cairn.interfaces.cli.main`).

    Usage errors print a JSON error document when ``--json`` was given; a damaged index
    file gives one clear line instead of a traceback.
    """
    as_json = "--json" in sys.argv[1:]
    try:
        rc = app(standalone_mode=False)
    except BrokenPipeError:  # `cairn search x | head`
        sys.stderr.close()
        raise SystemExit(0) from None
    except typer.Abort:
        err.print("aborted")
        raise SystemExit(130) from None
    except typer.TyperException as exc:  # usage errors: bad option, missing argument
        code = int(getattr(exc, "exit_code", 2))
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        if as_json:
            emit_json({"error": message, "type": type(exc).__name__})
        elif hasattr(exc, "show"):
            exc.show()
        else:
            err.print(f"[red]error:[/red] {escape(message)}")
        raise SystemExit(code) from None
    except Exception as exc:
        status = backend_error(exc, as_json)
        if status is None:
            raise
        raise SystemExit(status) from None
    if isinstance(rc, int) and rc:
        raise SystemExit(rc)
