"""Vectors of the PostgreSQL store in pgvector, searched by the server.

The shared tables (``chunks``, ``embeddings`` as ``bytea``, ``vector_spaces``) stay as
they are on SQLite, so ``cairn store copy`` moves them unchanged; beside them
``pg_vectors(space, hash, v vector)`` holds every embedding as a pgvector value (written
with the ``bytea`` row, deleted with it by a statement trigger, filled from
``embeddings`` after a copy or when a database made before it is opened).

A space with at least :data:`INDEX_FROM` live vectors gets an HNSW index of its own
(inner product on unit vectors = cosine; one partial expression index per space, cast to
its dimension, as pgvector recommends for tables holding several dimensions), built
when an embedding pass ends (:meth:`PostgresVectors.prune`) and maintained by the
server from then on — except that a pass adding many vectors drops it first and builds
it again at its end (:data:`BULK_FROM`). Below that size — and whenever a search is
restricted to a set of candidate units (filters) — search is exact: the in-process matrix of
:mod:`cairn.search.dense` for a small space (:meth:`PostgresVectors.indexed` is false),
an exact ``ORDER BY`` over the candidates' chunks otherwise. Without the ``vector``
extension (not installed on the server, or no right to create it) everything stays
exact in process, as on SQLite.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from cairn.store.indexes import NearChunk
from cairn.store.sql.base import SQLBase
from cairn.store.sql.vectors import SQLiteVectors, VectorsMixin

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

INDEX_FROM = 20_000
"""Live vectors from which a space is searched through its HNSW index (below it exact
search in process takes a few milliseconds: ``bench/scale.py``)."""

BUILD_MEMORY_MIN_MB = 512
"""The least ``maintenance_work_mem`` while an HNSW index is built (at 256 float32
dimensions about 1.3 KB per vector with its graph); a bigger space gets what its graph
needs (:func:`build_memory_mb`), up to :data:`BUILD_MEMORY_MAX_MB`."""

BUILD_MEMORY_MAX_MB = 4096


def build_memory_mb(vectors: int, dim: int) -> int:
    """``maintenance_work_mem`` (MB) for building the HNSW graph of ``vectors`` vectors
    of ``dim`` float32 dimensions in memory: 4 bytes a dimension plus about 300 bytes of
    graph a vector, 20% spare; at least :data:`BUILD_MEMORY_MIN_MB`, at most
    :data:`BUILD_MEMORY_MAX_MB` (pgvector builds far slower once the graph spills to
    disk)."""
    need = vectors * (4 * dim + 300) * 1.2 / 2**20
    return int(min(BUILD_MEMORY_MAX_MB, max(BUILD_MEMORY_MIN_MB, need)))


BULK_FROM = 10_000
"""A pass adding at least this many vectors to a space that has its HNSW index — and
at least half as many as the space holds — drops the index first and builds it again
when the pass ends (:meth:`PostgresVectors.expect_vectors`): pgvector builds a graph
from sorted rows in memory several times faster than it inserts the same vectors one
by one into an index on disk, each insert logged; as the postings' bulk rebuild does."""

EF_SEARCH = 100
"""HNSW candidate list length per search (pgvector's ``hnsw.ef_search``; raised to
the number of chunks asked for when that is larger, up to 1000)."""

OVERFETCH = 2
"""Chunks asked of the HNSW index per unit wanted (a unit's chunks collapse to its best,
and alternate units are dropped after the index is read; a short answer asks again for
four times as many). A larger factor raises ``ef_search`` with it (hybrid asks for
100 units), which slows ``nearest`` on a large index for a top 10 that barely changes:
``python bench/search_parts.py URL --overfetch 2,4`` compares them."""

_SETUP = (
    "CREATE TABLE IF NOT EXISTS pg_vectors (space TEXT COLLATE \"C\" NOT NULL, "
    "hash TEXT COLLATE \"C\" NOT NULL, v vector NOT NULL, PRIMARY KEY (space, hash))",
    """CREATE OR REPLACE FUNCTION cairn_pg_vectors_del() RETURNS trigger LANGUAGE plpgsql
    AS $$ BEGIN DELETE FROM pg_vectors p USING old_rows o
    WHERE p.space = o.space AND p.hash = o.hash; RETURN NULL; END $$""",
    "CREATE OR REPLACE TRIGGER pg_vectors_del AFTER DELETE ON embeddings REFERENCING "
    "OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cairn_pg_vectors_del()",
)


def _literal(vec: Any) -> str:
    """A vector as pgvector's text form ``[x,y,…]``."""
    return "[" + ",".join(f"{float(x):.7g}" for x in vec) + "]"


class VectorValue:
    """A vector sent to the server in pgvector's binary form (dimension, a reserved
    zero, then big-endian float32 values): written as bytes by numpy, where the text
    form costs a Python float format per value — a third of a millisecond per vector,
    most of an embedding pass's time in the store."""

    __slots__ = ("data",)

    def __init__(self, vec: Any) -> None:
        import struct

        import numpy as np

        values = np.asarray(vec, dtype=">f4").reshape(-1)
        self.data = struct.pack(">HH", values.shape[0], 0) + values.tobytes()


def _send_binary_vectors(raw: Any) -> None:
    """Teach a connection to send :class:`VectorValue` as pgvector's binary form (once
    per connection: the type's oid is the database's)."""
    if getattr(raw, "_cairn_vectors", False):
        return
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    oid = int(raw.execute("SELECT 'vector'::regtype::oid").fetchone()[0])

    class _VectorDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj: Any) -> bytes:
            return bytes(obj.data)

    _VectorDumper.oid = oid
    raw.adapters.register_dumper(VectorValue, _VectorDumper)
    raw._cairn_vectors = True


def _quote(text: str) -> str:
    """``text`` as an SQL string literal (for a partial index's predicate)."""
    return "'" + text.replace("'", "''") + "'"


class PostgresVectors(SQLiteVectors):
    """:class:`cairn.store.sql.vectors.SQLiteVectors` with pgvector search (see the
    module doc); ``store.vectors`` of a :class:`cairn.store.postgres.PostgresStore`."""

    def __init__(self, store: SQLBase) -> None:
        super().__init__(store)
        self.index_from = INDEX_FROM
        self.bulk_from = BULK_FROM
        self._sizes: dict[str, tuple[int, int]] = {}
        self._with_index: set[str] = set()
        self._dims: dict[str, int] = {}
        self.pgvector = self._setup()

    @property
    def _raw(self) -> Any:
        """This thread's ``psycopg`` connection (statements not to be translated)."""
        return cast(Any, self._store.db).raw

    def _setup(self) -> bool:
        """Create the extension and ``pg_vectors`` (idempotent); ``False`` when the
        server has no pgvector or refuses it."""
        from cairn.errors import StoreError

        try:
            with self._store.transaction():
                self._raw.execute("CREATE EXTENSION IF NOT EXISTS vector")
                fresh = self._raw.execute("SELECT to_regclass('pg_vectors') IS NULL").fetchone()[0]
                for stmt in _SETUP:
                    self._raw.execute(stmt)
        except StoreError:
            return False
        except Exception:  # psycopg errors of the extension (not installed, no right)
            return False
        if fresh:
            self.fill()
        return True

    def fill(self) -> int:
        """Add to ``pg_vectors`` every embedding it lacks (after ``cairn store copy``,
        or for a database made before it); returns rows added."""
        import numpy as np

        added = 0
        with self._store.transaction():
            rows = self.db.execute(
                "SELECT e.space, e.hash, e.vector, s.dtype FROM embeddings e "
                "JOIN vector_spaces s ON s.space = e.space WHERE NOT EXISTS (SELECT 1 FROM "
                "pg_vectors p WHERE p.space = e.space AND p.hash = e.hash)").fetchall()
            batch = []
            for space, hash_, blob, dtype in rows:
                vec = np.frombuffer(bytes(blob), dtype="<f2" if dtype == "f2" else "<f4")
                batch.append((space, hash_, VectorValue(vec)))
            self._insert(batch)
            added = len(batch)
        return added

    def _insert(self, rows: Sequence[tuple[str, str, VectorValue]]) -> None:
        if not rows:
            return
        _send_binary_vectors(self._raw)
        self.db.executemany(
            "INSERT INTO pg_vectors(space, hash, v) VALUES (?, ?, ?::vector) "
            "ON CONFLICT DO NOTHING", rows)

    def put_vectors(self, space: str, items: Iterable[tuple[str, npt.NDArray[np.float32]]]) -> int:
        """Store ``(hash, vector)`` pairs (the ``bytea`` rows and their pgvector
        copies); in a transaction. Returns the number given."""
        pairs = list(items)
        n = super().put_vectors(space, pairs)
        if self.pgvector and pairs:
            import numpy as np

            dtype = self._dtype(space)[0]  # the stored precision, so both copies agree
            self._insert([(space, h, VectorValue(np.asarray(v, dtype=dtype))) for h, v in pairs])
        return n

    def expect_vectors(self, space: str, count: int) -> None:
        """Drop ``space``'s HNSW index before a bulk load (see :data:`BULK_FROM`);
        :meth:`prune`, at the end of the pass, builds it again. Searches meanwhile are
        exact (slower, the same hits). In a transaction."""
        if not self.pgvector or count < self.bulk_from or not self._has_index(space):
            return
        if count * 2 < super().size(space):
            return
        self._raw.execute(f"DROP INDEX IF EXISTS {self._index_name(space)}")
        self._with_index.discard(space)

    def prune(self) -> int:
        """Delete unused vectors (see the SQLite store), then give every space that
        reached :attr:`index_from` live vectors its HNSW index; in a transaction."""
        n = super().prune()
        if self.pgvector:
            for sp in self.spaces():
                if sp.vectors >= self.index_from:
                    self._ensure_index(sp.space, sp.dim, sp.vectors)
        return n

    def _index_name(self, space: str) -> str:
        import hashlib

        return "pg_vectors_hnsw_" + hashlib.sha256(space.encode()).hexdigest()[:12]

    def _has_index(self, space: str) -> bool:
        """Whether ``space`` has its HNSW index (a yes is remembered: an index goes
        only with :meth:`drop_space`)."""
        if space in self._with_index:
            return True
        row = self.db.execute("SELECT to_regclass(?) IS NOT NULL",
                              (self._index_name(space),)).fetchone()
        if row[0]:
            self._with_index.add(space)
        return bool(row[0])

    def _ensure_index(self, space: str, dim: int, vectors: int = 0) -> None:
        """Build ``space``'s HNSW index (over about ``vectors`` vectors) unless it exists."""
        if self._has_index(space):
            return
        # the graph is built in memory (pgvector builds far slower once it spills)
        mb = build_memory_mb(vectors, dim)
        self._raw.execute(f"SET LOCAL maintenance_work_mem = '{mb}MB'")
        self._raw.execute(
            f"CREATE INDEX IF NOT EXISTS {self._index_name(space)} ON pg_vectors USING hnsw "
            f"((v::vector({int(dim)})) vector_ip_ops) WHERE space = {_quote(space)}")

    def drop_space(self, space: str) -> int:
        """Forget a space, its vectors and its index; in a transaction."""
        n = super().drop_space(space)
        self._with_index.discard(space)
        self._dims.pop(space, None)
        if self.pgvector:
            self._raw.execute(f"DROP INDEX IF EXISTS {self._index_name(space)}")
        return n

    def size(self, space: str) -> int:
        """Live chunk vectors in ``space`` (cached until the vector generation moves)."""
        gen = self.generation()
        hit = self._sizes.get(space)
        if hit is not None and hit[0] == gen:
            return hit[1]
        n = super().size(space)
        self._sizes[space] = (gen, n)
        return n

    def indexed(self, space: str) -> bool:
        """Whether ``space`` is searched by the server: pgvector is there and the space
        has its HNSW index (it has :attr:`index_from` vectors or more)."""
        return self.pgvector and self.size(space) >= self.index_from and self._has_index(space)

    def _dim(self, space: str) -> int:
        """The dimension of ``space``'s vectors (remembered: a space's model, named by
        its fingerprint, fixes it; forgotten with :meth:`drop_space`)."""
        dim = self._dims.get(space)
        if dim is None:
            row = self.db.execute("SELECT dim FROM vector_spaces WHERE space=?",
                                  (space,)).fetchone()
            if not row:
                return 0
            dim = self._dims[space] = int(row[0])
        return dim

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
        """The ``k`` best distinct live units (see
        :meth:`cairn.store.indexes.VectorIndex.nearest`): through the space's HNSW
        index (approximate), or exactly over the chunks of ``candidates``; without
        pgvector, exactly over the in-process matrix."""
        if not self.pgvector:
            return super().nearest(space, vector, k, candidates, excluded=excluded,
                                   include_alternates=include_alternates)
        if k <= 0:
            return []
        dim = self._dim(space)
        q = _literal(vector)
        cond = ["u.alternate = 0"] if not include_alternates else []
        args: list[Any] = []
        if excluded:
            cond.append("NOT (c.unit_id = ANY(?))")
            args.append(list(excluded))
        where = "".join(f" AND {c}" for c in cond)
        if candidates is not None:
            sql = (f"SELECT c.unit_id, 1 - (p.v::vector({dim}) <=> ?::vector({dim})) AS sim, "
                   "c.ordinal, c.start, c.end FROM chunks c JOIN pg_vectors p ON "
                   "p.space = ? AND p.hash = c.hash JOIN units u ON u.id = c.unit_id "
                   f"WHERE c.unit_id = ANY(?){where} ORDER BY sim DESC, c.unit_id, c.ordinal")
            rows = self.db.execute(sql, [q, space, list(candidates), *args]).fetchall()
            return _best_per_unit(rows, k)
        want = max(OVERFETCH * k, k + 32)
        while True:
            ef = min(1000, max(EF_SEARCH, want))
            self._raw.execute(f"SET hnsw.ef_search = {ef}")
            sql = (f"WITH near AS (SELECT hash, p.v::vector({dim}) <#> ?::vector({dim}) AS d "
                   f"FROM pg_vectors p WHERE space = {_quote(space)} "
                   f"ORDER BY p.v::vector({dim}) <#> ?::vector({dim}) LIMIT ?) "
                   "SELECT c.unit_id, -n.d AS sim, c.ordinal, c.start, c.end FROM near n "
                   "JOIN chunks c ON c.hash = n.hash JOIN units u ON u.id = c.unit_id "
                   f"WHERE true{where} ORDER BY n.d, c.unit_id, c.ordinal")
            rows = self.db.execute(sql, [q, q, want, *args]).fetchall()
            out = _best_per_unit(rows, k)
            if len(out) >= k or want >= min(1000, self.size(space)):
                return out
            want = min(1000, want * 4)

    def similarity(
        self, space: str, vector: npt.NDArray[np.float32], unit_ids: Sequence[str]
    ) -> dict[str, float]:
        """Best-chunk cosine per given unit, computed by the server."""
        if not self.pgvector:
            return super().similarity(space, vector, unit_ids)
        if not unit_ids:
            return {}
        dim = self._dim(space)
        rows = self.db.execute(
            f"SELECT c.unit_id, max(1 - (p.v::vector({dim}) <=> ?::vector({dim}))) FROM chunks c "
            "JOIN pg_vectors p ON p.space = ? AND p.hash = c.hash "
            "WHERE c.unit_id = ANY(?) GROUP BY c.unit_id",
            [_literal(vector), space, list(unit_ids)]).fetchall()
        return {str(r[0]): float(r[1]) for r in rows}


def _best_per_unit(rows: Iterable[Sequence[Any]], k: int) -> list[NearChunk]:
    """The first (best) row of each unit, up to ``k`` units."""
    out: list[NearChunk] = []
    seen: set[str] = set()
    for r in rows:
        u = str(r[0])
        if u in seen:
            continue
        seen.add(u)
        out.append((u, float(r[1]), int(r[2]), int(r[3]), int(r[4])))
        if len(out) == k:
            break
    return out


class PostgresVectorsMixin(VectorsMixin):
    """Gives the PostgreSQL store its ``vectors`` (pgvector when the server has it)."""

    @cached_property
    def vectors(self) -> PostgresVectors:
        """The chunk and vector tables with pgvector search."""
        return PostgresVectors(self)


__all__ = ["EF_SEARCH", "INDEX_FROM", "PostgresVectors", "PostgresVectorsMixin"]
