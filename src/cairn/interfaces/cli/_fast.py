"""The fast path of ``cairn search``: a new process answers without Typer or Rich.

Importing Typer (with pydantic) and Rich costs a new process more than the search
itself, so :func:`fast_search` reads a plain ``cairn [--db X] [--config Y] search …``
command line itself and runs the same body as the Typer command
(:func:`._hits.run_search`). Anything it does not know for certain — ``--help``,
``--``, an unknown ``--option``, a bad value, no query words, another command — is
left to Typer (it returns ``None``), so usage errors and help look as before.

Like the Typer command (``ignore_unknown_options``), words starting with a single
``-`` (``-tag:done``, ``-draft``) are query words.

A search is first sent to a ``cairn serve`` / ``mcp`` / ``watch`` process or query
daemon advertised for the same index and settings (:mod:`cairn.interfaces.warm`), whose
model and index are already open; its answer is printed by the same code as a local
one. Keyword searches too: the CLI's side of a warm answer (no store, no search
service) costs less CPU than a local keyword search (``bench/startup.py``). When none
answers, the search runs locally, and one that may need the model (any mode but
``keyword``) then starts the per-user query daemon (:mod:`cairn.interfaces.daemon`) for
the next ones (``CAIRN_DAEMON=0`` does not). ``CAIRN_NO_WARM=1`` always searches locally.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from cairn.app import Cairn
    from cairn.config import Config
    from cairn.model.search_request import SearchRequest

_GLOBAL = ("--db", "--config")
_VALUED = ("--db", "--limit", "--mode")
_FLAGS = ("--json", "--explain", "--alternates", "--expand", "--no-expand")


@dataclass(frozen=True)
class SearchArgs:
    """A plain ``cairn search`` command line, read: the search and where to run it."""

    fields: Mapping[str, Any]
    """The :class:`cairn.model.SearchRequest` fields it gives (checked when the
    request is made, so a bad value is reported as the Typer command reports it)."""
    outer_db: Path | None = None
    """``--db`` before the command."""
    config: Path | None = None
    search_db: Path | None = None
    """``--db`` after the command (it wins)."""
    as_json: bool = False


def parse(argv: Sequence[str]) -> SearchArgs | None:
    """``argv`` (without the program name) as a search's arguments, or ``None`` when
    it is not a plain ``search`` command line (Typer takes it then)."""
    before: dict[str, Path] = {}
    i = 0
    while i < len(argv) and argv[i] != "search":  # the options before the command
        name, eq, value = argv[i].partition("=")
        if name not in _GLOBAL:
            return None
        if not eq:
            if i + 1 >= len(argv):
                return None
            i, value = i + 1, argv[i + 1]
        before[name] = Path(value)
        i += 1
    if i >= len(argv):
        return None
    words: list[str] = []
    flags: set[str] = set()
    valued: dict[str, str] = {}
    expand: bool | None = None
    rest = list(argv[i + 1 :])
    while rest:
        arg = rest.pop(0)
        if not arg.startswith("--"):
            words.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name in _FLAGS and not eq:
            flags.add(name)
            if name in ("--expand", "--no-expand"):
                expand = name == "--expand"  # the last one wins, as in Typer
        elif name in _VALUED:
            if not eq:
                if not rest:
                    return None
                value = rest.pop(0)
            valued[name] = value
        else:  # --help, --, an unknown or misspelt option: Typer says what it means
            return None
    limit = valued.get("--limit")
    if not words or (limit is not None and not (limit.isdigit() and int(limit) >= 1)):
        return None
    search_db = valued.get("--db")
    return SearchArgs(
        fields={
            "query": " ".join(words),
            "limit": int(limit) if limit is not None else None,
            "mode": valued.get("--mode"),
            "explain": "--explain" in flags,
            "alternates": "--alternates" in flags,
            "expand": expand,
        },
        outer_db=before.get("--db"),
        config=before.get("--config"),
        search_db=Path(search_db) if search_db is not None else None,
        as_json="--json" in flags,
    )


def fast_search(argv: Sequence[str]) -> int | None:
    """Run ``cairn search`` from ``argv`` without Typer; returns the exit status, or
    ``None`` when Typer should run this command line instead (see :func:`parse`)."""
    args = parse(argv)
    if args is None:
        return None
    # imported only now: any other command line goes to Typer without paying for them
    from cairn.errors import QueryError
    from cairn.interfaces.cli._hits import run_search
    from cairn.interfaces.cli._plain import backend_error, err, error, open_index
    from cairn.model.search_request import SearchRequest

    try:
        request = SearchRequest.from_mapping(args.fields)
    except QueryError as exc:
        return error(exc, args.as_json)

    cold: list[Cairn] = []  # the index this process opened itself (no warm answer)

    def opener(db: Path | None) -> AbstractContextManager[Cairn]:
        warm, config = _warm(args.config, db or args.outer_db, request)
        if warm is not None:
            return warm
        if config is not None:  # read once: the same settings the warm look-up used
            from cairn.app import Cairn

            cairn = Cairn(config, create=False)
        else:  # CAIRN_NO_WARM, or the configuration has an error: reported from here
            cairn = open_index(db or args.outer_db, args.config)
        cold.append(cairn)
        return cairn

    try:
        code = run_search(opener, args.search_db, request, as_json=args.as_json)
        if code == 0 and cold and request.mode != "keyword":
            _start_daemon(cold[0])
        return code
    except BrokenPipeError:  # `cairn search x | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        err.line("aborted")
        return 130
    except Exception as exc:
        failed = backend_error(exc, args.as_json)
        if failed is None:
            raise
        return failed


class _Answered:
    """What :func:`._hits.run_search` asks of a ``Cairn``, answered by a warm server."""

    def __init__(self, config: Any, answer: dict[str, Any]) -> None:
        from cairn.serving.warm import RemoteResult

        self.config = config
        self._result = RemoteResult(answer["result"])
        self._empty = bool(answer.get("empty"))
        self.notes = self  # ``cairn.notes.is_empty()``

    def search(self, request: Any) -> Any:
        """The server's result (the request already carried the arguments)."""
        return self._result

    def is_empty(self) -> bool:
        """Whether the server found the index empty."""
        return self._empty


def _start_daemon(cairn: Cairn) -> None:
    """Start the query daemon for the next searches on ``cairn``'s index, when allowed
    (:func:`cairn.interfaces.daemon.enabled`); never raises, prints nothing."""
    if os.environ.get("CAIRN_NO_WARM"):
        return
    from cairn.serving import daemon

    try:
        if daemon.enabled(cairn.config):
            daemon.spawn(cairn.config)
    except (OSError, ValueError, TypeError):
        return


def _warm(config_file: Path | None, db: Path | None, request: SearchRequest
          ) -> tuple[AbstractContextManager[Cairn] | None, Config | None]:
    """``(the answer of a warm process for this search as an opener's context manager,
    the configuration read)``; the answer is ``None`` when the search runs locally (no
    warm process, other settings, an error), the configuration when it could not be
    read (or ``CAIRN_NO_WARM`` is set)."""
    if os.environ.get("CAIRN_NO_WARM"):
        return None, None
    from cairn.config import load_config
    from cairn.errors import CairnError
    from cairn.serving.warm import remote_search

    try:
        config = load_config(db=db, config_file=config_file)
    except (CairnError, OSError, ValueError):
        return None, None
    try:
        answer = remote_search(config, request.to_mapping())
        if answer is None:
            return None, config
        answered = _Answered(config, answer)
    except (CairnError, OSError, KeyError, TypeError, ValueError):
        return None, config

    @contextmanager
    def given() -> Iterator[Cairn]:
        yield cast("Cairn", answered)

    return given(), config
