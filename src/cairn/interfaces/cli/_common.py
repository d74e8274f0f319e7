"""What every command module shares: the consoles, the common options, opening the
index, one JSON document, an error.

Used by every module of :mod:`cairn.interfaces.cli`, so options, errors and JSON
output look and behave the same everywhere. It imports no command module.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from typer._click.exceptions import UsageError
from typer._click.globals import get_current_context

from cairn.errors import NotFound
from cairn.interfaces.cli._console import CliConsole
from cairn.interfaces.cli._hits import MODES as MODES
from cairn.interfaces.cli._hits import planning_text as planning_text
from cairn.interfaces.cli._plain import emit_json as emit_json
from cairn.interfaces.cli._plain import open_index
from cairn.interfaces.cli._plain import plural as plural

if TYPE_CHECKING:
    from cairn.app import Cairn

out = CliConsole(highlight=False, soft_wrap=True, emoji=False)
"""Standard output (no emoji codes: Org tags like ``:tomato:`` stay text; nothing
wrapped on a pipe, see :mod:`._console`)."""
err = CliConsole(stderr=True, highlight=False, emoji=False)
"""Standard error: notes, warnings, errors."""

DB_HELP = (
    "Index file (default: --db before the command, else CAIRN_DB, else \\[store] path, "
    "else the user data dir's cairn.db)."
)
DbOpt = Annotated[Path | None, typer.Option("--db", help=DB_HELP, show_default=False)]
"""``--db`` after the command: beats ``--db`` before it, which beats ``CAIRN_DB``."""
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
WaitOpt = Annotated[
    bool, typer.Option("--wait", help="If another cairn process is writing the index, wait for it.")
]
"""``--wait``: wait for the writer lock instead of stopping at once."""


def mass_delete_option(after: str = ".") -> Any:
    """The ``--allow-mass-delete`` option (for ``Annotated[bool, ...]``), its help
    ending in ``after`` (what the command does without it)."""
    return typer.Option(
        "--allow-mass-delete",
        help="Remove files from the index even when more than \\[index] "
        "mass_delete_share of a folder is gone" + after,
    )


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
    return open_index(db or state.db_path, state.config, create=create)


def refuse_together(*given: tuple[str, object]) -> None:
    """Refuse options that exclude each other: ``given`` is ``(option, its value)``
    pairs, a value counting as given when truthy; two or more given is a usage error
    naming the first two (exit status 2; a JSON error document with ``--json``, see
    :func:`._app.run`), before the command does anything.

    Raises:
        UsageError: (Typer's Click) two of them were given.
    """
    named = [name for name, value in given if value]
    if len(named) > 1:
        raise UsageError(f"{named[0]} and {named[1]} cannot be used together",
                         get_current_context(silent=True))


def needs(option: str, value: object, other: str, other_value: object) -> None:
    """Refuse ``option`` given without ``other``, which it only works with (rather than
    ignore it: ``restore --dry-run`` without ``--prune`` would restore for real).

    Raises:
        UsageError: (Typer's Click) ``option`` was given, ``other`` was not.
    """
    if value and not other_value:
        raise UsageError(f"{option} only works with {other}", get_current_context(silent=True))


def fail(exc: Exception, as_json: bool) -> typer.Exit:
    """Report an error (JSON ``{"error", "type"}`` with ``--json``, else one red line)
    and return the exit to raise: status 1 for "not found", 2 otherwise."""
    code = 1 if isinstance(exc, NotFound) else 2
    if as_json:
        emit_json({"error": str(exc), "type": type(exc).__name__})
    else:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
    return typer.Exit(code)
