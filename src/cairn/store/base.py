"""The store protocol: everything the rest of cairn may ask of storage.

Rules every method follows (a second backend, e.g. PostgreSQL, implements the same):

* model values and typed views in and out (:mod:`cairn.model`) — never ``sqlite3.Row``,
  never a JSON column encoding, never a rowid;
* search hands the store a parsed query (terms, phrases, exclusions, filters) and gets
  ranked unit ids with scores back; turning that into backend syntax (FTS5 MATCH,
  ``tsquery``) is the backend's job;
* backend errors surface as :class:`cairn.errors.StoreError`;
* writes happen inside :meth:`Store.transaction`; reads never block on a writer and never
  see a half-written file (one transaction per file at least);
* safe to use from several threads (a connection per thread, one writer at a time).

The narrow protocols :class:`VectorIndex` (chunks and embeddings) and :class:`EdgeIndex`
(the graph tables) are reached as ``store.vectors`` and ``store.edges``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cairn.model import (
        Backlink,
        CatalogDocument,
        CatalogUnit,
        ContextUnit,
        Diagnostic,
        Document,
        FailedFile,
        Failure,
        FileState,
        HitUnit,
        LinkOccurrence,
        LinkResolution,
        Run,
        SourceRoot,
        StoredDocument,
        StoredLink,
        StoredUnit,
        Term,
        TextQuery,
        UnitFacts,
    )
    from cairn.store.access import AccessLog
    from cairn.store.enrichments import EnrichIndex
    from cairn.store.indexes import EdgeIndex, VectorIndex
    from cairn.store.lock import WriterLock
    from cairn.store.reports import ReportIndex


class Store(Protocol):
    """One index: documents, units, links, runs; ``vectors`` and ``edges`` beside them."""

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

    def writer_lock(self) -> WriterLock:
        """A new handle on the index's writer lock (one writer at a time for a whole run;
        see :class:`cairn.store.lock.WriterLock`)."""
        ...

    # --- roots and files (ingest owner) ----------------------------------------------
    def upsert_root(self, root: SourceRoot) -> None:
        """Add a source root, or update its globs."""
        ...

    def roots(self) -> list[SourceRoot]:
        """Every registered source root, by path."""
        ...

    def remove_root(self, root_id: str) -> int:
        """Forget a root and everything indexed from it; returns documents removed."""
        ...

    def file_states(
        self, root_id: str, paths: Sequence[str] | None = None
    ) -> dict[str, FileState]:
        """Known files of a root: ``relpath -> FileState`` (``paths``: only these)."""
        ...

    def file_paths(self, root_id: str, named: str | None = None) -> list[str]:
        """The relpaths of a root's known files (no states); ``named``: only files of
        that name (case-insensitive)."""
        ...

    def file_count(self, root_id: str) -> int:
        """How many files of a root the index knows."""
        ...

    def documents_of_root(self, root_id: str, *, typed_only: bool = False) -> list[Document]:
        """A root's documents by path (then key), without units; ``typed_only``: only
        those that declare a ``type``."""
        ...

    def touch_file(self, root_id: str, relpath: str, size: int, mtime: float) -> None:
        """Record a new (size, mtime) for a file whose content hash did not change."""
        ...

    def record_failure(
        self, root_id: str, relpath: str, size: int, mtime: float, hash_: str, failure: Failure
    ) -> None:
        """Mark a file failed; documents from an earlier good version are kept."""
        ...

    def remove_file(self, root_id: str, relpath: str) -> int:
        """Delete a file and everything indexed from it; returns documents removed."""
        ...

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
        """Replace everything indexed from one file with ``documents`` (final ids)."""
        ...

    def upsert_file(
        self,
        root_id: str,
        relpath: str,
        *,
        size: int,
        mtime: float,
        hash_: str,
        format_: str,
        failure: Failure | None = None,
    ) -> None:
        """Record a file as indexed (``ok``, or ``partial`` with ``failure``)."""
        ...

    def replace_document(self, doc: Document) -> None:
        """Insert a document, replacing one with the same id."""
        ...

    def delete_document(self, doc_id: str) -> None:
        """Delete one document with everything indexed from it."""
        ...

    def document_hashes(self, root_id: str, relpath: str) -> dict[str, str]:
        """``document id -> content hash`` of the documents indexed from one file."""
        ...

    def set_attachments(self, root_id: str, paths: Iterable[str]) -> None:
        """Replace the list of a root's non-note files."""
        ...

    def attachments(self) -> list[tuple[str, str]]:
        """``(root_id, relpath)`` of every known non-note file."""
        ...

    def document_owner(self, doc_id: str) -> tuple[str, str] | None:
        """``(root_id, path)`` of the file a document id belongs to, if any."""
        ...

    def unit_owner(self, unit_id: str) -> str | None:
        """The id of the document holding a unit id, if any."""
        ...

    # --- documents and units: lookups (interfaces owner) -----------------------------
    def document(self, document_id: str) -> StoredDocument | None:
        """The document with this id, or ``None``."""
        ...

    def documents_at(self, root_id: str, relpath: str) -> list[StoredDocument]:
        """The documents indexed from one file of a root, by key (empty when none)."""
        ...

    def unit(self, unit_id: str) -> StoredUnit | None:
        """The unit with this id, or ``None``."""
        ...

    def units_of(self, document_id: str) -> list[StoredUnit]:
        """A document's units in document order (by ordinal)."""
        ...

    def find_ids(self, prefix: str) -> list[tuple[str, str]]:
        """``(kind, id)`` pairs, ``kind`` ``document`` or ``unit``, whose id starts with
        ``prefix`` (taken literally): at most five of each, documents first."""
        ...

    def links_of(self, unit_ids: Sequence[str]) -> list[StoredLink]:
        """Outgoing links of the given units, by unit id then position in the unit."""
        ...

    def backlinks(self, document_id: str) -> list[Backlink]:
        """Links from anywhere that resolve to this document or one of its units, by
        source path and line."""
        ...

    # --- links and their resolution (graph owner) ------------------------------------
    @property
    def edges(self) -> EdgeIndex:
        """The graph tables (edges, stubs, incremental state)."""
        ...

    def links_from(self, document_ids: Sequence[str] | None = None) -> list[LinkOccurrence]:
        """The stored links of the given documents (``None``: all), by unit and ordinal."""
        ...

    def set_link_resolutions(self, updates: Iterable[LinkResolution]) -> int:
        """Store new resolutions of links (keyed by unit id and ordinal); returns how many."""
        ...

    def documents_linking_to(self, document_ids: Sequence[str]) -> set[str]:
        """Documents with a link currently resolved to one of ``document_ids``."""
        ...

    def catalog_entries(
        self, document_ids: Sequence[str] | None = None
    ) -> tuple[list[CatalogDocument], list[CatalogUnit]]:
        """What link resolution reads of the given documents (``None``: all) and their
        units, documents by (root, path, key, id), units by document and ordinal."""
        ...

    # --- keyword search and hit data (search owner) ----------------------------------
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

    def search_text(
        self,
        query: TextQuery,
        *,
        limit: int,
        weights: Mapping[str, float],
        whole_documents: bool = True,
    ) -> list[tuple[str, float]]:
        """``(unit id, score)`` best first for a parsed query: any positive term
        matches (BM25-like score, higher is better), negative terms exclude, filters
        restrict, units off a conversation's canonical branch only with the query's
        ``alternates``; no positive term: filter-only (score 0, in rounds: each document's
        first matching unit in path order, then each one's second, and so on).
        ``weights``: per-field weights ``title``, ``outline_path``, ``tags``, ``body``
        (and ``meta``: frontmatter, properties, TODO keywords). ``whole_documents``:
        in a filter-only query, a match by a document's own metadata is one hit (the
        document's first unit), not every unit; ``False`` gives every unit.

        Raises:
            QueryError: ``limit`` < 1 or an unknown filter field. StoreError: backend.
        """
        ...

    def text_query_syntax(self, query: TextQuery) -> str | None:
        """The backend's rendering of ``query`` (for explanations), ``None`` when it
        has no positive term."""
        ...

    def filter_units(self, unit_ids: Sequence[str], query: TextQuery) -> list[str]:
        """The given existing unit ids that pass ``query``'s filters (and its branch:
        canonical only unless ``alternates``), in the given order; its terms are not
        read."""
        ...

    def filter_values(self, field: str) -> list[str]:
        """Values of ``format``, ``kind``, ``todo`` or ``role`` present in the index.

        Raises:
            QueryError: another field.
        """
        ...

    def carried_vocabulary(self, carriers: int) -> dict[tuple[str, str, str], list[str]]:
        """Every distinct ``(kind, key, value)`` units carry — tags, TODO keywords, note
        types, properties' names and values
        (:data:`cairn.store.sqlite.carried.Carried`) — with the ids of up to
        ``carriers`` units that carry it. A pass over the index: keep it until
        :meth:`change_token` moves.

        Raises:
            StoreError: the backend failed.
        """
        ...

    def headings_titled(self, term: Term, limit: int) -> list[tuple[str, str]]:
        """``(unit id, title)`` of up to ``limit`` headings whose title holds ``term`` (a
        keyword-index look-up; in no particular order).

        Raises:
            StoreError: the backend failed.
        """
        ...

    def facet_counts(
        self, unit_ids: Sequence[str], fields: Sequence[str] = ...
    ) -> dict[str, dict[str, int]]:
        """field -> value -> how many of ``unit_ids`` have it, for the facet fields
        ``format``, ``tag``, ``todo``, ``type``, ``root`` (all by default).

        Raises:
            QueryError: an unknown field. StoreError: the backend failed.
        """
        ...

    def documents_by_format(
        self, formats: Sequence[str], *, limit: int = 200, offset: int = 0
    ) -> list[StoredDocument]:
        """Documents of these formats, newest first (``created``, ``modified``).

        Raises:
            QueryError: ``limit`` < 1 or ``offset`` < 0. StoreError: the backend failed.
        """
        ...

    def unit_facts(self, unit_ids: Sequence[str]) -> dict[str, UnitFacts]:
        """``unit id -> UnitFacts`` for the ids that exist (ranking's light look-up)."""
        ...

    def hit_units(self, unit_ids: Sequence[str]) -> dict[str, HitUnit]:
        """``unit id -> HitUnit`` (unit plus document fields) for the ids that exist."""
        ...

    def siblings(self, document_id: str, parent_id: str | None, exclude: str) -> list[str]:
        """Titles of a unit's sibling headings, in order (at most 12)."""
        ...

    def siblings_many(
        self, units: Sequence[tuple[str, str | None, str]]
    ) -> dict[str, list[str]]:
        """:meth:`siblings` of many ``(document id, parent id, unit id)`` at once:
        ``unit id -> titles`` (one statement on a server)."""
        ...

    def neighbours(self, document_id: str, ordinal: int, kind: str) -> list[ContextUnit]:
        """The canonical units of ``kind`` just before and after ``ordinal``."""
        ...

    @property
    def reports(self) -> ReportIndex:
        """The last dream reports (:mod:`cairn.maintain.dream`)."""
        ...

    # --- runs, counts and integrity -------------------------------------------------
    def save_run(self, run: Run) -> None:
        """Insert or replace a run record (its ``graph``/``embedding`` steps are not kept)."""
        ...

    def last_run(self) -> Run | None:
        """The most recent indexing run, or ``None`` before the first."""
        ...

    def failed_files(self) -> list[FailedFile]:
        """Files whose last indexing failed wholly or partly, by root and path."""
        ...

    def document_warnings(self) -> list[tuple[str, str, tuple[Diagnostic, ...]]]:
        """``(root path, relpath, warnings)`` for each document that carries warnings."""
        ...

    def counts(self) -> dict[str, Any]:
        """Counts: ``roots``, ``files``, ``documents``, ``units``, ``links``,
        ``links_resolved``, ``links_unresolved``, ``fts_rows``, ``failed_files`` (ints)
        and ``formats`` (``format -> {"documents": int, "units": int}``)."""
        ...

    # --- whole tables, for moving an index between backends (store/copy.py) ---------
    def table_names(self) -> list[str]:
        """The index's own tables (backend bookkeeping excluded)."""
        ...

    def table_columns(self, table: str) -> list[str]:
        """The columns of ``table`` a copy reads and writes."""
        ...

    def read_table(self, table: str, columns: Sequence[str]) -> Iterator[tuple[Any, ...]]:
        """Every row of ``table``, those columns, as plain values."""
        ...

    def write_rows(self, table: str, columns: Sequence[str],
                   rows: Sequence[Sequence[Any]]) -> None:
        """Insert rows into ``table`` (inside :meth:`transaction`)."""
        ...

    def clear_table(self, table: str) -> None:
        """Delete every row of ``table``."""
        ...

    def finish_copy(self) -> None:
        """Bring the backend's counters (sequences) past copied values."""
        ...

    def integrity_check(self) -> list[str]:
        """Problems of the index, one sentence each (empty when healthy)."""
        ...

    def repair(self) -> list[str]:
        """Mend what :meth:`integrity_check` finds in the keyword index (rows without a
        unit; the index rebuilt from the units when it still disagrees), in one
        transaction; what was done, one sentence each (empty: nothing to mend)."""
        ...
