"""The bounds a file's parse runs under: a time limit (an alarm), an address-space
cap on a worker process, and a worker that dies with the process that started it."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class TimeUp(BaseException):
    """Raised by the alarm inside a parse that ran out of time (a ``BaseException``, so
    a parser's ``except Exception`` does not swallow it)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`TimeUp` in the block after ``seconds`` (no limit off the main
    thread, without ``setitimer``, or for ``seconds <= 0``)."""
    if (
        seconds <= 0
        or not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def on_alarm(_signum: int, _frame: Any) -> None:
        raise TimeUp

    old = signal.signal(signal.SIGALRM, on_alarm)
    # repeats every 0.5 s: an alarm that lands where Python cannot raise (a gc
    # callback) is not lost
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.5)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this process when its parent dies (``PR_SET_PDEATHSIG``);
    exit at once if the parent (``parent``, a process id) is already gone. Nothing
    elsewhere.

    The signal comes when the *thread* that started this process ends: call it only in
    a process started from a thread that lives as long as its process (a main thread,
    the ``forkserver``)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux
        return
    if os.getppid() != parent:
        os._exit(1)


def limit_memory(mb: int) -> None:
    """Cap this worker's address space (a parse that needs more gets ``MemoryError``,
    reported as that file's failure)."""
    if mb <= 0:
        return
    try:
        import resource

        limit = mb * 1024 * 1024
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):  # not on this platform
        pass
