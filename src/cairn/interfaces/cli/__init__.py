"""The ``cairn`` command (Typer + Rich). Thin: each command calls one method of Cairn.

One module per command group, each with ``register(app)``: :mod:`.index`,
:mod:`.search`, :mod:`.show`, :mod:`.status` (stats, roots, validate, check),
:mod:`.graph` (``cairn graph …``), :mod:`.evaluate` (``eval``), :mod:`.serve` (the HTTP
API) and :mod:`.mcp_server` (``cairn mcp``); :mod:`._common` holds
the shared options, consoles, opening of the index and error output, and JSON goes
through :mod:`cairn.model.serialize`. The Typer application is :mod:`._app`
(``cairn.interfaces.cli.app``, loaded on first use). No command module imports this one.

Start-up: a ``cairn search`` is first offered to a running query daemon by the thin
client :mod:`._thin` (standard library only; the daemon answers with this CLI's own
code, :mod:`._answer`); else it is parsed by :mod:`._fast` and printed by :mod:`._hits`
without loading Typer, Rich, pydantic, the parsers or the graph builders
(``bench/startup.py`` measures it); everything else, ``--help`` included, goes through
Typer. So this module imports nothing at start (not even :mod:`typing`).

Every command takes ``--json`` and then prints exactly one JSON document on stdout.
Errors print ``error: <reason>`` on stderr and exit with status 2 (or 1 for
"not found").
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: importing typing costs a thin client's start
if TYPE_CHECKING:
    import typer


def main() -> None:
    """Entry point of the ``cairn`` console script.

    A ``cairn search`` is answered by a running query daemon (:func:`._thin.answer`)
    or runs on the fast path (:func:`._fast.fast_search`); any other command line runs
    the Typer application (:func:`._app.run`). Usage errors print a JSON error
    document when ``--json`` was given; a damaged index file gives one clear line
    instead of a traceback.
    """
    from cairn.interfaces.cli._thin import answer

    code = answer(sys.argv[1:])
    if code is None:
        from cairn.interfaces.cli._fast import fast_search

        code = fast_search(sys.argv[1:])
    if code is not None:
        if code:
            raise SystemExit(code)
        return
    from cairn.interfaces.cli._app import run

    run()


def __getattr__(name: str) -> typer.Typer:
    """``cairn.interfaces.cli.app``: the Typer application, imported on first use."""
    if name == "app":
        from cairn.interfaces.cli._app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
