"""Index runs a server starts while it answers readers: on a thread of their own at a
lower CPU priority, so that on a small machine the requests keep the cores.

A door (``POST /v1/index``, the MCP ``index`` tool) calls :meth:`BackgroundIndexMixin.
index_in_background`; the run itself is :meth:`cairn.app.Cairn.index` inside
:meth:`cairn.app.doors.DoorsMixin.indexing`, unchanged. On Linux a thread has its own
nice value (``setpriority(PRIO_PROCESS, thread id)``), inherited by the threads and
worker processes it starts (the parse workers of a large run); elsewhere the run keeps
the process's priority, since there the call would lower the whole process.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from cairn.app.parts import Parts

if TYPE_CHECKING:
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


class BackgroundIndexMixin(Parts):
    """Index runs for servers, at a lower priority than the requests they answer."""

    if TYPE_CHECKING:
        def index(self) -> Run: ...

        def indexing(self) -> AbstractContextManager[None]: ...

    def index_in_background(self, *, nice: int = INDEX_NICE) -> Run:
        """:meth:`index` of every registered root, inside :meth:`indexing` (readers
        go on meanwhile), on a new thread ``cairn-index`` whose CPU priority is
        ``nice`` steps lower than the process's (see :func:`lower_thread_priority`);
        waits for it.

        Returns:
            The run record, as :meth:`index` returns it.

        Raises:
            Whatever :meth:`index` raises (``IndexBusy``, ``MassDelete``,
            ``StoreError`` …), re-raised in the caller's thread.
        """
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
