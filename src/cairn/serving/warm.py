"""The warm model: a running server answers the CLI's semantic and hybrid searches.

A ``cairn serve``, ``cairn mcp`` (either transport) or ``cairn watch`` process keeps
its embedding model loaded; a new ``cairn search`` process would spend most of a
second loading its own. So each of those processes *advertises* itself while it runs
(:func:`advertise`), and the CLI's fast path asks it first (:func:`remote_search`),
loading the model itself only when no server answers. When none runs, the CLI starts
the per-user query daemon (:mod:`cairn.serving.daemon`), which advertises itself
the same way.

* **The advert**: ``<index file>.servers/<pid>.json`` beside the index —
  ``{"pid", "kind", "socket", "db", "settings", "started"}``. ``settings`` is a hash
  of the configuration that changes what a search answers (:func:`settings_hash`): a
  CLI run with another ``cairn.toml`` or ``CAIRN_EMBED`` does not use the server.
  Adverts of processes that are gone (no such pid, or nobody listening) are removed
  by the client that finds them; a server removes its own on exit.
* **The socket**: a Unix domain socket in a per-user folder of the temporary
  directory (``cairn-<uid>``, mode 0700, refused if another user owns it), so the
  path stays under the 108-byte limit wherever the index lives. Only the user who
  runs the server can connect: the same people who can read the index file.
* **The protocol**: one JSON line each way. Request ``{"op": "search", …}`` with the
  fields of a :class:`cairn.model.SearchRequest` (``"query"``, ``"mode"``, ``"limit"``,
  …; :meth:`~cairn.model.SearchRequest.to_mapping`), at most 64 KiB; answer
  ``{"ok": true, "result": {"query", "took_ms", "notes", "hits"}, "empty": bool}``
  (``result`` is exactly what ``cairn search --json`` prints) or ``{"ok": false,
  "error", "type"}``. A daemon also answers ``{"op": "stop"}`` (``{"ok": true,
  "stopping": pid}``) and then exits. On any error the CLI searches locally instead, so a failure
  reads as the same message a local search gives.

This module imports only the standard library at module level: the client side runs
in the CLI's fast path.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket

    from cairn.app import Cairn
    from cairn.config import Config

MAX_REQUEST = 65536
"""Largest request line a server reads (bytes)."""
CONNECT_TIMEOUT = 0.5
"""Seconds a client waits to connect before it searches locally."""
ANSWER_TIMEOUT = 60.0
"""Seconds a client waits for an answer (a busy server may be embedding)."""
WORKERS = 2
"""Threads answering the socket (each keeps its SQLite connection)."""
ARGV_HEAD = b"cairn-argv 1 "
"""The first bytes of a thin client's request (:mod:`cairn.interfaces.cli._thin`): then
its length and a newline, then the request, which the server's ``handler`` answers."""
ARGV_PASS = b"cairn-pass 1\n"
"""The answer that leaves a thin client's search to its normal path."""
HUNG = ".hung"
"""Suffix of the marker a client leaves beside a socket whose server did not answer in
time: clients skip that server until it answers again (it then removes the marker)."""
Handler = Callable[["Cairn", bytes], bytes]
"""Answers a thin client's request on the server's index (see :class:`WarmServer`)."""
JOIN_SECONDS = 60.0
"""Seconds an exiting server waits for its warm-up and answering threads. They are
daemon threads, and one still inside onnxruntime when the interpreter finalises aborts
the process (pybind11 takes the GIL back in a ``noexcept`` destructor; the finalising
interpreter ends the thread there: "terminate called without an active exception",
exit -6); a model load or a search ends well within this."""


def has_sockets() -> bool:
    """Whether this platform has Unix domain sockets (otherwise nothing is advertised
    and every CLI search loads its own model)."""
    import socket  # not on a keyword search's path when nothing is advertised

    return hasattr(socket, "AF_UNIX")


def advert_folder(db_path: Path) -> Path:
    """The folder of adverts of the index ``db_path``: ``<index file>.servers``."""
    db = db_path.resolve()
    return db.with_name(db.name + ".servers")


def _plain(value: Any) -> Any:
    """Mappings (also read-only ones), tuples and paths as JSON-ready data."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "__dataclass_fields__"):
        return {f: _plain(getattr(value, f)) for f in value.__dataclass_fields__}
    return str(value)


def settings_hash(config: Config) -> str:
    """A short hash of the settings that change a search's answer: the index file,
    the config file, and the ``[search]``, ``[graph]``, ``[embed]`` (with
    ``CAIRN_EMBED``), ``[fusion]`` and ``[chunking]`` settings."""
    import hashlib  # only once an advert is found: a keyword search hashes nothing else
    data = {
        "db": str(config.db_path.resolve()),
        "config": str(config.config_file.resolve()) if config.config_file else None,
        "search": _plain(config.search),
        "graph": _plain(config.graph),
        "embed": _plain(config.embed),
        "fusion": _plain(config.fusion),
        "chunking": _plain(config.chunking),
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def socket_folder() -> Path:
    """The per-user folder of sockets (made 0700 if missing).

    Raises:
        OSError: it exists but belongs to another user or others may enter it.
    """
    import tempfile  # not on the client's usual path

    uid = os.getuid() if hasattr(os, "getuid") else 0
    folder = Path(tempfile.gettempdir()) / f"cairn-{uid}"
    folder.mkdir(mode=0o700, exist_ok=True)
    st = folder.stat(follow_symlinks=False)
    if st.st_uid != uid or st.st_mode & 0o077 or not folder.is_dir() or folder.is_symlink():
        raise OSError(f"{folder}: not a private folder of this user; no warm-model socket")
    return folder


def file_id(path: Path) -> tuple[int, int] | None:
    """``(device, inode)`` of the file at ``path``, or ``None`` when there is none."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


class WarmServer:
    """The socket a server process answers the CLI's searches on, and its advert.

    Args:
        cairn: the open index whose searches are answered (its model stays loaded).
        kind: ``serve``, ``mcp``, ``watch`` or ``daemon`` (shown in the advert; a
            daemon also answers ``{"op": "stop"}``, see :mod:`cairn.serving.daemon`).
        handler: ``handler(cairn, request) -> answer`` for a request that starts
            with :data:`ARGV_HEAD` (the query daemon's thin clients); ``None``: such a
            request gets a JSON error as any unknown one.

    Use :func:`advertise` rather than this class directly.
    """

    def __init__(self, cairn: Cairn, kind: str, handler: Handler | None = None) -> None:
        self.cairn, self.kind, self.handler = cairn, kind, handler
        import hashlib

        self.index_file = cairn.config.db_path.resolve()
        digest = hashlib.sha256(str(self.index_file).encode()).hexdigest()[:12]
        prefix = "daemon-" if kind == "daemon" else ""
        self.socket_path = socket_folder() / f"{prefix}{digest}-{os.getpid()}.sock"
        self.file_id = file_id(self.index_file)
        """Device and inode of the index file when the server started (see
        :meth:`_same_file`)."""
        self.advert = advert_folder(self.index_file) / f"{os.getpid()}.json"
        self._sock: socket.socket | None = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.last_used = time.monotonic()
        """``time.monotonic()`` of the last answer (a daemon's quiet period counts from it)."""
        self.stop_asked = threading.Event()
        """Set when a client asked this daemon to stop (``{"op": "stop"}``)."""

    def start(self) -> None:
        """Listen, write the advert, and answer in :data:`WORKERS` threads.

        Raises:
            OSError: the socket or the advert cannot be made.
        """
        import socket

        # bound and listening under a name no client tries, then renamed: a client
        # never finds this socket refusing, so a refused socket is always a dead one
        pending = self.socket_path.with_name(f"pending-{self.socket_path.name}")
        with contextlib.suppress(FileNotFoundError):
            pending.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(str(pending))
        finally:
            os.umask(old)
        sock.listen(16)
        os.replace(pending, self.socket_path)
        sock.settimeout(0.5)  # the accept loop looks at the stop flag this often
        self._sock = sock
        self.advert.parent.mkdir(exist_ok=True)
        tmp = self.advert.with_suffix(".tmp")
        tmp.write_text(json.dumps({
            "pid": os.getpid(), "kind": self.kind, "socket": str(self.socket_path),
            "db": str(self.index_file), "settings": settings_hash(self.cairn.config),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }), encoding="utf-8")
        tmp.replace(self.advert)
        for i in range(WORKERS):
            t = threading.Thread(target=self._serve, name=f"cairn-warm-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self) -> None:
        """Stop answering; remove the advert and the socket (idempotent)."""
        self._stop.set()
        for t in self._threads:
            t.join(timeout=JOIN_SECONDS)
        if self._sock is not None:
            self._sock.close()
        for p in (self.advert, self.socket_path, Path(f"{self.socket_path}{HUNG}")):
            with contextlib.suppress(OSError):
                p.unlink()
        with contextlib.suppress(OSError):
            self.advert.parent.rmdir()  # only if no other server is advertised

    def _same_file(self) -> bool:
        """Whether this server may answer for the file now at its index's path: never
        when there is none; a daemon only for the file it opened (it exits on a new
        one), another server also for a new file (its store reconnects to it)."""
        now = file_id(self.index_file)
        return now is not None and (now == self.file_id or self.kind != "daemon")

    def _serve(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                try:
                    conn.settimeout(5)
                    line, rest = _read_line(conn)
                    argv = self.handler is not None and line.startswith(ARGV_HEAD)
                    if not self._same_file():
                        reply = ARGV_PASS if argv else b'{"ok": false, "error": "gone"}\n'
                    elif self.handler is not None and argv:
                        reply = self.handler(self.cairn, _read_rest(conn, line, rest))
                    else:
                        reply = self.answer(line) + b"\n"
                    conn.sendall(reply)
                except (OSError, ValueError):
                    continue
                finally:
                    self.last_used = time.monotonic()
                    with contextlib.suppress(OSError):  # answering again: ask it again
                        os.unlink(f"{self.socket_path}{HUNG}")

    def answer(self, line: bytes) -> bytes:
        """The answer to one request line (see the module docstring); never raises."""
        from cairn.errors import CairnError
        from cairn.model.search_body import search_body
        from cairn.model.search_request import SearchRequest

        try:
            req = json.loads(line.decode("utf-8"))
            if isinstance(req, dict) and req.get("op") == "stop" and self.kind == "daemon":
                self.stop_asked.set()
                return json.dumps({"ok": True, "stopping": os.getpid()}).encode("utf-8")
            if not isinstance(req, dict) or req.get("op") != "search":
                raise CairnError("unknown request: only op=search is answered")
            text = req.get("query")
            if not isinstance(text, str) or not text or len(text) > MAX_REQUEST:
                raise CairnError("query must be a non-empty string")
            request = SearchRequest.from_mapping({k: v for k, v in req.items() if k != "op"})
            res = self.cairn.search(request)
            empty = not res.hits and self.cairn.notes.is_empty()
            result = search_body(request.text, res)
            body: dict[str, Any] = {"ok": True, "result": result, "empty": empty}
        except (CairnError, ValueError, TypeError) as exc:
            body = {"ok": False, "error": str(exc), "type": type(exc).__name__}
        except Exception as exc:  # an answer, not a dead thread; the CLI searches itself
            body = {"ok": False, "error": "internal error", "type": type(exc).__name__}
        return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _read_line(conn: socket.socket) -> tuple[bytes, bytes]:
    """One request line (without its newline) and what was read after it.

    Raises:
        OSError: the peer is too slow, closes early, or sends over :data:`MAX_REQUEST`.
    """
    buf = bytearray()
    while b"\n" not in buf:
        chunk = conn.recv(65536)
        if not chunk:
            break
        buf += chunk
        if len(buf) > MAX_REQUEST + 1:
            raise OSError("request too large")
    line, _, rest = bytes(buf).partition(b"\n")
    return line, rest


def _read_rest(conn: socket.socket, head: bytes, rest: bytes) -> bytes:
    """The body of a thin client's request whose first line is ``head``
    (``cairn-argv 1 <length>``), ``rest`` of it already read.

    Raises:
        ValueError: the length is not a number or over :data:`MAX_REQUEST`.
        OSError: the peer is too slow or closes early.
    """
    size = int(head[len(ARGV_HEAD):])
    if not 0 <= size <= MAX_REQUEST:
        raise ValueError("request too large")
    buf = bytearray(rest)
    while len(buf) < size:
        chunk = conn.recv(min(65536, size - len(buf)))
        if not chunk:
            raise OSError("the client closed early")
        buf += chunk
    return bytes(buf[:size])


@contextlib.contextmanager
def advertise(cairn: Cairn, kind: str, *, warm_up: bool = True,
              handler: Handler | None = None) -> Iterator[WarmServer | None]:
    """Answer the CLI's searches on ``cairn`` for as long as the block runs.

    Args:
        cairn: the server's open index.
        kind: ``serve``, ``mcp``, ``watch`` or ``daemon``.
        warm_up: load the embedding model now, in a background thread (one hybrid
            search), so the first CLI search finds it warm.
        handler: answers thin clients' requests (see :class:`WarmServer`).

    Yields:
        The :class:`WarmServer`, or ``None`` when this platform or folder cannot have
        one (a note goes to standard error; the server itself runs on).
    """
    server: WarmServer | None = None
    if has_sockets():
        try:
            server = WarmServer(cairn, kind, handler)
            server.start()
        except OSError as exc:
            print(f"cairn: no warm-model socket for the CLI: {exc}", file=sys.stderr)
            if server is not None:
                server.stop()
            server = None
    warming: threading.Thread | None = None
    if server is not None and warm_up:
        warming = threading.Thread(target=_warm_up, args=(cairn,), name="cairn-warm-up",
                                   daemon=True)
        warming.start()
    restore = _exit_on_sigterm() if server is not None else None
    try:
        yield server
    finally:
        if warming is not None:  # never left inside onnxruntime at exit (JOIN_SECONDS)
            warming.join(timeout=JOIN_SECONDS)
        if server is not None:
            server.stop()
        if restore is not None:
            restore()


def _exit_on_sigterm() -> Any:
    """Make SIGTERM exit through ``finally`` blocks (uvicorn re-raises the signal it
    caught once it has shut down; with the default handler the process would die
    before removing its advert). Returns the function that restores the old handler,
    or ``None`` when nothing was changed (not the main thread, or a handler is set)."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None

    def leave(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, leave)
    return lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _warm_up(cairn: Cairn) -> None:
    """One hybrid search (loads the model and the vector matrix); errors are ignored:
    the first real search reports them."""
    with contextlib.suppress(Exception):
        cairn.search("warm up", mode="hybrid", limit=1)


def remote_search(config: Config, request: Mapping[str, Any],
                  skip: frozenset[str] = frozenset(), *,
                  daemons: bool = True) -> dict[str, Any] | None:
    """Ask a server advertised for ``config``'s index to answer ``request``.

    Args:
        config: the CLI's configuration (the index and the settings to match).
        request: the search request (see the module docstring; ``op`` is added).
        skip: sockets not to ask (they already failed this process: slow, malformed).
        daemons: ask query daemons too (``False``: only ``serve``, ``mcp``, ``watch``).

    Returns:
        The answer ``{"ok": true, "result", "empty"}``, or ``None`` when no live
        server with the same settings answered (stale adverts are removed on the way).
    """
    folder = advert_folder(config.db_path)
    try:
        adverts = sorted(folder.glob("*.json"))
    except OSError:
        return None
    if not adverts or not has_sockets():
        return None
    settings = settings_hash(config)
    uid = os.getuid() if hasattr(os, "getuid") else None
    line = json.dumps({"op": "search", **request}, ensure_ascii=False).encode() + b"\n"
    for path in adverts:
        try:
            if uid is not None and path.stat().st_uid != uid:
                continue  # someone else's advert: never followed
            ad = json.loads(path.read_text(encoding="utf-8"))
            pid, sock_path = int(ad["pid"]), str(ad["socket"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not alive(pid) or not os.path.exists(sock_path):  # its socket exists before it
            remove_stale(path, sock_path)
            continue
        if ad.get("settings") != settings or sock_path in skip:
            continue
        if (not daemons and ad.get("kind") == "daemon") or os.path.exists(sock_path + HUNG):
            continue
        answer = ask(sock_path, line)
        if answer == "refused":  # nobody listens (a live server listens before advertising)
            remove_stale(path, sock_path)
            continue
        if isinstance(answer, dict) and answer.get("ok") is True:
            return answer
    return None


def remove_stale(advert: Path, sock_path: str) -> None:
    """Remove a dead server's advert (and its socket, when it is in our folder)."""
    with contextlib.suppress(OSError):
        advert.unlink()
    with contextlib.suppress(OSError):
        advert.parent.rmdir()  # only when it is empty now
    with contextlib.suppress(OSError):
        sock = Path(sock_path)
        if sock.parent == socket_folder():
            sock.unlink()


def ask(sock_path: str, line: bytes) -> dict[str, Any] | str | None:
    """Send one request line; the decoded answer, ``"refused"`` when nobody listens,
    ``None`` on any other failure."""
    import socket

    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(CONNECT_TIMEOUT)
        try:
            s.connect(sock_path)
        except (ConnectionRefusedError, FileNotFoundError):
            return "refused"
        s.settimeout(ANSWER_TIMEOUT)
        s.sendall(line)
        buf = bytearray()
        while not buf.endswith(b"\n"):
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            buf += chunk
        data = json.loads(buf.decode("utf-8"))
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None
    finally:
        s.close()
