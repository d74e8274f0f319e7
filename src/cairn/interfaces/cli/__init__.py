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
    instead of a traceback. Text the terminal cannot encode is written escaped
    (``\\u2026``), not a crash; output that cannot be written (a full disk) and a
    working folder that no longer exists are one ``error:`` line, exit status 2.
    """
    _forgiving_streams()
    try:
        _run()
    except OSError as exc:
        code = _os_error(exc)
        if code is None:
            raise
        raise SystemExit(code) from None


def _run() -> None:
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


def _forgiving_streams() -> None:
    """Standard output and error escape what their encoding cannot hold (an emoji on
    an ASCII terminal, a file name's undecodable bytes) instead of raising."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # a text file, not closed
        if reconfigure is not None and not getattr(stream, "closed", True):
            reconfigure(errors="backslashreplace")


def _os_error(exc: OSError) -> int | None:
    """The exit status after reporting ``exc`` on one line, or ``None`` when it is none
    of those a user causes from outside: standard output refusing writes (a full
    disk, ``> /dev/full``), a closed pipe, the working folder deleted under the
    command."""
    import os

    try:
        os.getcwd()
    except FileNotFoundError:
        _say("the current folder no longer exists; change to an existing folder "
             "(or give absolute paths) and run again")
        return 2
    if isinstance(exc, BrokenPipeError):  # `cairn … | head`: the reader is gone
        _silence_stdout()
        return 0
    import errno

    # a write to a named file (a note, a backup) carries its name; the index's own
    # writes fail as sqlite errors: an unnamed "disk full" is the output's
    full = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)
    if exc.filename is not None or exc.errno not in full:
        return None
    _silence_stdout()
    _say(f"cannot write the output: {exc.strerror or exc}")
    return 2


def _say(message: str) -> None:
    try:
        sys.stderr.write(f"error: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _silence_stdout() -> None:
    """Point standard output at the null device: what is still buffered would fail
    again when Python flushes it at exit (a second report, "Exception ignored")."""
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def __getattr__(name: str) -> typer.Typer:
    """``cairn.interfaces.cli.app``: the Typer application, imported on first use."""
    if name == "app":
        from cairn.interfaces.cli._app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
