"""The open write transaction of an index run (files are stored in batches)."""

from __future__ import annotations

import sys
import time
from contextlib import AbstractContextManager

from cairn.store import Store

BATCH = 200
"""Files written per transaction, at most."""
COLD_BATCH = 1000
"""... in a root's first index run (see :data:`cairn.ingest.pipeline.COLD_COMMIT_SECONDS`)."""


class Batch:
    """The open write transaction of an index run: files are stored in batches of at
    most :data:`BATCH`, committed early when the next file keeps it waiting."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.count = 0
        self._tx: AbstractContextManager[None] | None = None
        self._since = 0.0

    def open(self) -> None:
        """Start a transaction unless one is open."""
        if self._tx is None:
            tx = self.store.transaction()
            tx.__enter__()
            self._tx, self._since, self.count = tx, time.monotonic(), 0

    def age(self) -> float:
        """Seconds the open transaction has been open (``0``: none is)."""
        return time.monotonic() - self._since if self._tx is not None else 0.0

    def commit(self) -> None:
        """Commit the open transaction, if any."""
        tx, self._tx = self._tx, None
        if tx is not None:
            tx.__exit__(None, None, None)

    def abort(self) -> None:
        """Roll the open transaction back (the run is failing)."""
        tx, self._tx = self._tx, None
        if tx is not None:
            tx.__exit__(*sys.exc_info())
