"""Ctrl-C during a model load is a Ctrl-C, not a missing model.

A SIGINT that arrives while a native extension imports (``onnxruntime`` importing
``numpy``, say) can be swallowed there and come out as an ``ImportError``; a caller
that reads that as "provider unavailable" then falls back or loads again, and the
user's interrupt is lost.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def interrupts_kept() -> Iterator[None]:
    """Run the block noting any SIGINT; if the block then raises anything else, raise
    :class:`KeyboardInterrupt` in its place.

    Only in the main thread and only while Python's own SIGINT handler is installed
    (elsewhere signals cannot be watched, or someone else handles them): there the
    block runs as is.

    Raises:
        KeyboardInterrupt: a SIGINT arrived during the block and the block failed.
    """
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    seen: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        seen.append(signum)
        signal.default_int_handler(signum, frame)

    signal.signal(signal.SIGINT, note)
    try:
        yield
    except Exception:
        if seen:
            raise KeyboardInterrupt from None
        raise
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
