"""Index runs a server starts while it answers readers: in a child process of its own
at a lower CPU priority once the server attached one (:meth:`BackgroundIndex.use_worker`,
:func:`cairn.serving.index_worker.attach`), so that on a small machine the requests keep
the cores and the interpreter lock.

A door (``POST /v1/index``, the MCP ``index`` tool) calls :meth:`BackgroundIndex.run`;
the run itself is :meth:`cairn.ingest.service.IndexService.index`, unchanged, in the
child, while the server marks it with :meth:`BackgroundIndex.indexing`.
Without a child (a ``Cairn`` no server attached one to, or one built around a given
store or embedder, which cannot be rebuilt in another process) the index runs on a
thread of its own instead.
On Linux a thread has its own nice value (``setpriority(PRIO_PROCESS, thread id)``),
inherited by the threads and worker processes it starts (the parse workers of a large
run); elsewhere the thread keeps the process's priority, since there the call would
lower the whole process.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, Protocol

from cairn.errors import ServerStopping, StoreError
from cairn.model import Run

INDEX_NICE = 10
"""How much lower (in nice steps, 0–19) a server's index run is scheduled."""


def lower_thread_priority(steps: int) -> bool:
    """Lower the calling thread's CPU priority by ``steps`` nice steps (Linux only;
    a lower priority cannot be raised again without privileges).

    Returns:
        Whether the priority was changed (``False`` elsewhere, for ``steps`` <= 0,
        or when the system refused).
    """
    if steps <= 0 or not sys.platform.startswith("linux"):
        return False
    tid = threading.get_native_id()
    try:
        now = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, now + steps))
    except OSError:
        return False
    return True


class Worker(Protocol):
    """A child process that runs index runs (:class:`cairn.serving.index_worker.IndexWorker`)."""

    def index(self) -> Run:
        """One index run of every registered root, in the child."""
        ...

    def kill(self) -> None:
        """Stop the child now (a run in progress rolls back)."""
        ...

    def close(self) -> None:
        """Stop the child after the run it may be in (idempotent)."""
        ...


class IndexRunner(Protocol):
    """Who runs a server's index runs when it is not this process's index child: the
    watching child of ``serve --watch`` (it holds the writer lock), or the first
    process of ``serve --workers N`` (one owner of the index runs)."""

    def index(self) -> Run:
        """One index run of every registered root; waits for it and returns its record.

        Raises:
            Whatever the run raised (``MassDelete``, ``StoreError`` …).
        """
        ...


class BackgroundIndex:
    """Index runs for servers, at a lower priority than the requests they answer.

    Args:
        index: one full index run in this process (:meth:`IndexService.index
            <cairn.ingest.service.IndexService.index>`).
        start_worker: starts the index child process with a nice value; ``None``
            (until :meth:`use_worker` gives one): runs go on a thread.
        reload_types: reads the note types again (after a run in the child).
    """

    _running: ClassVar[int] = 0
    """How many :meth:`indexing` blocks are open in this process (graph reads then skip
    refreshing; every index of the process counts, as a reader cannot tell)."""

    def __init__(
        self,
        index: Callable[[], Run],
        *,
        start_worker: Callable[[int], Worker] | None = None,
        reload_types: Callable[[], object],
    ) -> None:
        self._index = index
        self._start_worker = start_worker
        self._reload_types = reload_types
        self._worker_lock = threading.Lock()
        self._index_worker: Worker | None = None
        self._index_runner: IndexRunner | None = None
        self._stopping = False

    @property
    def own_parts(self) -> bool:
        """Whether runs go to a child process (else to a thread of this one)."""
        return self._start_worker is not None

    def use_worker(self, start_worker: Callable[[int], Worker]) -> None:
        """From now on, runs go to the index child ``start_worker(nice)`` starts (on
        the first run; kept until :meth:`close`)."""
        with self._worker_lock:
            self._start_worker = start_worker

    @classmethod
    def busy(cls) -> bool:
        """Whether an index run a door started is writing (see :meth:`indexing`)."""
        return bool(cls._running)

    @contextmanager
    def indexing(self) -> Iterator[None]:
        """Mark an index run the doors start while readers go on: reads of the graph
        do not refresh it meanwhile (they would race the run for the write lock); they
        see the graph as it was, and the run updates it when it ends."""
        BackgroundIndex._running += 1
        try:
            yield
        finally:
            BackgroundIndex._running -= 1

    def run(self, *, nice: int = INDEX_NICE) -> Run:
        """An index run of every registered root while readers go on (inside
        :meth:`indexing`), ``nice`` steps lower in CPU priority than the process; waits
        for it. The run happens where :meth:`hand_index_to` said, else in the server's
        index process (started on the first call and kept until :meth:`close`) when
        ``start_worker`` was given, else on a new thread ``cairn-index`` (see
        :func:`lower_thread_priority`). After a run in the child, the note types are
        read again here, as the run read them there.

        Returns:
            The run record (with its graph and embedding steps).

        Raises:
            Whatever the run raises (``IndexBusy``, ``MassDelete``, ``StoreError`` …),
            re-raised in the caller's thread; ``StoreError`` when the index process
            died; :class:`ServerStopping` once :meth:`stop` was called.
        """
        if self._stopping:
            raise ServerStopping("server shutting down")
        runner = self._index_runner
        if runner is not None or self.own_parts:
            worker = runner if runner is not None else self._worker(nice)
            try:
                with self.indexing():
                    run = worker.index()
            except StoreError as exc:
                if self._stopping:  # the child was stopped with the server
                    raise ServerStopping("server shutting down") from exc
                raise
            self._reload_types()  # a types.yaml may have changed: the child read it
            return run
        return self._on_thread(nice)

    def hand_index_to(self, runner: IndexRunner | None) -> None:
        """From now on, :meth:`run` asks ``runner`` for its runs (the watching child,
        which holds the writer lock; the process of a multi-process server that owns
        the index runs) instead of starting an index process of its own; ``None``:
        back to that."""
        self._index_runner = runner

    def _worker(self, nice: int) -> Worker:
        with self._worker_lock:
            if self._index_worker is None:
                assert self._start_worker is not None
                self._index_worker = self._start_worker(nice)
            return self._index_worker

    def child_problems(self) -> dict[str, str]:
        """What is wrong with the server's child processes right now, by name
        (``{"watcher": "… exited unexpectedly (exit status -9); restarting …"}``);
        empty when they are fine."""
        problem = getattr(self._index_runner, "problem", "")
        return {"watcher": problem} if problem else {}

    def stop(self) -> None:
        """The server is stopping: no index run starts from now on, and the one in
        progress is stopped (its child process is killed: the run's transaction rolls
        back); its caller gets :class:`cairn.errors.ServerStopping`."""
        self._stopping = True
        kill = getattr(self._index_runner, "kill", None)
        if kill is not None:
            kill()
        with self._worker_lock:
            worker = self._index_worker
        if worker is not None:
            worker.kill()

    def close(self) -> None:
        """Stop the index process, if one was started (idempotent)."""
        with self._worker_lock:
            worker, self._index_worker = self._index_worker, None
        if worker is not None:
            worker.close()

    def _on_thread(self, nice: int) -> Run:
        out: dict[str, Any] = {}

        def work() -> None:
            lower_thread_priority(nice)
            try:
                with self.indexing():
                    out["run"] = self._index()
            except BaseException as exc:  # handed to the caller, raised there
                out["error"] = exc

        thread = threading.Thread(target=work, name="cairn-index", daemon=True)
        thread.start()
        thread.join()
        if "error" in out:
            raise out["error"]
        run: Run = out["run"]
        return run
