"""Imported only in the ``forkserver`` of the parse pool, first of the modules
preloaded there (see :meth:`cairn.ingest.prepare.Preparer._start`): the forkserver
dies with the process that started it. Without this it outlived a killed indexer,
since every worker it forks holds the pipe whose end would tell it to exit, and the
workers wait for it. The starting process's id comes in the environment
(``CAIRN_POOL_PARENT``): the forkserver may still be starting when that process dies.
Only the standard library is imported here, so that this runs as early as it can."""

from __future__ import annotations

import os
import signal


def _guard() -> None:
    parent = int(os.environ.get("CAIRN_POOL_PARENT", "0") or 0) or os.getppid()
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux
        return
    if os.getppid() != parent:
        os._exit(1)


_guard()
