"""Writes of the PostgreSQL store: the shared ones, with fewer round trips per file.

Writes run in pipeline mode (:meth:`cairn.store.postgres.base.PostgresBase.transaction`):
a statement whose result nobody reads is queued, but every read (``fetchone``) makes
the client wait for the server to work through the whole queue first. The shared
:class:`cairn.store.sql.writes.WritesMixin` reads twice per stored file — the ids of
the file's old documents, and ``max(rowid)`` of the units for each document — which on
SQLite costs nothing and on a server costs two waits per file (most of an index run's
time on a loaded machine). Here a file's old documents are deleted by set-based
statements that read nothing, and unit rowids come from a counter read once per write
transaction (writers hold the advisory lock for the whole transaction, so no other
writer can take the same rowids). What is stored is the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cairn.model import Document, Failure
from cairn.store.sql.writes import WritesMixin

_OF_FILE = "SELECT id FROM documents WHERE root_id=? AND path=?"
_UNITS_OF_FILE = f"SELECT rowid FROM units WHERE document_id IN ({_OF_FILE})"


class PostgresWritesMixin(WritesMixin):
    """:class:`WritesMixin` without reads on the per-file write path (see the module doc)."""

    def replace_file(
        self,
        root_id: str,
        relpath: str,
        *,
        size: int,
        mtime: float,
        hash_: str,
        format_: str,
        documents: Sequence[Document],
        failure: Failure | None = None,
    ) -> None:
        """Replace everything indexed from one file with ``documents`` (see
        :meth:`cairn.store.sql.writes.WritesMixin.replace_file`); the old documents
        go by set-based deletes, so nothing waits for the server. Call inside
        :meth:`transaction`."""
        key = (root_id, relpath)
        db = self.db
        db.execute(f"DELETE FROM units_fts WHERE rowid IN ({_UNITS_OF_FILE})", key)
        db.execute(f"DELETE FROM links WHERE document_id IN ({_OF_FILE})", key)
        db.execute(f"DELETE FROM unit_tags WHERE unit_rowid IN ({_UNITS_OF_FILE})", key)
        db.execute(f"DELETE FROM vocabulary WHERE document_id IN ({_OF_FILE})", key)
        db.execute(f"DELETE FROM units WHERE document_id IN ({_OF_FILE})", key)
        db.execute("DELETE FROM documents WHERE root_id=? AND path=?", key)
        self.upsert_file(
            root_id, relpath, size=size, mtime=mtime, hash_=hash_, format_=format_, failure=failure
        )
        for doc in documents:
            self._insert_document(doc)

    def _first_rowid(self, count: int) -> int:
        """The rowid before ``count`` new units' rowids: ``max(rowid)`` of ``units``
        read once per write transaction, then counted on here (a rolled-back savepoint
        leaves a gap, which is harmless)."""
        local: Any = self._local
        first = getattr(local, "next_rowid", None)
        if first is None or not self.db.in_transaction:
            first = super()._first_rowid(count)
        local.next_rowid = first + count  # forgotten when the next transaction begins
        return int(first)
