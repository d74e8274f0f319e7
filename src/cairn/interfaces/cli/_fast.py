"""The fast path of ``cairn search``: a new process answers without Typer or Rich.

Importing Typer (with pydantic) and Rich costs a new process more than the search
itself, so :func:`fast_search` reads a ``cairn [--db X] [--config Y] search …`` command
line with the Typer command's own declarations (:mod:`._search_options`) and runs the
same body (:mod:`._hits`). Anything not read for certain — ``--help``, ``--``, an
unknown ``--option``, a value Click might read otherwise, no query words, another
command — is left to Typer (it returns ``None``), so usage errors and help look as
before.

When a query daemon runs, the thin client (:mod:`._thin`) has usually had it answer
the whole command line before this module is imported. Otherwise a search is first sent
to a ``cairn serve`` / ``mcp`` / ``watch`` process or query
daemon advertised for the same index and settings (:mod:`cairn.serving.warm`), whose
model and index are already open; its answer (a :class:`._hits.Found`) is printed by
the same code as a local one. Keyword searches too: the CLI's side of a warm answer (no
store, no search service) costs less CPU than a local keyword search
(``bench/startup.py``). When none answers, the search runs locally and then starts the
per-user query daemon (:mod:`cairn.serving.daemon`, with :mod:`._answer` for thin
clients) for the next ones (``CAIRN_DAEMON=0`` does not). One a keyword search starts
loads the model only when a search needs it, so a user who only searches by keywords
never holds the model's memory; one a semantic or hybrid search starts loads it at
once.
``CAIRN_NO_WARM=1`` always searches locally.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cairn.interfaces.cli._search_options import SearchArgs, read_argv

if TYPE_CHECKING:
    from cairn.app import Cairn
    from cairn.config import Config
    from cairn.interfaces.cli._hits import Found
    from cairn.model.search_request import SearchRequest


def parse(argv: Sequence[str]) -> SearchArgs | None:
    """``argv`` (without the program name) as a search's arguments, or ``None`` when
    it is not a ``search`` command line read for certain (Typer takes it then)."""
    read = read_argv(argv)
    return None if read is None else SearchArgs.of(*read)


def fast_search(argv: Sequence[str]) -> int | None:
    """Run ``cairn search`` from ``argv`` without Typer; returns the exit status, or
    ``None`` when Typer should run this command line instead (see :func:`parse`)."""
    args = parse(argv)
    if args is None:
        return None
    # imported only now: any other command line goes to Typer without paying for them
    from cairn.errors import CairnError
    from cairn.interfaces.cli._hits import layout, print_found, run_search
    from cairn.interfaces.cli._plain import backend_error, err, error, open_index
    from cairn.model.search_request import SearchRequest

    as_json = args.as_json or args.fmt == "json"
    try:
        request = SearchRequest.from_mapping(args.fields)
        fmt, columns = layout(args.fmt, args.columns)
    except CairnError as exc:
        return error(exc, as_json)
    db = args.search_db or args.outer_db
    cold: list[Cairn] = []  # the index this process opened itself (no warm answer)

    def opener(path: Path | None) -> Cairn:
        if config is not None:  # read once for ``path``: the settings the warm look-up used
            from cairn.app import Cairn

            cairn = Cairn(config, create=False)
        else:  # CAIRN_NO_WARM, or the configuration has an error: reported from here
            cairn = open_index(path, args.config)
        cold.append(cairn)
        return cairn

    try:
        # a table or editor positions read the index itself: no warm answer for them
        needs_index = bool(columns) or fmt == "vimgrep"
        found, config = _warm(args.config, db, request, skip=needs_index)
        if found is not None:
            return print_found(found, request, as_json=as_json, files=args.files, fmt=fmt,
                               fields=columns)
        code = run_search(opener, db, request, as_json=as_json, files=args.files, fmt=fmt,
                          fields=columns)
        if code == 0 and cold:
            _start_daemon(cold[0], warm_up=request.mode != "keyword")
        return code
    except BrokenPipeError:  # `cairn search x | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        err.line("aborted")
        return 130
    except Exception as exc:
        failed = backend_error(exc, as_json)
        if failed is None:
            raise
        return failed


def _start_daemon(cairn: Cairn, *, warm_up: bool) -> None:
    """Start the query daemon for the next searches on ``cairn``'s index, when allowed
    (:func:`cairn.serving.daemon.enabled`), loading the model at start when
    ``warm_up`` (else on the first search that needs it); never raises, prints
    nothing."""
    if os.environ.get("CAIRN_NO_WARM"):
        return
    from cairn.serving import daemon

    try:
        if daemon.enabled(cairn.config):
            daemon.spawn(cairn.config, module="cairn.interfaces.cli._answer",
                         warm_up=warm_up)
    except (OSError, ValueError, TypeError):
        return


def _warm(config_file: Path | None, db: Path | None, request: SearchRequest, *,
          skip: bool) -> tuple[Found | None, Config | None]:
    """``(a warm process's answer to this search, the configuration read)``; the
    answer is ``None`` when the search runs locally (``skip``, no warm process, other
    settings, an error), the configuration when it could not be read (or
    ``CAIRN_NO_WARM`` is set)."""
    if os.environ.get("CAIRN_NO_WARM"):
        return None, None
    from cairn.config import load_config
    from cairn.errors import CairnError

    try:
        config = load_config(db=db, config_file=config_file)
    except (CairnError, OSError, ValueError):
        return None, None
    if skip:
        return None, config
    from cairn.interfaces.cli._hits import Found, index_name
    from cairn.serving.remote_hits import RemoteResult
    from cairn.serving.warm import remote_search

    try:
        from cairn.interfaces.cli._thin import failed
        from cairn.serving.daemon import enabled

        # a daemon turned off (CAIRN_DAEMON=0, idle_minutes = 0) is not asked either
        answer = remote_search(config, request.to_mapping(), frozenset(failed),
                               daemons=enabled(config))
        if answer is None:
            return None, config
        result = RemoteResult(answer["result"])
    except (CairnError, OSError, KeyError, TypeError, ValueError):
        return None, config
    return Found(result.hits, result.notes, result.took_ms,
                 empty=bool(answer.get("empty")) and not result.hits,
                 where=index_name(config)), config
