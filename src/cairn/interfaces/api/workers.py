"""``cairn serve --workers N``: N server processes answer on one listening socket.

One Python process answers its requests one interpreter lock at a time: a hybrid
search's Python work makes the keyword searches behind it wait, however many cores
are idle. With ``--workers N`` the first process (the one ``cairn serve`` started)
binds the socket and starts N − 1 more (``python -m cairn.interfaces.api.workers``)
that inherit it; the kernel hands each new connection to one of them. Each opens its
own :class:`cairn.app.Cairn` on the same index (its own connections, model and vector
matrix) and serves the same application (:func:`cairn.interfaces.api.app.create_app`).

Only the first process owns index runs: its index child, its watcher (``--watch``),
the warm-model socket and the dream schedule. A ``POST /v1/index`` that reaches another
process is handed to the first over that process's private pipe (a framed pickle,
:mod:`cairn.app.index_worker`; nothing a client sends is unpickled) and answered with
the run record the first process got, so runs never compete for the writer lock. Every
process sees each run's commits through SQLite (WAL) and the store's change token.

``/metrics`` counts every process's requests: the request counters and latency
histograms are kept in a folder of shared files (``prometheus_client``'s multiprocess
mode, :class:`cairn.interfaces.api.observe.Metrics`), removed when the server stops.
A process that exits closes its pipe; the first process stops the others by closing
theirs (and kills one that has not stopped 10 s later).
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from contextlib import suppress
from typing import IO, TYPE_CHECKING, Any

from cairn.app.index_worker import channel, portable, receive, send, start_child
from cairn.errors import CairnError, StoreError

if TYPE_CHECKING:
    import subprocess

    from cairn.app import Cairn
    from cairn.config import Config
    from cairn.interfaces.api.security import Policy
    from cairn.model import Run

METRICS_DIR = "PROMETHEUS_MULTIPROC_DIR"
"""The environment variable naming the shared metrics folder (prometheus_client's)."""


def bind(host: str, port: int) -> socket.socket:
    """The listening socket of a multi-process server (inheritable, ``SO_REUSEADDR``).

    Raises:
        OSError: the address cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def serve(cairn: Cairn, policy: Policy, *, host: str, port: int, workers: int = 1) -> None:
    """Serve the API on ``host:port`` with uvicorn until interrupted (blocks).

    Args:
        workers: server processes answering on the one socket (``> 1``: this one and
            ``workers - 1`` more, see the module doc; this one keeps the index
            runs).

    Raises:
        OSError: the address cannot be bound.
    """
    import uvicorn

    from cairn.interfaces.api.app import create_app
    from cairn.interfaces.api.limits import server_options
    from cairn.interfaces.api.observe import setup_logging

    setup_logging()
    options: dict[str, Any] = server_options()
    if workers <= 1:
        stopping(uvicorn.Config(create_app(cairn, policy), host=host, port=port, **options),
                 cairn).run()
        return
    import shutil
    import tempfile

    shared = tempfile.mkdtemp(prefix="cairn-metrics-")
    os.environ[METRICS_DIR] = shared  # before the first metric is made
    sock = bind(host, port)
    others: Workers | None = None
    try:
        app = create_app(cairn, policy)
        others = Workers(cairn, policy, sock, workers - 1, shared)
        stopping(uvicorn.Config(app, **options), cairn).run(sockets=[sock])
    finally:
        if others is not None:
            others.close()
        sock.close()
        os.environ.pop(METRICS_DIR, None)
        shutil.rmtree(shared, ignore_errors=True)


def stopping(config: Any, cairn: Cairn) -> Any:
    """A ``uvicorn.Server`` for ``config`` that, on SIGTERM or the first Ctrl-C, also
    stops ``cairn``'s index runs (:meth:`cairn.app.Cairn.stop_index_runs`: the child
    running one is killed and its request answered 503 "server shutting down"), so
    that the server stops within seconds instead of waiting for the run."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            first = not self.should_exit
            super().handle_exit(sig, frame)
            if first:  # a signal handler must not wait: the children stop on a thread
                threading.Thread(target=cairn.background.stop, daemon=True,
                                 name="cairn-stop-index").start()

    return Server(config)


class Workers:
    """The other server processes of ``serve --workers N`` (see the module doc), and
    the threads that run the index requests they hand over.

    Args:
        cairn: the first process's ``Cairn`` (it owns the index runs).
        policy: the checks every process applies.
        sock: the listening socket they share.
        count: how many processes to start besides the first.
        metrics_dir: the shared metrics folder.
    """

    def __init__(self, cairn: Cairn, policy: Policy, sock: socket.socket, count: int,
                 metrics_dir: str) -> None:
        self.cairn = cairn
        self._procs: list[subprocess.Popen[bytes]] = []
        self._threads: list[threading.Thread] = []
        for _ in range(count):
            proc = start_child("cairn.interfaces.api.workers",
                               (cairn.config, policy, sock.fileno(), metrics_dir),
                               pass_fds=(sock.fileno(),))
            self._procs.append(proc)
            t = threading.Thread(target=self._answer, args=(proc,), daemon=True,
                                 name=f"cairn-worker-{proc.pid}")
            t.start()
            self._threads.append(t)

    @property
    def pids(self) -> list[int]:
        """The process ids of the other server processes."""
        return [p.pid for p in self._procs]

    def _answer(self, proc: subprocess.Popen[bytes]) -> None:
        """Run the index requests one process hands over, until its pipe closes."""
        assert proc.stdin is not None and proc.stdout is not None
        while True:
            try:
                request = receive(proc.stdout)
            except (OSError, EOFError, ValueError):
                return
            if request != "index":
                reply: tuple[str, object] = (
                    "error", CairnError(f"unknown request {request!r}"))
            else:
                try:
                    reply = ("ok", self.cairn.background.run())
                except Exception as exc:  # handed to the asking process, raised there
                    reply = ("error", portable(exc))
            try:
                send(proc.stdin, reply)
            except (OSError, ValueError):
                return

    def close(self) -> None:
        """Stop the other processes: their pipes close and they finish the requests in
        flight; killed after 10 s."""
        for proc in self._procs:
            if proc.stdin is not None:
                with suppress(OSError):
                    proc.stdin.close()
        for proc in self._procs:
            try:
                proc.wait(timeout=10)
            except Exception:
                proc.kill()
                proc.wait(timeout=10)
            if proc.stdout is not None:
                with suppress(OSError):
                    proc.stdout.close()
        from prometheus_client import multiprocess

        for proc in self._procs:
            with suppress(Exception):
                multiprocess.mark_process_dead(proc.pid)  # type: ignore[no-untyped-call]


class FirstProcess:
    """What another server process asks of the first: its index runs
    (:class:`cairn.ingest.background.IndexRunner`), over the private pipe."""

    def __init__(self, inp: IO[bytes], out: IO[bytes], stop: threading.Event) -> None:
        self._inp, self._out, self._stop = inp, out, stop
        self._lock = threading.Lock()

    def index(self) -> Run:
        """One index run, in the first process; waits for it.

        Raises:
            Whatever the run raised there, or :class:`StoreError` when the first
            process is gone (the server is stopping).
        """
        with self._lock:
            try:
                send(self._out, "index")
                kind, value = receive(self._inp)
            except (OSError, EOFError, ValueError) as exc:
                self._stop.set()
                raise StoreError(f"the server is stopping: no index run ({exc})") from None
        if kind == "error":
            raise value
        run: Run = value
        return run


def main() -> int:
    """Another server process: read ``(config, policy, socket fd, metrics folder)``,
    then serve the API on the inherited socket until the pipe closes."""
    out = channel()
    inp = sys.stdin.buffer
    try:
        config, policy, fd, metrics_dir = receive(inp)
    except EOFError:
        return 0
    config_: Config = config
    os.environ[METRICS_DIR] = metrics_dir
    sock = socket.socket(fileno=fd)
    from cairn.app.serving import serve_mode

    serve_mode()  # before numpy loads: one BLAS thread; background reloads
    import uvicorn

    from cairn.app import Cairn
    from cairn.interfaces.api.app import create_app
    from cairn.interfaces.api.limits import server_options
    from cairn.interfaces.api.observe import setup_logging

    setup_logging()
    stop = threading.Event()
    with Cairn(config_) as cairn:
        cairn.background.hand_index_to(FirstProcess(inp, out, stop))
        with suppress(CairnError):  # warm: the model and the matrix, before any request
            cairn.search("warm up", mode="hybrid", limit=1)
        server = uvicorn.Server(uvicorn.Config(create_app(cairn, policy), **server_options()))

        def watch_parent() -> None:  # the pipe closes: the first process stops us
            with suppress(OSError, ValueError):
                stop.wait()
            server.should_exit = True

        threading.Thread(target=watch_parent, daemon=True).start()
        threading.Thread(target=_eof_watch, args=(inp, stop), daemon=True).start()
        server.run(sockets=[sock])
    return 0


def _eof_watch(inp: Any, stop: threading.Event) -> None:
    """Set ``stop`` when the first process closes the pipe (between index requests
    nothing else arrives on it; an index reply is read by :class:`FirstProcess`)."""
    import select

    with suppress(OSError, ValueError):
        while not stop.is_set():
            ready, _, _ = select.select([inp], [], [], 0.5)
            if ready and not inp.peek(1):
                break
    stop.set()


if __name__ == "__main__":  # the module's own names, not __main__'s, go into pickles
    from cairn.interfaces.api.workers import main as _main

    sys.exit(_main())
