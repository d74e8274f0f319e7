"""The other server processes of ``cairn serve --workers N``, as processes: N server
processes answer on one listening socket.

One Python process answers its requests one interpreter lock at a time: a hybrid
search's Python work makes the keyword searches behind it wait, however many cores
are idle. With ``--workers N`` the first process (the one ``cairn serve`` started)
binds the socket (:func:`bind`) and starts N − 1 more (:class:`Workers`: children
speaking :mod:`cairn.serving.child`'s protocol, whose module,
:mod:`cairn.interfaces.api.server`, serves the HTTP application) that inherit it; the
kernel hands each new connection to one of them. Each opens its own
:class:`cairn.app.Cairn` on the same index (its own connections, model and vector
matrix).

Only the first process owns index runs: its index child, its watcher (``--watch``),
the warm-model socket and the dream schedule. A ``POST /v1/index`` that reaches another
process is handed to the first over that process's private pipe
(:class:`FirstProcess`; nothing a client sends is unpickled) and answered with the run
record the first process got, so runs never compete for the writer lock. Every process
sees each run's commits through SQLite (WAL) and the store's change token.

``/metrics`` counts every process's requests: the request counters and latency
histograms are kept in a folder of shared files (``prometheus_client``'s multiprocess
mode, :data:`METRICS_DIR`), removed when the server stops. A process that exits closes
its pipe; the first process stops the others by closing theirs (and kills one that has
not stopped :data:`cairn.serving.child.STOP_SECONDS` later).
"""

from __future__ import annotations

import socket
import threading
from contextlib import suppress
from typing import IO, TYPE_CHECKING, Any

from cairn.errors import CairnError, StoreError
from cairn.serving.child import Child, receive, reply, send, unpack

if TYPE_CHECKING:
    from cairn.app import Cairn
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



class Workers:
    """The other server processes of ``serve --workers N`` (see the module doc), and
    the threads that run the index requests they hand over.

    Args:
        cairn: the first process's ``Cairn`` (it owns the index runs).
        module: the other processes' module (it builds and serves the application).
        first: their start-up message (the listening socket's descriptor is passed).
        sock: the listening socket they share.
        count: how many processes to start besides the first.
        metrics_dir: the shared metrics folder.
    """

    def __init__(self, cairn: Cairn, module: str, first: object, sock: socket.socket,
                 count: int) -> None:
        self.cairn = cairn
        self._children: list[Child] = []
        self._threads: list[threading.Thread] = []
        for _ in range(count):
            child = Child(module, first, name="a server process",
                          pass_fds=(sock.fileno(),), relay=False)
            self._children.append(child)
            t = threading.Thread(target=self._answer, args=(child,), daemon=True,
                                 name=f"cairn-worker-{child.pid}")
            t.start()
            self._threads.append(t)

    @property
    def pids(self) -> list[int]:
        """The process ids of the other server processes."""
        return [c.pid for c in self._children]

    def _answer(self, child: Child) -> None:
        """Run the index requests one process hands over, until its pipe closes."""
        assert child.proc.stdin is not None
        while True:
            try:
                request = child.requests()
            except EOFError:
                return

            def work(request: object = request) -> Run:
                if request != "index":
                    raise CairnError(f"unknown request {request!r}")
                return self.cairn.background.run()

            reply(child.proc.stdin, work)

    def close(self) -> None:
        """Stop the other processes: their pipes close and they finish the requests in
        flight; killed after :data:`cairn.serving.child.STOP_SECONDS`."""
        for child in self._children:
            child.close_input()
        for child in self._children:
            child.stop()
        from prometheus_client import multiprocess

        for child in self._children:
            with suppress(Exception):
                multiprocess.mark_process_dead(child.pid)  # type: ignore[no-untyped-call]


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
                answer = receive(self._inp)
            except (OSError, EOFError, ValueError) as exc:
                self._stop.set()
                raise StoreError(f"the server is stopping: no index run ({exc})") from None
        run: Run = unpack(answer)
        return run


def eof_watch(inp: Any, stop: threading.Event) -> None:
    """Set ``stop`` when the first process closes the pipe (between index requests
    nothing else arrives on it; an index reply is read by :class:`FirstProcess`)."""
    import select

    with suppress(OSError, ValueError):
        while not stop.is_set():
            ready, _, _ = select.select([inp], [], [], 0.5)
            if ready and not inp.peek(1):
                break
    stop.set()


