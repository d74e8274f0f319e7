"""``cairn serve --watch`` follows the folders in a child process of its own
(``python -m cairn.serving.watch_child``), as ``POST /v1/index`` runs in one
(:mod:`cairn.serving.index_worker`): an index batch on a thread of the server would hold
the server's interpreter lock while requests wait for it, whatever its CPU priority.

The child opens its own :class:`cairn.app.Cairn` from the server's configuration (the
same index, the same settings), lowers its CPU priority (``os.nice``), and runs
:func:`cairn.serving.watch.watch` until its standard input ends: the server closes
it to stop the child (after the batch in progress), and a server that dies closes it
too (a child whose batch does not end within :data:`ORPHAN_GRACE` seconds then exits
anyway). A child that exits unasked is restarted by :class:`WatchChild`'s supervisor.
It speaks :mod:`cairn.serving.child`'s protocol (start-up message ``(config, nice)``,
requests ``"index"``); nothing a client sends is ever unpickled.
Readers in the server see each batch's commit through SQLite (WAL) and the store's
change token. The child reports on standard error, which the server relays to its own:
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

import os
import queue
import subprocess
import sys
import threading
import time
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from cairn.errors import CairnError, ChildUnavailable
from cairn.serving.child import Child, prepare_child, receive, start_in_child
from cairn.serving.index_worker import answer

if TYPE_CHECKING:
    from cairn.config import Config
    from cairn.model import Run

READY = "cairn: watching the registered folders for changes"
"""The line the child prints on standard error once the index is current."""


RESTART_SECONDS = (1.0, 2.0, 5.0, 10.0, 30.0)
"""How long the server waits before starting a watcher that died again (the n-th
restart in a row waits the n-th figure, the last one after that)."""
HEALTHY_SECONDS = 5.0
"""A restarted watcher counts as running again once it has lived this long."""
STEADY_SECONDS = 60.0
"""A watcher that ran this long before it died is restarted after the first delay."""
ORPHAN_GRACE = 20.0
"""Seconds a child whose server is gone has to finish its batch before it exits."""


MODULE = "cairn.serving.watch_child"
NAME = "the watching process"


def _say(line: str) -> None:
    """A line on standard error; a server gone (a closed pipe) is not an error here."""
    with suppress(OSError, ValueError):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


class WatchChild:
    """The child process that follows a server's folders (see the module doc), and
    the thread that supervises it: a child that exits unless :meth:`close` stopped it
    is reported on standard error and started again (after :data:`RESTART_SECONDS`);
    :attr:`problem` says so meanwhile.

    Args:
        config: the server's configuration.
        nice: how many steps lower the child's CPU priority is (0–19).
    """

    def __init__(self, config: Config, *, nice: int) -> None:
        self._first = (config, nice)
        self._lock = threading.Lock()  # one index request at a time
        self._state = threading.Lock()  # a restart against close()
        self._closing = threading.Event()
        self._child = Child(MODULE, self._first, name=NAME)
        self.problem = ""
        """Why the watcher is not running right now (``""``: it is)."""
        self.restarts = 0
        """How many times the child was started again after it died."""
        self._supervisor = threading.Thread(target=self._supervise, daemon=True,
                                            name="cairn-watch-supervisor")
        self._supervisor.start()

    @property
    def pid(self) -> int:
        """The current child's process id."""
        return self._child.pid

    def _supervise(self) -> None:
        """Wait for the child; start it again when it exits unasked (with backoff).
        :attr:`problem` stays set until a restarted child has lived
        :data:`HEALTHY_SECONDS`."""
        in_a_row = 0
        while True:
            child = self._child
            started = time.monotonic()
            try:
                code = child.proc.wait(timeout=HEALTHY_SECONDS if self.problem else None)
            except subprocess.TimeoutExpired:
                self.problem = ""
                code = child.proc.wait()
            if self._closing.is_set():
                return
            in_a_row = 0 if time.monotonic() - started > STEADY_SECONDS else in_a_row
            delay = RESTART_SECONDS[min(in_a_row, len(RESTART_SECONDS) - 1)]
            in_a_row += 1
            said = child.tail()
            self.problem = (f"the watching process exited unexpectedly (exit status "
                            f"{code}); restarting it in {delay:g} s"
                            + (f"; it said: {said}" if said else ""))
            _say(f"cairn: {self.problem}")
            if self._closing.wait(delay):
                return
            with self._state:
                if self._closing.is_set():
                    return
                try:
                    self._child = Child(MODULE, self._first, name=NAME)
                except OSError as exc:
                    self.problem = f"the watching process cannot be started: {exc}"
                    _say(f"cairn: {self.problem}")
                    continue
            child.close_pipes()
            self.restarts += 1
            self.problem = (f"the watching process was restarted after it exited "
                            f"(exit status {code}); catching up")

    def index(self) -> Run:
        """A full index run of every registered root, in the watching child, between
        two of its batches (it holds the writer lock); waits for it.

        Returns:
            The run record, as :meth:`cairn.app.Cairn.index` returns it.

        Raises:
            Whatever the run raised (``MassDelete``, ``StoreError`` …), or
            :class:`ChildUnavailable` when the watcher is not running (restarting,
            stopped) or died during the run, naming why.
        """
        with self._lock:
            child = self._child
            code = child.poll()
            if code is not None or self._closing.is_set():
                raise ChildUnavailable(
                    "the watching process is stopping: no index run" if self._closing.is_set()
                    else f"the watching process exited (exit status {code}); it is "
                    "restarted: try again shortly")
            run: Run = child.call("index", doing="during the index run (it is restarted)")
        return run

    def kill(self) -> None:
        """The server is stopping: a child running an index request is killed (the
        run rolls back, the request is answered at once); otherwise its input closes
        and it stops after its batch. The supervisor does not start it again."""
        self._closing.set()
        with self._state:
            child = self._child
            if self._lock.locked():
                child.kill()
            else:
                child.close_input()

    def close(self, timeout: float = 30.0) -> None:
        """Stop the child (idempotent): its input closes and it exits after the batch
        it may be in; killed after ``timeout`` seconds (the batch's open transaction
        rolls back)."""
        self._closing.set()
        with self._state:
            child = self._child
        child.stop(timeout)
        self._supervisor.join(timeout=10)


def main() -> int:
    """The child: read ``(config, nice)``, then watch until the input ends, running the
    ``"index"`` requests that arrive meanwhile between batches (each answered
    ``("ok", run)`` or ``("error", exception)`` on the channel).

    Returns:
        0 when stopped by the server, 2 when the watch ended on an error (reported on
        standard error).
    """
    started = start_in_child()
    if started is None:
        return 0
    out, inp, (config, nice) = started
    prepare_child(nice)
    stop = threading.Event()
    requests: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def read_requests() -> None:
        with suppress(OSError, ValueError, EOFError):
            while True:
                requests.put(receive(inp))
        stop.set()  # the server closed the pipe, or died: stop after this batch
        time.sleep(ORPHAN_GRACE)
        _say("cairn: watching stopped: the server is gone and the batch did not end")
        os._exit(3)  # the open transaction rolls back; the writer lock goes with us

    threading.Thread(target=read_requests, name="cairn-watch-requests", daemon=True).start()
    from cairn.app import Cairn
    from cairn.serving import watch as watcher

    say = _say

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
    from cairn.serving.watch_child import main as _main

    code = _main()
    # the request reader may still be blocked reading standard input (the watch ended on
    # an error): an interpreter shutdown would abort on that stream's lock (exit -6)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
