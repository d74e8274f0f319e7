"""The writer lock of a PostgreSQL index: a session-level advisory lock.

The same contract as :class:`cairn.store.lock.WriterLock` (one writer at a time, readers
never block, released by the server when the holder's connection ends — a killed process
leaves no stale lock), held on a connection of its own for the whole run, so two
indexers on two machines serialise (or the second is refused) instead of interleaving
their batches.
"""

from __future__ import annotations

from typing import Any

from cairn.errors import StoreError
from cairn.store.lock import WriterLock

RUN_LOCK_KEY = 0x6361_6972_6E01  # "cairn\1": index runs (transactions use "cairn\0")


class AdvisoryWriterLock(WriterLock):
    """:class:`WriterLock` on ``pg_try_advisory_lock`` (only the backend hooks differ).

    Args:
        url: the database URL (with its password; never shown).
        shown: the URL to name in messages (password removed).
    """

    def __init__(self, url: str, shown: str) -> None:
        super().__init__(shown)
        self._url = url

    def _always_granted(self) -> bool:
        return False

    def _open(self) -> Any:
        """A connection of the lock's own.

        Raises:
            StoreError: the server cannot be reached.
        """
        import psycopg

        try:
            return psycopg.connect(self._url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise StoreError(f"{self.db_path}: cannot connect: {exc}".strip()) from exc

    def _try(self, handle: Any) -> bool:
        row = handle.execute("SELECT pg_try_advisory_lock(%s)", (RUN_LOCK_KEY,)).fetchone()
        return bool(row and row[0])

    def _unlock(self, handle: Any) -> None:
        handle.execute("SELECT pg_advisory_unlock(%s)", (RUN_LOCK_KEY,))

    def _close(self, handle: Any) -> None:
        handle.close()
