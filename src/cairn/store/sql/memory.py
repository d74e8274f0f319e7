"""The access log of agent memory (``store.access_log``, the
:class:`cairn.store.access.AccessLog` protocol): one table of its own, created on first
use as the ``memory`` component (``components`` keeps its version)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from functools import cached_property

from cairn.store.sql.base import SQLBase

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE memory_access (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        bundle TEXT NOT NULL,
        concept TEXT NOT NULL,
        query TEXT NOT NULL,
        at TEXT NOT NULL,
        counted INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX memory_access_pending ON memory_access(bundle, counted)
    """,
)


class SQLiteAccessLog:
    """:class:`cairn.store.access.AccessLog` over the store's connection."""

    def __init__(self, store: SQLBase) -> None:
        self._store = store
        store.ensure_component("memory", MIGRATIONS)

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection of the store."""
        return self._store.db

    def record(self, bundle: str, concepts: Sequence[str], query: str, at: str) -> int:
        """See :meth:`cairn.store.access.AccessLog.record`."""
        if not concepts:
            return 0
        with self._store.transaction():
            self.db.executemany(
                "INSERT INTO memory_access(bundle, concept, query, at) VALUES (?, ?, ?, ?)",
                [(bundle, c, query, at) for c in concepts],
            )
        return len(concepts)

    def pending(self, bundle: str) -> tuple[dict[str, int], int]:
        """See :meth:`cairn.store.access.AccessLog.pending`."""
        rows = self.db.execute(
            "SELECT concept, COUNT(*), MAX(id) FROM memory_access "
            "WHERE bundle=? AND counted=0 GROUP BY concept",
            (bundle,),
        ).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}, max((int(r[2]) for r in rows), default=0)

    def consume(self, bundle: str, upto: int) -> int:
        """See :meth:`cairn.store.access.AccessLog.consume`."""
        with self._store.transaction():
            cur = self.db.execute(
                "UPDATE memory_access SET counted=1 WHERE bundle=? AND counted=0 AND id<=?",
                (bundle, upto),
            )
        return int(cur.rowcount)

    def total(self, bundle: str) -> int:
        """See :meth:`cairn.store.access.AccessLog.total`."""
        row = self.db.execute(
            "SELECT COUNT(*) FROM memory_access WHERE bundle=?", (bundle,)
        ).fetchone()
        return int(row[0])


class AccessLogMixin(SQLBase):
    """Gives a store its ``access_log`` (created on first use)."""

    @cached_property
    def access_log(self) -> SQLiteAccessLog:
        """The access log of agent memory (:class:`cairn.store.access.AccessLog`)."""
        return SQLiteAccessLog(self)
