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
            self._since, self.count = time.monotonic(), 0
            tx = self.store.transaction()
            tx.__enter__()  # a Ctrl-C inside rolls back what it began
            self._tx = tx

    def age(self) -> float:
        """Seconds the open transaction has been open (``0``: none is)."""
        return time.monotonic() - self._since if self._tx is not None else 0.0

    def commit(self) -> None:
        """Commit the open transaction, if any. It is forgotten only once it ended
        (committed, or rolled back by a failure or Ctrl-C while committing), so a
        Ctrl-C before that leaves it to :meth:`abort`."""
        tx = self._tx
        if tx is not None:
            try:
                tx.__exit__(None, None, None)
            finally:
                self._tx = None

    def abort(self) -> None:
        """Roll the open transaction back (the run is failing)."""
        tx = self._tx
        if tx is not None:
            try:
                tx.__exit__(*sys.exc_info())
            finally:
                self._tx = None
