"""Noticing a parse worker that never answers (hung in native code, or stopped): the
clock :meth:`cairn.ingest.prepare.Preparer.map` waits on, and bounded waits for worker
processes to exit. A worker's own alarm (``[index] file_seconds``) stops a slow parse in
Python; only the parent can notice a worker that does not run at all."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import Executor, Future
from concurrent.futures import wait as futures_wait
from typing import Any

STUCK_GRACE = 10.0
"""Seconds a worker may stay silent past a file's ``[index] file_seconds`` (when its
alarm stops a slow parse) before it counts as stuck, is killed and replaced, and the
file is reported as failed: only a worker hung in native code or stopped stays silent
that long."""

START_GRACE = 60.0
"""Extra seconds allowed before a new pool's first answer (its workers are starting)."""


def deadline(file_seconds: float) -> float:
    """Seconds without an answer after which the worker parsing a file whose parse may
    take ``file_seconds`` counts as stuck (``0``: never, when that is 0: no limit)."""
    return file_seconds + STUCK_GRACE if file_seconds > 0 else 0.0


class AnswerClock:
    """When the pool last answered: a job whose worker has not answered for a deadline
    counts from the later of the moment it became the oldest job waited for and the
    pool's first answer (a starting pool gets :data:`START_GRACE` more)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.started = time.monotonic()
        self.first: float | None = None

    def restart(self) -> None:
        """A new pool starts now."""
        with self._lock:
            self.started = time.monotonic()
            self.first = None

    def answered(self, _fut: Future[Any]) -> None:
        """Done-callback of every job's future (runs on the pool's manager thread)."""
        with self._lock:
            if self.first is None:
                self.first = time.monotonic()

    def wait(self, fut: Future[Any], deadline: float) -> bool:
        """Wait for ``fut``; ``False`` when ``deadline`` seconds (``0``: no limit) passed
        without its answer, counted as the class says."""
        if deadline <= 0:
            futures_wait([fut])
            return True
        since = time.monotonic()
        while True:
            with self._lock:
                first = self.first
            start = max(since, first) if first is not None else self.started + START_GRACE
            left = start + deadline - time.monotonic()
            if left <= 0:
                return fut.done()
            if futures_wait([fut], timeout=min(left, 1.0)).done:
                return True


def processes(pool: Executor) -> list[Any]:
    """The worker processes of a ``ProcessPoolExecutor``."""
    procs: dict[Any, Any] = getattr(pool, "_processes", None) or {}
    return list(procs.values())


def wait_exits(procs: Sequence[Any], seconds: float) -> list[Any]:
    """Wait up to ``seconds`` for ``procs`` to exit; those still running."""
    from multiprocessing.connection import wait as wait_ready

    left: dict[Any, Any] = {}
    for proc in procs:
        try:
            left[proc.sentinel] = proc
        except ValueError:  # closed: it was joined already
            continue
    end = time.monotonic() + seconds
    try:
        while left and (remaining := end - time.monotonic()) > 0:
            for ready in wait_ready(list(left), timeout=remaining):
                left.pop(ready, None)
    except (OSError, ValueError):  # a sentinel closed meanwhile: ask each process
        return [p for p in left.values() if p.is_alive()]
    return list(left.values())
