"""The narrow store protocols: :class:`VectorIndex` (chunks and embeddings) and
:class:`EdgeIndex` (the graph tables), reached as ``store.vectors`` and ``store.edges``
(see :mod:`cairn.store.base` for the rules every backend follows)."""

from __future__ import annotations

from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from cairn.model import (
        Arc,
        Chunk,
        ChunkSource,
        DocumentBrief,
        Edge,
        GraphCounts,
        GraphDocument,
        GraphNode,
        GraphUnit,
        OrphanDocument,
        Stub,
        UnitShape,
        UnitSpan,
        VectorMatrix,
        VectorSpace,
    )


NearChunk = tuple[str, float, int, int, int]
"""A unit found by :meth:`VectorIndex.nearest`: ``(unit id, cosine, chunk ordinal,
start, end)`` (the chunk's offsets in the unit body)."""


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

    def unchunked_rowids(self, document_ids: Sequence[str] | None = None) -> array[int]:
        """Row ids of the units that get chunks but have none yet (optionally only of
        ``document_ids``), in index order (their text stays in the index)."""
        ...

    def chunk_sources(self, rowids: Sequence[int]) -> list[ChunkSource]:
        """The units of ``rowids`` as the chunker reads them, in that order (a deleted
        one left out); a page at a time."""
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

    def missing_texts(
        self, space: str, after: int = 0, limit: int = 1000, *, bodies: bool = True
    ) -> list[tuple[int, Chunk, ChunkSource]]:
        """A page of the distinct texts lacking a vector in ``space``: ``(chunk row id,
        chunk, unit)``, row ids above ``after``, in row id order, at most ``limit``
        (``bodies=False``: units without their bodies)."""
        ...

    def missing_vectors(self, space: str) -> int:
        """How many live chunks have no vector in ``space`` (cheap; all of them right
        after a model switch, so a no-change index run knows to embed)."""
        ...

    def waiting_units(self, space: str) -> int:
        """How many units semantic search in ``space`` cannot find yet: units that get
        chunks but have none, or have a chunk without a vector in ``space`` (0 once the
        embedding step is complete; the rest are found by keywords meanwhile)."""
        ...

    def record_waiting(self, space: str) -> int:
        """Count :meth:`waiting_units` now and, where the backend can, leave the count
        in the index for other processes while nothing changes (an index run's end;
        inside a write transaction). Returns the count."""
        ...

    def has_vectors(self, space: str, hashes: Sequence[str]) -> set[str]:
        """The subset of ``hashes`` with a vector in ``space``."""
        ...

    def put_vectors(self, space: str, items: Iterable[tuple[str, npt.NDArray[np.float32]]]) -> int:
        """Store ``(hash, float32[dim])`` pairs (existing kept); in a transaction.
        Returns the number given."""
        ...

    def expect_vectors(self, space: str, count: int) -> None:
        """A pass is about to store ``count`` new vectors in ``space``: the store may
        prepare for a bulk load (PostgreSQL drops the space's HNSW index when ``count``
        is large beside what it holds; :meth:`prune` builds it again). In a transaction."""
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

    def matrix_since(self, space: str, old: VectorMatrix | None) -> VectorMatrix:
        """The current :meth:`matrix` of ``space``, made from ``old`` (a matrix this
        index returned before, or ``None``) by reading only what changed since when the
        backend can (``old`` itself when nothing did); else a full :meth:`matrix`. Its
        live rows are those of :meth:`matrix`; it may keep rows of chunks gone, marked
        ``dead`` (which every search skips), rather than copy the others."""
        ...

    def indexed(self, space: str) -> bool:
        """Whether the backend answers :meth:`nearest` from a vector index of its own
        (pgvector's HNSW on PostgreSQL, once the space is large enough); ``False``
        means the caller is better served by an in-process matrix (:meth:`matrix`)."""
        ...

    def nearest(
        self,
        space: str,
        vector: npt.NDArray[np.float32],
        k: int,
        candidates: Collection[str] | None = None,
        *,
        excluded: Collection[str] = (),
        include_alternates: bool = False,
    ) -> list[NearChunk]:
        """The ``k`` best distinct live units for a unit query vector, best first: per
        unit its best chunk as ``(unit id, cosine, chunk ordinal, start, end)``.

        Args:
            candidates: only these unit ids (searched exactly); ``None`` = all.
            excluded: unit ids to leave out.
            include_alternates: also units off a conversation's canonical branch.
        """
        ...

    def similarity(
        self, space: str, vector: npt.NDArray[np.float32], unit_ids: Sequence[str]
    ) -> dict[str, float]:
        """Best-chunk cosine of ``vector`` for each given unit that has vectors."""
        ...

    def size(self, space: str) -> int:
        """Live chunk vectors in ``space``."""
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

    Structural edges (``parent``, ``next``, ``previous``) follow from the units: the
    index derives them when read (every read below includes them, with the ids
    :func:`cairn.graph.edges.edge_id` gives) and never stores them; :meth:`insert`
    drops given ones.
    """

    # --- edges, stubs, graph queries (graph owner) -----------------------------------
    def insert(self, edges: Iterable[Edge], run_id: str | None = None) -> int:
        """Insert or replace edges (same id → replaced); returns how many."""
        ...

    def delete_ids(self, ids: Sequence[str]) -> None:
        """Delete edges by id."""
        ...

    def bulk_load(self) -> AbstractContextManager[bool]:
        """A block writing many edges into an empty edge table (the backend may defer
        index maintenance to its end); yields whether the table was empty."""
        ...

    def delete_implicit_touching(self, unit_ids: Sequence[str], relation: str) -> None:
        """Delete implicit edges of ``relation`` with either end among ``unit_ids``."""
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

    def document_ids(self) -> list[str]:
        """Every document id of the index, sorted."""
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
        document and ordinal); a unit's ``extra`` holds only its ``relations``."""
        ...

    def first_units(self, document_ids: Sequence[str] | None = None) -> dict[str, str]:
        """``document id -> id of its first unit`` (``None``: every document)."""
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
