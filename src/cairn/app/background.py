"""Index runs a server starts while it answers readers: in a child process of its own
at a lower CPU priority (:mod:`cairn.app.index_worker`), so that on a small machine the
requests keep the cores and the interpreter lock.

A door (``POST /v1/index``, the MCP ``index`` tool) calls :meth:`BackgroundIndexMixin.
index_in_background`; the run itself is :meth:`cairn.app.Cairn.index`, unchanged, in the
child, while the server marks it with :meth:`cairn.app.doors.DoorsMixin.indexing`.
A ``Cairn`` built around a given store or embedder (tests, another backend handed in)
cannot be rebuilt in another process: it runs the index on a thread of its own instead.
On Linux a thread has its own nice value (``setpriority(PRIO_PROCESS, thread id)``),
inherited by the threads and worker processes it starts (the parse workers of a large
run); elsewhere the thread keeps the process's priority, since there the call would
lower the whole process.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from cairn.app.parts import Parts

if TYPE_CHECKING:
    from cairn.app.index_worker import IndexWorker
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


class BackgroundIndexMixin(Parts):
    """Index runs for servers, at a lower priority than the requests they answer."""

    _index_worker: IndexWorker | None = None
    _index_runner: IndexRunner | None = None
    _worker_lock = threading.Lock()
    _stopping = False
    own_parts = False
    """Whether this ``Cairn`` opened its store and embedder from its configuration
    (then a child process can open the same ones: :meth:`index_in_background`)."""

    if TYPE_CHECKING:
        def index(self) -> Run: ...

        def indexing(self) -> AbstractContextManager[None]: ...

        def _reload_types(self) -> object: ...

        last_embed: object

    def index_in_background(self, *, nice: int = INDEX_NICE) -> Run:
        """:meth:`index` of every registered root while readers go on (inside
        :meth:`indexing`), ``nice`` steps lower in CPU priority than the process; waits
        for it. The run happens where :meth:`hand_index_to` said, else in the server's
        index process
        (:class:`cairn.app.index_worker.IndexWorker`, started on the first call and
        kept until :meth:`close_index_worker`) when this ``Cairn`` opened its own store
        and embedder, else on a new thread ``cairn-index`` (see
        :func:`lower_thread_priority`). After a run in the child, the note types are
        read again here, as the run read them there.

        Returns:
            The run record, as :meth:`index` returns it.

        Raises:
            Whatever :meth:`index` raises (``IndexBusy``, ``MassDelete``,
            ``StoreError`` …), re-raised in the caller's thread; ``StoreError`` when
            the index process died.
        """
        from cairn.errors import ServerStopping, StoreError

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
            self.last_embed = run.embedding
            return run
        return self._index_on_thread(nice)

    def hand_index_to(self, runner: IndexRunner | None) -> None:
        """From now on, :meth:`index_in_background` asks ``runner`` for its runs (the
        watching child, which holds the writer lock; the process of a multi-process
        server that owns the index runs) instead of starting an index process of its
        own; ``None``: back to that."""
        self._index_runner = runner

    def _worker(self, nice: int) -> IndexWorker:
        with self._worker_lock:
            if self._index_worker is None:
                from cairn.app.index_worker import IndexWorker

                self._index_worker = IndexWorker(self.config, nice=nice)
            return self._index_worker

    def child_problems(self) -> dict[str, str]:
        """What is wrong with the server's child processes right now, by name
        (``{"watcher": "… exited unexpectedly (exit status -9); restarting …"}``);
        empty when they are fine."""
        problem = getattr(self._index_runner, "problem", "")
        return {"watcher": problem} if problem else {}

    def stop_index_runs(self) -> None:
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

    def close_index_worker(self) -> None:
        """Stop the index process, if one was started (idempotent)."""
        with self._worker_lock:
            worker, self._index_worker = self._index_worker, None
        if worker is not None:
            worker.close()

    def _index_on_thread(self, nice: int) -> Run:
        out: dict[str, Any] = {}

        def work() -> None:
            lower_thread_priority(nice)
            try:
                with self.indexing():
                    out["run"] = self.index()
            except BaseException as exc:  # handed to the caller, raised there
                out["error"] = exc

        thread = threading.Thread(target=work, name="cairn-index", daemon=True)
        thread.start()
        thread.join()
        if "error" in out:
            raise out["error"]
        run: Run = out["run"]
        return run
