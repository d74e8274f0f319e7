"""The thin client: a new ``cairn search`` process handed to the running query daemon.

A new process pays for every module it imports before it searches; the configuration,
the search request's types and the printing code cost a keyword search several times
what Python itself costs (``bench/startup.py``). So when a query daemon of this user
runs (:mod:`cairn.serving.daemon`), :func:`answer` sends it the raw command line, the
current folder and the few environment values that change the answer, and writes back
what it printed. The daemon reads the command line with the CLI's own grammar, picks
the index as the CLI would, and prints with the CLI's own code into a buffer
(:mod:`._answer`): the output is the local path's by construction. Whatever it cannot
answer identically it passes back, and the normal path runs.

This module imports only ``os`` and ``sys`` (already loaded at start-up) and the C
module ``_socket``: ``socket`` adds ``enum``, ``selectors`` and more, about as much as
the rest of the client (``python -X importtime``).

Safety: only sockets named ``daemon-*.sock`` in the per-user folder are tried; the
folder must be this user's, a directory and closed to others (mode ``0700``), each
socket this user's and closed to others, and (on Linux) the process listening on it
must run as this user (``SO_PEERCRED``). A daemon that is gone, refuses, passes, is
slower than :data:`ANSWER_SECONDS` (for all the daemons asked together) or answers
anything malformed leaves the search to the normal path, without a word. Ctrl-C while
waiting ends the wait at once (exit 130, as a local search).

The wire format (one request per connection; the daemon closes after answering):

* request: ``cairn-argv 1 <N>\\n`` then ``N`` bytes, fields separated by NUL (no field
  can hold one: they come from the command line, the environment and the file
  system): the folder, ``tty`` (two of ``0``/``1``: standard output, standard error),
  the file system encoding, the two streams' encodings, the terminal size
  (``COLUMNSxLINES`` of the first of fds 0-2 that is a terminal, or empty), the
  client's code (:func:`origin`: a daemon of another install or version passes), the
  number of arguments, the arguments, then ``NAME=VALUE`` for each variable of
  :func:`relevant` that is set;
* answer: ``cairn-out 1 <status> <chunks>\\n`` then per chunk ``<fd> <bytes>\\n`` and the
  text written to that stream (UTF-8, lone surrogates kept), in the order written; or
  ``cairn-pass 1\\n``: not answerable here, search as usual.
"""

from __future__ import annotations

import os
import sys

REQUEST_HEAD = b"cairn-argv 1 "
"""The first bytes of a request (the query daemon's socket tells it from a JSON line)."""
ANSWER_HEAD = b"cairn-out 1 "
PASS = b"cairn-pass 1\n"
"""The daemon's answer when the normal path must run instead."""
CONNECT_SECONDS = 0.5
"""Seconds to wait for a daemon to accept before trying the next one."""
ANSWER_SECONDS = 30.0
"""Seconds to wait for a whole answer; a daemon still loading the model may take some
(``CAIRN_DAEMON_WAIT`` sets another bound). A daemon slower than that gets a marker
beside its socket (:data:`HUNG`): no client asks it again until it answers one again."""
HUNG = ".hung"
"""Suffix of that marker (:data:`cairn.serving.warm.HUNG`)."""
OFF = (b"0", b"false", b"no", b"off")
"""Values of ``CAIRN_DAEMON`` that turn the daemon off: none is asked or started."""
MAX_ANSWER = 64 << 20
"""Largest answer read (bytes); a longer one is malformed."""
MAX_DAEMONS = 8
"""Sockets tried at most (newest first): one daemon runs per index and settings."""
COMPARED = frozenset({
    b"HOME", b"XDG_CONFIG_HOME", b"XDG_DATA_HOME", b"XDG_CACHE_HOME", b"TZ", b"TERM",
    b"COLORTERM", b"NO_COLOR", b"FORCE_COLOR", b"COLUMNS", b"LINES", b"TTY_COMPATIBLE",
    b"TTY_INTERACTIVE", b"HF_HUB_OFFLINE",
})
"""Variables besides ``CAIRN_*`` that change what a search finds or how it is printed
(where the configuration and the model live, the local date, colours, the width)."""


failed: set[str] = set()
"""Sockets whose daemon failed this process (slow, gone, malformed answer, not this
user's): the fast path does not ask them again (a daemon that passed is asked: it may
still answer a search request)."""


def relevant(name: bytes) -> bool:
    """Whether the variable ``name`` is sent to the daemon (see :data:`COMPARED`)."""
    return name.startswith(b"CAIRN_") or name in COMPARED


def origin() -> bytes:
    """The running cairn's folder and version: a daemon answers only a client of the
    same code (an upgrade in place or another clone prints its own way)."""
    cairn = sys.modules["cairn"]
    return os.fsencode(os.path.dirname(str(cairn.__file__))) + b" " + str(
        getattr(cairn, "__version__", "")).encode()


def _is_search(argv: list[str]) -> bool:
    """Whether ``argv`` is ``[--db X] [--config Y] search …`` (the daemon reads the
    rest with the CLI's grammar and passes anything else)."""
    i = 0
    while i < len(argv) and argv[i] != "search":
        name = argv[i].partition("=")[0]
        if name not in ("--db", "--config"):
            return False
        i += 1 if "=" in argv[i] else 2
    return i < len(argv)


def _folder() -> str | None:
    """The per-user socket folder as :func:`cairn.serving.warm.socket_folder` names it
    (``tempfile.gettempdir()``'s candidates, without importing ``tempfile``), or
    ``None`` when it is missing or not private to this user."""
    uid = os.getuid()
    for base in (os.environ.get("TMPDIR"), os.environ.get("TEMP"), os.environ.get("TMP"),
                 "/tmp", "/var/tmp", "/usr/tmp"):
        if base and os.path.isdir(base):
            folder = os.path.join(os.path.abspath(base), f"cairn-{uid}")
            try:
                st = os.lstat(folder)
            except OSError:
                return None
            private = st.st_uid == uid and not st.st_mode & 0o077
            return folder if private and (st.st_mode & 0o170000) == 0o040000 else None
    return None


def _sockets(folder: str) -> list[str]:
    """The daemons' sockets in ``folder`` this user owns and no one else may open,
    newest first (at most :data:`MAX_DAEMONS`)."""
    uid = os.getuid()
    found: list[tuple[float, str]] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    for name in names:
        if not (name.startswith("daemon-") and name.endswith(".sock")):
            continue
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        mine = st.st_uid == uid and not st.st_mode & 0o077
        if (st.st_mode & 0o170000) == 0o140000 and mine and not os.path.exists(path + HUNG):
            found.append((st.st_mtime, path))
    found.sort(reverse=True)
    return [path for _, path in found[:MAX_DAEMONS]]


def _terminal_size() -> bytes:
    """``COLUMNSxLINES`` of the first of fds 0, 1, 2 that is a terminal (as Rich looks
    for a width), or empty."""
    for fd in (0, 1, 2):
        try:
            size = os.get_terminal_size(fd)
        except (OSError, ValueError):
            continue
        return b"%dx%d" % (size.columns, size.lines)
    return b""


def _tty(stream: object) -> bytes:
    try:
        return b"1" if stream.isatty() else b"0"  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return b"0"


def request(argv: list[str]) -> bytes:
    """The request for ``argv`` in this process's folder, environment and terminals.

    Raises:
        OSError: the current folder is gone.
    """
    fields = [
        os.fsencode(os.getcwd()),
        _tty(sys.stdout) + _tty(sys.stderr),
        sys.getfilesystemencoding().encode(),
        str(getattr(sys.stdout, "encoding", "") or "").encode(),
        str(getattr(sys.stderr, "encoding", "") or "").encode(),
        _terminal_size(),
        origin(),
        b"%d" % len(argv),
        *map(os.fsencode, argv),
        *(k + b"=" + v for k, v in os.environb.items() if relevant(k)),
    ]
    payload = b"\0".join(fields)
    return REQUEST_HEAD + b"%d\n" % len(payload) + payload


def parse_answer(data: bytes) -> tuple[int, list[tuple[int, str]]] | None:
    """``(exit status, [(fd, text), …])`` of a daemon's answer, or ``None`` when it
    passed or the answer is malformed."""
    head, sep, rest = data.partition(b"\n")
    if not sep or not head.startswith(ANSWER_HEAD):
        return None
    try:
        status, count = (int(x) for x in head[len(ANSWER_HEAD):].split(b" "))
        chunks: list[tuple[int, str]] = []
        for _ in range(count):
            line, sep, rest = rest.partition(b"\n")
            fd, size = (int(x) for x in line.split(b" "))
            if not sep or fd not in (1, 2) or not 0 <= size <= len(rest):
                return None
            chunks.append((fd, rest[:size].decode("utf-8", "surrogatepass")))
            rest = rest[size:]
    except ValueError:  # not numbers, not two of them, not UTF-8
        return None
    if rest or not 0 <= status <= 255:
        return None
    return status, chunks


def ask(path: str, data: bytes, timeout: float = ANSWER_SECONDS) -> bytes | None:
    """Send ``data`` to the daemon on ``path``; its whole answer, or ``None`` when it
    cannot be reached, runs as another user, or is slower than ``timeout`` seconds.
    A socket nobody listens on is removed (a daemon renames its socket into place only
    once it listens: this one is gone); a daemon slower than ``timeout`` gets the
    :data:`HUNG` marker.

    Raises:
        KeyboardInterrupt: Ctrl-C while waiting.
    """
    import _socket  # a C module: no import chain

    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(min(CONNECT_SECONDS, timeout))
        s.connect(path)
        if hasattr(_socket, "SO_PEERCRED"):  # struct ucred {pid, uid, gid}
            cred = s.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
            if int.from_bytes(cred[4:8], sys.byteorder) != os.getuid():
                return None
        import time  # built in: already loaded

        deadline = time.monotonic() + timeout
        s.settimeout(timeout)
        s.sendall(data)
        buf = bytearray()
        while len(buf) <= MAX_ANSWER:
            left = deadline - time.monotonic()
            if left <= 0:
                _mark_hung(path)
                return None
            s.settimeout(left)
            chunk = s.recv(1 << 20)
            if not chunk:
                return bytes(buf)
            buf += chunk
        return None
    except ConnectionRefusedError:  # a dead daemon's socket, in this user's folder
        _remove(path)
        return None
    except TimeoutError:
        _mark_hung(path)
        return None
    except OSError:  # no such file, reset
        return None
    finally:
        s.close()


def _mark_hung(path: str) -> None:
    """Leave the :data:`HUNG` marker beside the socket ``path`` (never raises)."""
    try:
        os.close(os.open(path + HUNG, os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError:
        return


def _remove(path: str) -> None:
    """Remove the file ``path`` if it can be (never raises)."""
    try:
        os.unlink(path)
    except OSError:
        return


def _bound(timeout: float | None) -> float:
    """``timeout``, else ``CAIRN_DAEMON_WAIT`` seconds, else :data:`ANSWER_SECONDS`."""
    if timeout is not None:
        return timeout
    try:
        wait = float(os.environ.get("CAIRN_DAEMON_WAIT", ""))
    except ValueError:
        return ANSWER_SECONDS
    return wait if 0 < wait < ANSWER_SECONDS * 100 else ANSWER_SECONDS


def answer(argv: list[str], timeout: float | None = None) -> int | None:
    """Have a running query daemon answer the ``cairn`` command line ``argv`` (without
    the program name): its output is written here and its exit status returned.

    ``timeout`` bounds the wait for all the daemons asked together (``None``:
    ``CAIRN_DAEMON_WAIT`` or :data:`ANSWER_SECONDS`).

    Returns:
        The exit status, or ``None`` when no daemon answered (not a search,
        ``CAIRN_NO_WARM``, ``CAIRN_DAEMON=0``, no daemon, a daemon that passed or
        failed): nothing was written then, and the normal path runs.
    """
    if os.environ.get("CAIRN_NO_WARM") or sys.stdout is None or sys.stderr is None:
        return None
    if not hasattr(os, "getuid") or not _is_search(argv):
        return None
    if os.environb.get(b"CAIRN_DAEMON", b"").strip().lower() in OFF:
        return None
    folder = _folder()
    sockets = _sockets(folder) if folder else []
    if not sockets:
        return None
    import time  # built in: already loaded

    deadline = time.monotonic() + _bound(timeout)  # for all the daemons asked together
    try:
        data = request(argv)
        for path in sockets:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            got = ask(path, data, left)
            found = None if got is None else parse_answer(got)
            if found is not None:
                return _write(*found)
            if got != PASS:
                failed.add(path)
    except KeyboardInterrupt:
        sys.stderr.write("aborted\n")
        return 130
    except OSError:  # the current folder is gone: the normal path says so
        return None
    return None


def _write(status: int, chunks: list[tuple[int, str]]) -> int:
    """Write the daemon's output to this process's streams, in its order (their own
    encoding and buffering apply, as to a local search's)."""
    try:
        for fd, text in chunks:
            (sys.stdout if fd == 1 else sys.stderr).write(text)
    except BrokenPipeError:  # `cairn search x | head`, as the local path
        sys.stderr.close()
        return 0
    return status
