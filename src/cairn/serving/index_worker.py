"""A server's index runs in a child process of its own (``python -m
cairn.serving.index_worker``), so that the run never holds the server's GIL while
requests wait for it.

On a small machine an index run on a thread of the server made every request wait: the
run's Python work (parsing, link resolution, the graph step, SQLite row building) and
the readers' share one interpreter lock, whatever the thread's CPU priority says. In a
process of its own, at a lower CPU priority (``os.nice``), the run takes only the CPU
the requests leave; readers see its commits through SQLite (WAL) and reload only what
changed (the dense matrix is patched, the graph and the waiting count follow the
store's change token).

A server hands its ``Cairn``'s background runs to this child with :func:`attach`. The
child lives as long as its server (it keeps the embedding model loaded between runs):
:class:`IndexWorker` starts it on the first run and stops it on ``close``; a child whose
parent went away sees the end of its input and exits. It speaks
:mod:`cairn.serving.child`'s protocol: start-up message ``(config, nice)``, requests
``"index"``.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any

from cairn.app.serving import INDEX_NICE
from cairn.errors import ChildUnavailable, StoreError
from cairn.serving.child import Child, prepare_child, receive, reply, start_in_child

if TYPE_CHECKING:
    from cairn.app import Cairn
    from cairn.config import Config
    from cairn.model import Run

__all__ = ["INDEX_NICE", "IndexWorker", "attach", "serve_requests"]

MODULE = "cairn.serving.index_worker"


def attach(cairn: Cairn) -> None:
    """From now on ``cairn``'s background index runs (:meth:`BackgroundIndex.run
    <cairn.ingest.background.BackgroundIndex.run>`: ``POST /v1/index``, the MCP
    ``index`` tool) go to an :class:`IndexWorker` child, started on the first run and
    stopped by ``cairn.close()``. A ``Cairn`` built around a given store or embedder
    (``own_parts`` false) cannot be opened again in another process: its runs stay on
    a thread."""
    if cairn.own_parts:
        cairn.background.use_worker(lambda nice: IndexWorker(cairn.config, nice=nice))


class IndexWorker:
    """The child process that runs a server's index runs (see the module doc).

    Args:
        config: the server's configuration (the child opens its own
            :class:`cairn.app.Cairn` from it: the same index, the same settings).
        nice: how many steps lower the child's CPU priority is (0–19).
    """

    def __init__(self, config: Config, *, nice: int) -> None:
        self.config, self.nice = config, nice
        self._child: Child | None = None
        self._lock = threading.Lock()  # one run at a time
        self._state = threading.Lock()  # the child's start against close()
        self._closed = False

    @property
    def _proc(self) -> Any:
        """The current child's ``Popen`` (``None`` before the first run)."""
        return None if self._child is None else self._child.proc

    def _start(self) -> Child:
        child = self._child
        if child is not None and child.poll() is None:
            return child
        if child is not None:  # it died between runs: a new one
            child.close_pipes()
        with self._state:
            if self._closed:
                raise StoreError("the server is closing: no more index runs")
            child = Child(MODULE, (self.config, self.nice), name="the index process")
            self._child = child
        return child

    def index(self) -> Run:
        """One :meth:`cairn.app.Cairn.index` of every registered root, in the child;
        waits for it (one run at a time).

        Returns:
            The run record.

        Raises:
            Whatever the run raised in the child (``IndexBusy``, ``MassDelete``,
            ``StoreError`` …; as a :class:`CairnError` with its message when the
            exception cannot travel), or :class:`ChildUnavailable` when the child
            died (naming its exit status and the tail of its standard error).
        """
        with self._lock:
            run: Run = self._run_once(retry=True)
        return run

    def _run_once(self, *, retry: bool) -> Any:
        # A child kept from an earlier run may have died since (killed, out of
        # memory) without the death being visible yet: its run is tried once more
        # in a new child. A child started for this run that dies is reported.
        reused = self._child is not None and self._child.poll() is None
        try:
            child = self._start()
        except OSError as exc:
            raise ChildUnavailable(f"the index process cannot be started: {exc}") from None
        try:
            return child.call("index", doing="during the index run")
        except ChildUnavailable:
            if self._child is child:
                self._child = None
            if retry and reused and not self._closed:
                return self._run_once(retry=False)
            raise

    def kill(self) -> None:
        """Stop the child now (the server is stopping): a run in progress rolls back
        and its caller gets :class:`StoreError`; no child is started again."""
        with self._state:
            self._closed = True
            child = self._child
        if child is not None:
            child.kill()

    def close(self) -> None:
        """Stop the child (idempotent): its input closes and it exits (after the run
        it may be in; killed after :data:`cairn.serving.child.STOP_SECONDS`: the run's
        open transaction rolls back). Does not wait for a run in progress to be handed
        back (its caller gets :class:`StoreError`)."""
        with self._state:
            self._closed = True
            child, self._child = self._child, None
        if child is not None:
            child.stop()


def serve_requests(inp: Any, out: Any, cairn: Cairn) -> int:
    """Answer ``"index"`` requests on the channel until the input ends (0)."""
    while True:
        try:
            request = receive(inp)
        except EOFError:
            return 0
        answer(out, request, cairn)


def answer(out: Any, request: object, cairn: Cairn) -> None:
    """Run one request from the parent process and send its answer on ``out``: for
    ``"index"``, ``("ok", run)`` or ``("error", exception)``; anything else is
    answered ``("error", CairnError)``."""
    from cairn.errors import CairnError

    def work() -> Run:
        if request != "index":
            raise CairnError(f"unknown request {request!r}")
        return cairn.index()

    reply(out, work)


def main() -> int:
    """The child: read ``(config, nice)``, then answer ``"index"`` requests until the
    input ends. Each answer is ``("ok", run)`` or ``("error", exception)``."""
    started = start_in_child()
    if started is None:
        return 0
    out, inp, (config, nice) = started
    prepare_child(nice)
    from cairn.app import Cairn

    with Cairn(config) as cairn:
        return serve_requests(inp, out, cairn)


if __name__ == "__main__":  # the module's own names, not __main__'s, go into pickles
    from cairn.serving.index_worker import main as _main

    sys.exit(_main())
