"""The store protocol: everything the rest of cairn may ask of storage.

Rules every method follows (each backend implements the same):

* model values and typed views in and out (:mod:`cairn.model`) — never ``sqlite3.Row``,
  never a JSON column encoding, never a rowid;
* search hands the store a parsed query and gets ranked unit ids with scores back;
  turning that into backend syntax (FTS5 MATCH, ``tsquery``) is the backend's job;
* backend errors surface as :class:`cairn.errors.StoreError`;
* writes happen inside :meth:`Store.transaction`; reads never block on a writer and never
  see a half-written file (one transaction per file at least);
* safe to use from several threads (a connection per thread, one writer at a time).

:class:`Store` is made of narrow protocols, one per concern, that a caller may type
against when it needs only that: :class:`~cairn.store.files.FileIndex` (roots and
files, written by an index run), :class:`~cairn.store.documents.DocumentIndex`
(documents and units looked up), :class:`~cairn.store.links.LinkIndex` (links and their
resolution), :class:`~cairn.store.keyword.KeywordIndex` (keyword search and hit data),
:class:`~cairn.store.runs.RunLog` (runs, counts, integrity) and
:class:`~cairn.store.tables.TableAccess` (whole tables, for a copy). Beside them, reached
as attributes: :class:`~cairn.store.indexes.VectorIndex` (``store.vectors``),
:class:`~cairn.store.indexes.EdgeIndex` (``store.edges``), ``store.access_log``,
``store.enrichments`` and ``store.reports``.
"""

from __future__ import annotations

from collections.abc import Hashable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from cairn.store.documents import DocumentIndex
from cairn.store.files import FileIndex
from cairn.store.keyword import KeywordIndex
from cairn.store.links import LinkIndex
from cairn.store.runs import RunLog
from cairn.store.tables import TableAccess

if TYPE_CHECKING:
    from cairn.store.access import AccessLog
    from cairn.store.enrichments import EnrichIndex
    from cairn.store.indexes import EdgeIndex, VectorIndex
    from cairn.store.lock import WriterLock
    from cairn.store.reports import ReportIndex

__all__ = [
    "DocumentIndex", "FileIndex", "KeywordIndex", "LinkIndex", "RunLog", "Store", "TableAccess",
]


class Store(FileIndex, DocumentIndex, LinkIndex, KeywordIndex, RunLog, TableAccess, Protocol):
    """One index: the narrow protocols it is made of, its lifecycle, and the
    ``vectors``, ``edges``, ``access_log``, ``enrichments`` and ``reports`` beside it."""

    path: str
    concurrent_reads: bool
    """Whether two threads' reads run at once in another process (a database server),
    so a search may run its keyword and semantic lists side by side."""

    # --- lifecycle -------------------------------------------------------------------
    @property
    def schema_version(self) -> int:
        """The schema version of the index."""
        ...

    def close(self) -> None:
        """Close every connection (idempotent)."""
        ...

    def change_token(self) -> Hashable | None:
        """A cheap value that is equal between two calls in one thread only if nothing
        was written to the index in between, by any connection or process (SQLite:
        this thread's connection, its ``PRAGMA data_version`` and ``total_changes``);
        ``None`` when the backend cannot tell cheaply. Lets a reader skip re-checking
        state it derived from the index (the graph's freshness)."""
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction (nested: a savepoint); rolled back if the block raises."""
        ...

    def bulk_writes(self) -> AbstractContextManager[None]:
        """A context for many files written in a row (an index run): the backend may
        hold writes back until each transaction commits and tune itself for volume
        (SQLite: :meth:`cairn.store.sqlite.base.SQLiteBase.bulk_writes`)."""
        ...

    def writer_lock(self) -> WriterLock:
        """A new handle on the index's writer lock (one writer at a time for a whole run;
        see :class:`cairn.store.lock.WriterLock`)."""
        ...

    # --- what sits beside the tables ----------------------------------------------------
    @property
    def edges(self) -> EdgeIndex:
        """The graph tables (edges, stubs, incremental state)."""
        ...

    @property
    def vectors(self) -> VectorIndex:
        """The chunk and vector index of this store."""
        ...

    @property
    def access_log(self) -> AccessLog:
        """The access log of agent memory (recalls that Hebbian decay counts)."""
        ...

    @property
    def enrichments(self) -> EnrichIndex:
        """LLM enrichment: the reply cache, conversations' summaries and insights, typed
        relations (:mod:`cairn.store.enrichments`)."""
        ...

    @property
    def reports(self) -> ReportIndex:
        """The last dream reports (:mod:`cairn.maintain.dream`)."""
        ...
