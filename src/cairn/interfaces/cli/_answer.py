"""The query daemon's side of the thin client (:mod:`._thin`): answer a ``cairn search``
command line as the CLI would have, into a buffer.

``python -m cairn.interfaces.cli._answer --db FILE [--config FILE]`` is the query
daemon (:mod:`cairn.serving.daemon`) with one more kind of request: a command line,
its folder, its environment and its terminals (the wire format is in :mod:`._thin`).
:func:`answer_argv` reads it with the CLI's own grammar (:func:`._fast.parse`), picks
the index exactly as the CLI would (``--db`` and ``--config`` against the client's
folder, its ``CAIRN_*`` variables, the configuration file), and prints with the CLI's
own code (:mod:`._hits`) into the client's buffer, so the output is the local path's.
It passes (the client then runs the normal path) when it cannot be sure of that:

* the command line is not a search read for certain (``--help``, an unknown option:
  Typer's messages come from Typer);
* the configuration the client would read differs from the daemon's in any setting,
  or names another index;
* a variable that changes the answer or its look differs from the daemon's own
  (:data:`._thin.COMPARED`, ``CAIRN_*``), or the file system encoding does;
* ``--explain`` with a terminal on the client's fds 0-2 (Rich sizes its table by it);
* the search itself fails (the local path reports it, naming its own files).

Standard output and error are routed per thread: a request's thread writes into its
buffer; every other write goes where the daemon's output goes (its log), never to a
client.
"""

from __future__ import annotations

import dataclasses
import io
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cairn.interfaces.cli import _thin

if TYPE_CHECKING:
    from cairn.app import Cairn
    from cairn.config import Config

_local = threading.local()
_APPLIED = frozenset({b"CAIRN_DB", b"CAIRN_CONFIG", b"CAIRN_EMBED", b"CAIRN_DB_URL"})
"""Variables read into the client's configuration (compared as a whole)."""
_IGNORED = frozenset({b"CAIRN_DAEMON", b"CAIRN_NO_WARM", b"CAIRN_DAEMON_WAIT"})
"""Variables that change whether a daemon is used, not what it answers."""


class _Capture:
    """One request's output: what its thread writes, in order, and the client's
    terminals and encodings."""

    def __init__(self, ttys: bytes, encodings: tuple[str, str]) -> None:
        self.chunks: list[tuple[int, str]] = []
        self.ttys = (ttys[:1] == b"1", ttys[1:2] == b"1")
        self.encodings = encodings


class _Routed:
    """``sys.stdout`` / ``sys.stderr`` of the daemon: the current thread's capture when
    it answers a client, else the real stream."""

    def __init__(self, real: Any, fd: int) -> None:
        self._real, self._fd = real, fd

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    @property
    def encoding(self) -> str:
        cap: _Capture | None = getattr(_local, "capture", None)
        return str(self._real.encoding) if cap is None else cap.encodings[self._fd - 1]

    def write(self, text: str) -> int:
        cap: _Capture | None = getattr(_local, "capture", None)
        if cap is None:
            return int(self._real.write(text))
        cap.chunks.append((self._fd, str(text)))
        return len(text)

    def flush(self) -> None:
        if getattr(_local, "capture", None) is None:
            self._real.flush()

    def isatty(self) -> bool:
        cap: _Capture | None = getattr(_local, "capture", None)
        return bool(self._real.isatty()) if cap is None else cap.ttys[self._fd - 1]

    def fileno(self) -> int:
        if getattr(_local, "capture", None) is not None:
            raise io.UnsupportedOperation("a client's buffer has no file descriptor")
        return int(self._real.fileno())


def route_streams() -> None:
    """Install the per-thread routing of standard output and error (once)."""
    if not isinstance(sys.stdout, _Routed):
        sys.stdout = _Routed(sys.stdout, 1)
    if not isinstance(sys.stderr, _Routed):
        sys.stderr = _Routed(sys.stderr, 2)


class _Request:
    """A decoded request (see :mod:`._thin` for its fields).

    Raises:
        ValueError: the payload is malformed.
    """

    def __init__(self, payload: bytes) -> None:
        fields = payload.split(b"\0")
        if len(fields) < 8:
            raise ValueError("too few fields")
        cwd, self.ttys, fsenc, out_enc, err_enc, self.size, code, count = fields[:8]
        rest = fields[8:]
        n = int(count)
        if not 0 < n <= len(rest):
            raise ValueError("bad argument count")
        if fsenc.decode() != sys.getfilesystemencoding():
            raise ValueError("another file system encoding")
        if code != _thin.origin():
            raise ValueError("another install or version of cairn")
        self.cwd = Path(os.fsdecode(cwd))
        if not self.cwd.is_absolute():
            raise ValueError("a relative folder")
        self.encodings = (out_enc.decode() or "utf-8", err_enc.decode() or "utf-8")
        self.argv = [os.fsdecode(a) for a in rest[:n]]
        self.env: dict[bytes, bytes] = {}
        for item in rest[n:]:
            name, eq, value = item.partition(b"=")
            if not eq or not _thin.relevant(name):
                raise ValueError("not a variable of the request")
            self.env[name] = value

    def same_environment(self) -> bool:
        """Whether every variable that changes the answer (other than those read into
        the configuration) is as in this daemon."""
        own = {k: v for k, v in os.environb.items() if _thin.relevant(k)}
        return all(self.env.get(k) == own.get(k) for k in (own.keys() | self.env.keys())
                   if k not in _APPLIED and k not in _IGNORED)

    def path(self, value: Path | str | None) -> Path | None:
        """``value`` as the client meant it: relative to its folder."""
        if value is None:
            return None
        p = Path(value)
        return p if p.expanduser().is_absolute() else self.cwd / p

    def config_env(self) -> dict[str, str]:
        """The ``CAIRN_*`` variables the configuration reads, paths made absolute."""
        env = {os.fsdecode(k): os.fsdecode(v) for k, v in self.env.items()
               if k.startswith(b"CAIRN_")}
        for name in ("CAIRN_DB", "CAIRN_CONFIG"):
            if env.get(name):
                env[name] = str(self.path(env[name]))
        return env


def answer_argv(cairn: Cairn, payload: bytes) -> bytes:
    """The answer to a thin client's request (``payload``, see :mod:`._thin`) on the
    daemon's open index ``cairn``: its output and exit status, or ``_thin.PASS``.
    Never raises."""
    try:
        req = _Request(payload)
    except (ValueError, UnicodeError):
        return _thin.PASS
    cap = _Capture(req.ttys, req.encodings)
    _local.capture = cap
    try:
        code = _answer(cairn, req)
    except Exception:  # the local path meets it too and says it in its own words
        code = None
    finally:
        _local.capture = None
    if code is None:
        return _thin.PASS
    return _encode(code, cap.chunks)


def _encode(code: int, chunks: Sequence[tuple[int, str]]) -> bytes:
    merged: list[tuple[int, str]] = []
    for fd, text in chunks:
        if merged and merged[-1][0] == fd:
            merged[-1] = (fd, merged[-1][1] + text)
        elif text:
            merged.append((fd, text))
    parts = [_thin.ANSWER_HEAD + b"%d %d\n" % (code, len(merged))]
    for fd, text in merged:
        data = text.encode("utf-8", "surrogatepass")
        parts += [b"%d %d\n" % (fd, len(data)), data]
    return b"".join(parts)


def _same_index(config: Config, own: Config) -> bool:
    """Whether ``config`` (the client's) names ``own``'s index with every setting the same."""
    from cairn.serving.warm import settings_hash

    if settings_hash(config) != settings_hash(own):  # the files resolved, the settings
        return False
    return dataclasses.replace(config, db_path=own.db_path, config_file=own.config_file) == own


def _own_terminal() -> bool:
    for fd in (0, 1, 2):
        try:
            os.get_terminal_size(fd)
        except (OSError, ValueError):
            continue
        return True
    return False


def _answer(cairn: Cairn, req: _Request) -> int | None:
    """What :func:`._fast.fast_search` does for ``req``, on ``cairn``; ``None`` to pass."""
    from cairn.config import load_config
    from cairn.errors import CairnError
    from cairn.interfaces.cli._fast import parse
    from cairn.interfaces.cli._hits import find, index_name, layout, print_found
    from cairn.interfaces.cli._plain import error
    from cairn.model.search_request import SearchRequest
    from cairn.serving.daemon import idle_minutes

    if not req.same_environment():
        return None
    args = parse(req.argv)
    if args is None:
        return None
    as_json = args.as_json or args.fmt == "json"
    try:
        request = SearchRequest.from_mapping(args.fields)
        fmt, columns = layout(args.fmt, args.columns)
    except CairnError as exc:
        return error(exc, as_json)
    if request.explain and (req.size or _own_terminal()):
        return None
    config = load_config(db=req.path(args.search_db or args.outer_db),
                         config_file=req.path(args.config), env=req.config_env())
    if not _same_index(config, cairn.config) or idle_minutes(config) <= 0:
        return None
    if fmt == "json":  # as _hits.run_search reads it
        as_json, fmt = True, None
    try:
        fmt, columns = layout(fmt, columns)
        found = find(cairn, request, fmt=fmt, fields=columns)
    except CairnError:
        return None
    found = dataclasses.replace(found, where=index_name(config))
    return print_found(found, request, as_json=as_json, files=args.files, fmt=fmt,
                       fields=columns)


def main(argv: list[str] | None = None) -> int:
    """``python -m cairn.interfaces.cli._answer --db FILE [--config FILE]``: the query
    daemon, answering thin clients too (see :func:`cairn.serving.daemon.main`)."""
    from cairn.serving import daemon

    route_streams()
    return daemon.main(argv, handler=answer_argv)


if __name__ == "__main__":
    sys.exit(main())
