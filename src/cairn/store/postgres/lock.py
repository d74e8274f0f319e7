"""The writer lock of a PostgreSQL index: a session-level advisory lock.

The same contract as :class:`cairn.store.lock.WriterLock` (one writer at a time, readers
never block, released by the server when the holder's connection ends — a killed process
leaves no stale lock), held on a connection of its own for the whole run, so two
indexers on two machines serialise (or the second is refused) instead of interleaving
their batches.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from cairn.errors import StoreError
from cairn.store.lock import IndexBusy, WriterLock

RUN_LOCK_KEY = 0x6361_6972_6E01  # "cairn\1": index runs (transactions use "cairn\0")


class AdvisoryWriterLock(WriterLock):
    """:class:`WriterLock` on ``pg_try_advisory_lock``.

    Args:
        url: the database URL (with its password; never shown).
        shown: the URL to name in messages (password removed).
    """

    def __init__(self, url: str, shown: str) -> None:
        super().__init__("")
        self.db_path = shown
        self._url = url
        self._conn: Any = None

    def acquire(
        self, wait: float | None = 0.0, on_wait: Callable[[str], None] | None = None
    ) -> None:
        """Take the lock (see :meth:`WriterLock.acquire`).

        Raises:
            IndexBusy: another process still holds it after ``wait`` seconds.
            StoreError: the server cannot be reached.
        """
        if self._depth:
            self._depth += 1
            return
        import psycopg

        try:
            conn = psycopg.connect(self._url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise StoreError(f"{self.db_path}: cannot connect: {exc}".strip()) from exc
        deadline = None if wait is None else time.monotonic() + max(0.0, wait)
        told = False
        while True:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (RUN_LOCK_KEY,)).fetchone()
            if row and row[0]:
                break
            if deadline is not None and time.monotonic() >= deadline:
                conn.close()
                raise IndexBusy(
                    f"{self.db_path}: another cairn process is writing this index "
                    "(`cairn index` or `cairn watch`); the index is fine: wait for it to "
                    "finish, or run again with --wait"
                )
            if not told and on_wait is not None:
                on_wait(f"{self.db_path}: another cairn process is writing this index; waiting…")
                told = True
            time.sleep(0.1)
        self._conn = conn
        self._depth = 1

    def release(self) -> None:
        """Give the lock back (closing its connection releases it on the server)."""
        if self._depth == 0:
            return
        self._depth -= 1
        if self._depth == 0 and self._conn is not None:
            conn, self._conn = self._conn, None
            try:
                conn.execute("SELECT pg_advisory_unlock(%s)", (RUN_LOCK_KEY,))
            finally:
                conn.close()
