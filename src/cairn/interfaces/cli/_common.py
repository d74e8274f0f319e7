"""What every command module shares: the consoles, the common options, opening the
index, one JSON document, an error.

Used by every module of :mod:`cairn.interfaces.cli`, so options, errors and JSON
output look and behave the same everywhere. It imports no command module.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from cairn.app import Cairn
from cairn.errors import NotFound
from cairn.interfaces.serialize import to_json
from cairn.model import Timestamp

out = Console(highlight=False, soft_wrap=True, emoji=False)
"""Standard output (no emoji codes: Org tags like ``:tomato:`` stay text)."""
err = Console(stderr=True, highlight=False, emoji=False)
"""Standard error: notes, warnings, errors."""

DB_HELP = (
    "Index file (default: --db before the command, else CAIRN_DB, else [store] path, "
    "else the user data dir's cairn.db)."
)
DbOpt = Annotated[Path | None, typer.Option("--db", help=DB_HELP, show_default=False)]
"""``--db`` after the command: beats ``--db`` before it, which beats ``CAIRN_DB``."""
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
MODES = ("keyword", "semantic", "hybrid")
"""The search modes."""


class State:
    """The options given before the command (``cairn --db X --config Y CMD``)."""

    db_path: Path | None = None
    config: Path | None = None


state = State()


def open_cairn(db: Path | None, *, create: bool = False) -> Cairn:
    """Open the index: ``--db`` after the command, else the one before it, else
    ``CAIRN_DB`` / ``[store] path`` / the default (see :func:`cairn.config.load_config`).

    Read-only commands pass ``create=False`` so that a mistyped path is an error, not
    an empty result.

    Raises:
        cairn.errors.NotFound: ``create`` is false and there is no index file there.
        cairn.errors.ConfigError / StoreError: bad configuration or index file.
    """
    return Cairn.open(db=db or state.db_path, config_file=state.config, create=create)


def emit_json(data: Any) -> None:
    """Print ``data`` (typed results allowed, see :mod:`cairn.interfaces.serialize`)
    as one JSON document on standard output."""
    sys.stdout.write(to_json(data) + "\n")


def fail(exc: Exception, as_json: bool) -> typer.Exit:
    """Report an error (JSON ``{"error", "type"}`` with ``--json``, else one red line)
    and return the exit to raise: status 1 for "not found", 2 otherwise."""
    code = 1 if isinstance(exc, NotFound) else 2
    if as_json:
        emit_json({"error": str(exc), "type": type(exc).__name__})
    else:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
    return typer.Exit(code)


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``"1 chunk"``, ``"2 chunks"``."""
    return f"{n} {noun if n == 1 else (nouns or noun + 's')}"


def planning_text(planning: Sequence[Timestamp]) -> str:
    """``SCHEDULED: <2026-03-20 Fri> DEADLINE: <…>`` as on an Org planning line."""
    return " ".join(f"{t.role.upper()}: {t.raw}" for t in planning)
