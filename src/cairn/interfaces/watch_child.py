"""``cairn serve --watch`` follows the folders in a child process of its own
(``python -m cairn.interfaces.watch_child``), as ``POST /v1/index`` runs in one
(:mod:`cairn.app.index_worker`): an index batch on a thread of the server would hold
the server's interpreter lock while requests wait for it, whatever its CPU priority.

The child opens its own :class:`cairn.app.Cairn` from the server's configuration (the
same index, the same settings), lowers its CPU priority (``os.nice``), and runs
:func:`cairn.interfaces.watch.watch` until its standard input ends: the server closes
it to stop the child (after the batch in progress), and a server that dies closes it
too. The configuration travels as one framed pickle on that private pipe
(:func:`cairn.app.index_worker.start_child`); nothing a client sends is ever unpickled.
Readers in the server see each batch's commit through SQLite (WAL) and the store's
change token. The child reports on standard error, which it shares with the server:
``cairn: watching …`` once the index is current, one line per batch that failed, and
``cairn: watching stopped: …`` when it ends on an error.

The watcher holds the index's writer lock for as long as it runs, so the server hands
its own index runs (``POST /v1/index``, the MCP ``index`` tool) to the child
(:meth:`WatchChild.index`): the request (``"index"``, framed on the same pipe) is run
between two batches, as a full :meth:`cairn.app.Cairn.index`, and its run record (or
error) comes back on the child's standard output. A request sent during the
watcher's first catch-up run waits for it to end.
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from cairn.app.index_worker import (
    answer,
    channel,
    prepare_child,
    receive,
    send,
    start_child,
)
from cairn.errors import CairnError, StoreError

if TYPE_CHECKING:
    from cairn.config import Config
    from cairn.model import Run

READY = "cairn: watching the registered folders for changes"
"""The line the child prints on standard error once the index is current."""


class WatchChild:
    """The child process that follows a server's folders (see the module doc).

    Args:
        config: the server's configuration.
        nice: how many steps lower the child's CPU priority is (0–19).
    """

    def __init__(self, config: Config, *, nice: int) -> None:
        self._proc = start_child("cairn.interfaces.watch_child", (config, nice))
        self._lock = threading.Lock()  # one index request at a time

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._proc.pid

    def index(self) -> Run:
        """A full index run of every registered root, in the watching child, between
        two of its batches (it holds the writer lock); waits for it.

        Returns:
            The run record, as :meth:`cairn.app.Cairn.index` returns it.

        Raises:
            Whatever the run raised (``MassDelete``, ``StoreError`` …), or
            :class:`StoreError` when the watcher has stopped (its error was reported
            on standard error).
        """
        proc = self._proc
        with self._lock:
            try:
                assert proc.stdin is not None and proc.stdout is not None
                send(proc.stdin, "index")
                kind, value = receive(proc.stdout)
            except (OSError, EOFError, ValueError) as exc:
                raise StoreError(
                    f"the watching process has stopped (exit status {proc.poll()}): no "
                    f"index run ({exc})"
                ) from None
        if kind == "error":
            raise value
        run: Run = value
        return run

    def close(self, timeout: float = 30.0) -> None:
        """Stop the child (idempotent): its input closes and it exits after the batch
        it may be in; killed after ``timeout`` seconds (the batch's open transaction
        rolls back)."""
        proc = self._proc
        if proc.stdin is not None:
            with suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        if proc.stdout is not None:
            with suppress(OSError):
                proc.stdout.close()


def main() -> int:
    """The child: read ``(config, nice)``, then watch until the input ends, running the
    ``"index"`` requests that arrive meanwhile between batches (each answered
    ``("ok", run)`` or ``("error", exception)`` on the channel).

    Returns:
        0 when stopped by the server, 2 when the watch ended on an error (reported on
        standard error).
    """
    out = channel()
    inp = sys.stdin.buffer
    try:
        config, nice = receive(inp)
    except EOFError:
        return 0
    prepare_child(nice)
    stop = threading.Event()
    requests: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def read_requests() -> None:
        with suppress(OSError, ValueError, EOFError):
            while True:
                requests.put(receive(inp))
        stop.set()

    threading.Thread(target=read_requests, name="cairn-watch-requests", daemon=True).start()
    from cairn.app import Cairn
    from cairn.interfaces import watch as watcher

    def say(line: str) -> None:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def on_batch(batch: watcher.WatchBatch) -> None:
        if batch.error:
            say(f"cairn: watch batch not indexed: {batch.error}")
        elif batch.run is not None:
            for f in batch.run.failures:
                where = f"{f.path}:{f.line}" if f.line else f.path
                say(f"cairn: watch: failed {where}: {f.reason}")

    def between(cairn: Cairn) -> None:
        """The index requests that came in, run now (the writer lock is held)."""
        while True:
            try:
                request = requests.get_nowait()
            except queue.Empty:
                return
            answer(out, request, cairn)

    try:
        with Cairn(config) as cairn:
            watcher.watch(cairn, stop=stop, on_batch=on_batch,
                          on_ready=lambda _run: say(READY),
                          between=lambda: between(cairn))
    except CairnError as exc:
        say(f"cairn: watching stopped: {exc}")
        return 2
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group
        return 0
    return 0


if __name__ == "__main__":  # the module's own names, not __main__'s, go into pickles
    from cairn.interfaces.watch_child import main as _main

    sys.exit(_main())
