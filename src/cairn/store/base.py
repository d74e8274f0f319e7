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

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from cairn.model import (
    Arc,
    Backlink,
    CatalogDocument,
    CatalogUnit,
    Chunk,
    ChunkSource,
    ContextUnit,
    Diagnostic,
    Document,
    DocumentBrief,
    Edge,
    FailedFile,
    Failure,
    FileState,
    Filter,
    GraphCounts,
    GraphDocument,
    GraphNode,
    GraphUnit,
    HitUnit,
    LinkOccurrence,
    LinkResolution,
    OrphanDocument,
    Run,
    SourceRoot,
    StoredDocument,
    StoredLink,
    StoredUnit,
    Stub,
    TextQuery,
    UnitFacts,
    UnitShape,
    UnitSpan,
    VectorMatrix,
    VectorSpace,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class VectorIndex(Protocol):
    """Chunks and their embeddings, keyed by (space, content hash)."""

    # --- chunks and vectors (search/embedding owner) ---------------------------------
    def generation(self) -> int:
        """A counter that changes whenever a chunk or vector is added or removed (an
        in-memory matrix is stale when it moved)."""
        ...

    def meta(self, key: str) -> str | None:
        """A bookkeeping value of the vector tables (``None`` when never set)."""
        ...

    def set_meta(self, key: str, value: str) -> None:
        """Set a bookkeeping value. Call inside a transaction."""
        ...

    def chunker_signature(self) -> str:
        """The chunking settings' signature the stored chunks were made with."""
        ...

    def reset_chunks(self, signature: str) -> None:
        """Delete every chunk (vectors stay cached) and record new chunking settings;
        inside a transaction."""
        ...

    def ensure_space(self, space: str, name: str, dim: int) -> None:
        """Record an embedding space (idempotent).

        Raises:
            StoreError: the space is known with another dimension.
        """
        ...

    def spaces(self) -> list[VectorSpace]:
        """Known spaces with their vector counts, oldest first."""
        ...

    def has_unchunked(self) -> bool:
        """Whether a unit that gets chunks still has none (cheap)."""
        ...

    def units_without_chunks(self, document_ids: Sequence[str] | None = None) -> list[ChunkSource]:
        """Units that get chunks but have none yet (optionally only of ``document_ids``)."""
        ...

    def add_chunks(self, chunks: Iterable[Chunk]) -> None:
        """Store chunks, replacing those with the same (unit, ordinal); in a transaction."""
        ...

    def chunks_of(self, unit_id: str) -> list[Chunk]:
        """A unit's chunks in order."""
        ...

    def chunks_missing_vectors(self, space: str) -> list[tuple[Chunk, ChunkSource]]:
        """Live chunks without a vector in ``space``, each with its unit."""
        ...

    def missing_vectors(self, space: str) -> int:
        """How many live chunks have no vector in ``space`` (cheap; all of them right
        after a model switch, so a no-change index run knows to embed)."""
        ...

    def has_vectors(self, space: str, hashes: Sequence[str]) -> set[str]:
        """The subset of ``hashes`` with a vector in ``space``."""
        ...

    def put_vectors(self, space: str, items: Iterable[tuple[str, npt.NDArray[np.float32]]]) -> int:
        """Store ``(hash, float32[dim])`` pairs (existing kept); in a transaction.
        Returns the number given."""
        ...

    def vector(self, space: str, hash_: str) -> npt.NDArray[np.float32] | None:
        """One stored vector, or ``None``."""
        ...

    def prune(self) -> int:
        """Delete vectors no live chunk uses (every space); in a transaction. Returns
        the number deleted."""
        ...

    def drop_space(self, space: str) -> int:
        """Forget a space and its vectors; returns vectors removed."""
        ...

    def matrix(self, space: str) -> VectorMatrix:
        """Every live chunk vector of ``space`` keyed by unit id and chunk ordinal."""
        ...

    def counts(self) -> dict[str, int]:
        """``{"chunks": n, "vectors": n}``."""
        ...

    def integrity_check(self, space: str | None = None) -> list[str]:
        """Problems of chunks and vectors (``[]`` = fine); with ``space``, also live
        chunks lacking a vector there."""
        ...

    def any_vectors(self) -> bool:
        """Whether any vector is stored (cheap)."""
        ...


class EdgeIndex(Protocol):
    """Typed edges, stub nodes and graph queries.

    Besides edges and stubs it keeps the graph's incremental state: the content hash
    each document had when its edges were last built, the tags and property values of
    its units (features, for implicit edges), the name keys each document answers to and
    those its links and relation values look for (see :mod:`cairn.graph.resolve`), the
    documents whose declared edges await a rebuild ("dirty", ``"*"`` for all) and
    ``meta`` values (the build settings' fingerprint). Writes run inside
    ``store.transaction()``. Node ids are unit ids or stub ids (``stub:…``).
    """

    # --- edges, stubs, graph queries (graph owner) -----------------------------------
    def insert(self, edges: Iterable[Edge], run_id: str | None = None) -> int:
        """Insert or replace edges (same id → replaced); returns how many."""
        ...

    def delete_ids(self, ids: Sequence[str]) -> None:
        """Delete edges by id."""
        ...

    def delete_implicit_touching(self, unit_ids: Sequence[str], relation: str) -> None:
        """Delete implicit edges of ``relation`` with either end among ``unit_ids``."""
        ...

    def delete_origin_for_documents(self, origin: str, document_ids: Sequence[str]) -> None:
        """Delete the edges of one origin leaving the given documents."""
        ...

    def upsert_stubs(self, stubs: Iterable[Stub]) -> None:
        """Insert or refresh stub nodes."""
        ...

    def prune_stubs(self) -> int:
        """Delete stub nodes no edge points at; returns how many."""
        ...

    def clear(self) -> None:
        """Forget every edge, stub, built state, feature and dirty mark and the build
        fingerprint (names and wants are kept)."""
        ...

    def size(self) -> tuple[int, int]:
        """``(edges, stub nodes)``."""
        ...

    def changed_documents(self) -> tuple[list[str], list[str]]:
        """``(changed or new document ids, removed document ids)`` since the last build."""
        ...

    def mark_built(self, document_ids: Sequence[str]) -> None:
        """Record the documents' current content hashes as built."""
        ...

    def forget_docs(self, document_ids: Sequence[str]) -> None:
        """Drop the built state and features of documents."""
        ...

    def set_features(self, rows: Iterable[tuple[str, str, str]]) -> None:
        """Add ``(document id, unit id, feature)`` rows (``tag:x`` / ``prop:key=value``)."""
        ...

    def meta(self, key: str) -> str | None:
        """A stored graph setting (e.g. ``config``, the build fingerprint), or ``None``."""
        ...

    def set_meta(self, key: str, value: str) -> None:
        """Store a graph setting."""
        ...

    def names_of(self, document_ids: Sequence[str]) -> dict[str, set[str]]:
        """``document id -> name keys`` recorded for the given documents."""
        ...

    def named_documents(self, prefix: str = "") -> set[str]:
        """Ids with recorded names (documents, and ``attachment:ROOT:PATH`` pseudo-ids),
        optionally only those starting with ``prefix``."""
        ...

    def name_drift(self) -> tuple[list[str], list[str]]:
        """``(documents without recorded names, named documents that are gone)``."""
        ...

    def set_names(self, names: Mapping[str, Iterable[str]]) -> None:
        """Replace the name keys of the given ids (empty: forget them)."""
        ...

    def documents_named(self, keys: Iterable[str]) -> set[str]:
        """Ids (documents, attachment pseudo-ids) answering to any of ``keys``."""
        ...

    def set_wants(self, source: str, wants: Mapping[str, Iterable[str]]) -> None:
        """Replace the keys the given documents look for, from ``source`` (``link`` or
        ``value``)."""
        ...

    def documents_wanting(self, keys: Iterable[str]) -> set[str]:
        """Documents whose links or relation values look for any of ``keys``."""
        ...

    def forget_wants(self, document_ids: Sequence[str]) -> None:
        """Drop every want of the given documents."""
        ...

    def mark_dirty(self, document_ids: Iterable[str]) -> None:
        """Mark documents (or ``"*"``) for a rebuild of their declared and rule edges."""
        ...

    def dirty(self) -> set[str]:
        """The documents marked dirty, left marked."""
        ...

    def take_dirty(self) -> set[str]:
        """The documents marked dirty, unmarking them."""
        ...

    def out_arcs(self, nodes: Sequence[str], relations: Sequence[str] | None = None) -> list[Arc]:
        """The arcs leaving ``nodes`` (only ``relations``, when given)."""
        ...

    def in_arcs(self, nodes: Sequence[str], relations: Sequence[str] | None = None) -> list[Arc]:
        """The arcs entering ``nodes``."""
        ...

    def edges_by_ids(self, ids: Sequence[str]) -> dict[str, Edge]:
        """Full edges by id (missing ids left out)."""
        ...

    def all_edges(
        self, *, relations: Sequence[str] | None = None, origins: Sequence[str] | None = None
    ) -> list[Edge]:
        """Every edge passing the filters (``None``: all), by id."""
        ...

    def edges_of_origin(
        self, origin: str, source_document_ids: Sequence[str] | None = None
    ) -> dict[str, Edge]:
        """``id -> edge`` of one origin leaving the given documents (``None``: all)."""
        ...

    def node_ids(self) -> list[str]:
        """Every node: unit ids, then stub ids, each sorted."""
        ...

    def nodes(self, ids: Iterable[str]) -> dict[str, GraphNode]:
        """Display data of nodes by id (unknown ids left out)."""
        ...

    def unit_shapes(self, unit_ids: Iterable[str]) -> dict[str, UnitShape]:
        """Document, ordinal and body length of units by id."""
        ...

    def counts(self) -> GraphCounts:
        """Node counts, edges per relation and origin, unresolved link occurrences."""
        ...

    def endpoints(self, origins: Sequence[str] | None = None) -> Iterator[tuple[str, str]]:
        """``(source, target)`` of every edge of ``origins`` (``None``: all)."""
        ...

    def top_linked(self, limit: int = 10) -> list[tuple[str, str, int]]:
        """``(document id, path, linking documents)`` of the most linked-to documents."""
        ...

    def orphans(self) -> list[OrphanDocument]:
        """Documents with no resolved declared edge to or from another document."""
        ...

    def graph_sources(
        self, document_ids: Sequence[str] | None = None
    ) -> tuple[list[GraphDocument], list[GraphUnit]]:
        """What the edge builders read of documents (``None``: all) and their units (by
        document and ordinal)."""
        ...

    def first_units(self, document_ids: Sequence[str] | None = None) -> dict[str, str]:
        """``document id -> id of its first unit`` (``None``: every document)."""
        ...

    def unit_ids_of(self, document_ids: Sequence[str]) -> list[str]:
        """The unit ids of the given documents."""
        ...

    def features_of(self, document_ids: Sequence[str]) -> set[str]:
        """Every feature recorded for the given documents."""
        ...

    def holders(self, features: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        """``feature -> [(unit id, document id)]`` for the given features."""
        ...

    def unit_features(self, unit_ids: Sequence[str]) -> dict[str, set[str]]:
        """``unit id -> features``."""
        ...

    def feature_counts(self, features: Sequence[str]) -> dict[str, int]:
        """How many units carry each feature."""
        ...

    def documents_brief(self, document_ids: Sequence[str]) -> dict[str, DocumentBrief]:
        """Documents by id with their unit ids in order."""
        ...

    def documents_at_path(self, root_id: str, path: str) -> list[DocumentBrief]:
        """The documents indexed from one file, in order."""
        ...

    def unit_spans(self, document_id: str) -> list[UnitSpan]:
        """A document's units with their line spans, in order."""
        ...

    def ids_with_prefix(self, prefix: str, limit: int = 2) -> list[str]:
        """Unit ids, then document ids, starting with ``prefix`` (``limit`` each)."""
        ...

class Store(Protocol):
    """One index: documents, units, links, runs; ``vectors`` and ``edges`` beside them."""

    path: str

    # --- lifecycle -------------------------------------------------------------------
    @property
    def schema_version(self) -> int:
        """The schema version of the index."""
        ...

    def close(self) -> None:
        """Close every connection (idempotent)."""
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction (nested: a savepoint); rolled back if the block raises."""
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

    def file_states(self, root_id: str) -> dict[str, FileState]:
        """Known files of a root: ``relpath -> FileState``."""
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

    def search_text(
        self,
        query: TextQuery,
        *,
        limit: int,
        weights: Mapping[str, float],
        include_alternates: bool = False,
    ) -> list[tuple[str, float]]:
        """``(unit id, score)`` best first for a parsed query: any positive term
        matches (BM25-like score, higher is better), negative terms exclude, filters
        restrict; no positive term: filter-only (score 0, path then outline order).
        ``weights``: per-field weights ``title``, ``outline_path``, ``tags``, ``body``.

        Raises:
            QueryError: ``limit`` < 1 or an unknown filter field. StoreError: backend.
        """
        ...

    def text_query_syntax(self, query: TextQuery) -> str | None:
        """The backend's rendering of ``query`` (for explanations), ``None`` when it
        has no positive term."""
        ...

    def filter_units(
        self, unit_ids: Sequence[str], filters: Sequence[Filter], *, include_alternates: bool
    ) -> list[str]:
        """The given existing unit ids that pass ``filters``, in the given order."""
        ...

    def filter_values(self, field: str) -> list[str]:
        """Values of ``format``, ``kind``, ``todo`` or ``role`` present in the index.

        Raises:
            QueryError: another field.
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

    def neighbours(self, document_id: str, ordinal: int, kind: str) -> list[ContextUnit]:
        """The canonical units of ``kind`` just before and after ``ordinal``."""
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

    def integrity_check(self) -> list[str]:
        """Problems of the index, one sentence each (empty when healthy)."""
        ...
