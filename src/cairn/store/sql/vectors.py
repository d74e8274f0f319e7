"""Chunks and their vectors, in the same database as the units (DESIGN.md, Storage).

Tables (the ``vectors`` component, created with ``store.ensure_component``):

* ``chunks`` — one row per chunk of a unit (read and written by
  :class:`cairn.store.sql.chunks.ChunkRows`): character offsets of ``text`` and ``window``
  in the unit body, token count, the chunking profile, and ``hash``, the content hash
  of the exact text embedded (metadata prefix + window). ``unit_id`` references
  ``units(id) ON DELETE CASCADE``: when the store deletes a unit (file changed, moved or
  removed), its chunks go with it.
* ``embeddings`` — the vectors, keyed by ``(space, hash)``: ``space`` is the embedder's
  fingerprint, ``vector`` a BLOB of ``dim`` little-endian values, float16 (or float32
  for a space made before float16 storage: ``vector_spaces.dtype``); read back as
  float32. Being keyed by
  content, not by unit, this table is also the embedding cache: a renamed or re-indexed
  unit whose text did not change finds its vector here, and another model writes into
  its own space. :meth:`SQLiteVectors.prune` removes vectors no chunk uses any more (run
  after each embedding pass), so a deleted note leaves no vector behind.
* ``vector_spaces`` — the spaces seen: name, dimension and ``dtype`` (``f2``/``f4``).
* ``vector_meta`` — ``generation`` (bumped by triggers on every chunk or vector insert or
  delete, so in-memory matrices know when they are stale) and ``chunker`` (the chunking
  settings' signature; chunks made under other settings are redone).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Collection, Iterable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from cairn.errors import StoreError
from cairn.model import VectorMatrix, VectorSpace
from cairn.store.indexes import NearChunk
from cairn.store.sql.base import SQLBase
from cairn.store.sql.chunks import ChunkRows
from cairn.store.sql.waiting import WaitingCounts

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        unit_id TEXT NOT NULL REFERENCES units(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        start INTEGER NOT NULL,
        end INTEGER NOT NULL,
        window_start INTEGER NOT NULL,
        window_end INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        profile TEXT NOT NULL,
        hash TEXT NOT NULL,
        UNIQUE (unit_id, ordinal)
    );
    CREATE INDEX chunks_hash ON chunks(hash);
    CREATE TABLE embeddings (
        space TEXT NOT NULL,
        hash TEXT NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (space, hash)
    ) WITHOUT ROWID;
    CREATE TABLE vector_spaces (
        space TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        dim INTEGER NOT NULL,
        created TEXT NOT NULL
    );
    CREATE TABLE vector_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO vector_meta(key, value) VALUES ('generation', '0');
    INSERT INTO vector_meta(key, value) VALUES ('chunker', '')
    """,
    # 2: vectors of new spaces are float16 (half the bytes; cosine ranking unchanged);
    # a space made before keeps float32 (``dtype``).
    # The table gets rowids: a WITHOUT ROWID row longer than about 1 KB (a float32
    # vector of 256 or more values) spills into an overflow page of its own, 4 KB per
    # vector; a rowid table keeps such rows in its pages. Existing rows are copied over.
    """
    ALTER TABLE vector_spaces ADD COLUMN dtype TEXT NOT NULL DEFAULT 'f4';
    CREATE TABLE embeddings_v2 (
        space TEXT NOT NULL,
        hash TEXT NOT NULL,
        vector BLOB NOT NULL,
        UNIQUE (space, hash)
    );
    INSERT INTO embeddings_v2(space, hash, vector) SELECT space, hash, vector FROM embeddings;
    DROP TABLE embeddings;
    ALTER TABLE embeddings_v2 RENAME TO embeddings
    """,
)

NEW_SPACE_DTYPE = "f2"
"""How the vectors of a new space are stored: ``f2`` (little-endian float16); spaces of
an index made before version 2 of this component keep ``f4`` (float32)."""

_DTYPES = {"f2": ("<f2", 2), "f4": ("<f4", 4)}

# Trigger bodies hold ';', which ensure_component's statement splitter would cut, so
# they are created one statement at a time (idempotent).
_TRIGGERS = tuple(
    f"CREATE TRIGGER IF NOT EXISTS {name} AFTER {event} ON {table} BEGIN "
    "UPDATE vector_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'; END"
    for name, event, table in (
        ("chunks_gen_ins", "INSERT", "chunks"),
        ("chunks_gen_del", "DELETE", "chunks"),
        ("embeddings_gen_ins", "INSERT", "embeddings"),
        ("embeddings_gen_del", "DELETE", "embeddings"),
    )
)


class SQLiteVectors(ChunkRows, WaitingCounts):
    """The :class:`cairn.store.base.VectorIndex` of a SQLite store (``store.vectors``).

    Args:
        db: the store's connection; ``ensure_component`` its component migrator (the
            ``vectors`` tables are created or migrated here).

    Raises:
        StoreError: the tables cannot be created (e.g. a newer component version).
    """

    def __init__(self, store: SQLBase) -> None:
        self._store = store
        self._init_waiting()
        store.ensure_component("vectors", MIGRATIONS)
        try:
            for sql in _TRIGGERS:
                self.db.execute(sql)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot create vector triggers: {exc}") from exc

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection of the store (never one captured at construction:
        a write from another thread must run inside that thread's transaction)."""
        return self._store.db

    # --- bookkeeping ------------------------------------------------------------------
    def generation(self) -> int:
        """A counter that changes whenever a chunk or vector is added or removed."""
        row = self.db.execute("SELECT value FROM vector_meta WHERE key='generation'").fetchone()
        return int(row[0]) if row else 0

    def meta(self, key: str) -> str | None:
        """A bookkeeping value of the vector tables (``None`` when never set)."""
        row = self.db.execute("SELECT value FROM vector_meta WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else None

    def set_meta(self, key: str, value: str) -> None:
        """Set a bookkeeping value. Call inside a transaction."""
        self.db.execute(
            "INSERT INTO vector_meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )

    def ensure_space(self, space: str, name: str, dim: int) -> None:
        """Record an embedding space (idempotent).

        Raises:
            StoreError: the space is known with another dimension.
        """
        row = self.db.execute("SELECT dim FROM vector_spaces WHERE space=?", (space,)).fetchone()
        if row is not None:
            if int(row[0]) != dim:
                raise StoreError(f"embedding space {space} has dim {row[0]}, not {dim}")
            return
        self.db.execute(
            "INSERT INTO vector_spaces(space, name, dim, created, dtype) VALUES (?,?,?,?,?)",
            (
                space,
                name,
                dim,
                time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                NEW_SPACE_DTYPE,
            ),
        )

    def _dtype(self, space: str) -> tuple[str, int]:
        """``(numpy dtype, bytes per value)`` of a space's stored vectors."""
        row = self.db.execute(
            "SELECT dtype FROM vector_spaces WHERE space=?", (space,)
        ).fetchone()
        return _DTYPES.get(str(row[0]) if row else NEW_SPACE_DTYPE, _DTYPES["f4"])

    def spaces(self) -> list[VectorSpace]:
        """Known spaces with their vector counts, oldest first."""
        rows = self.db.execute(
            "SELECT s.space, s.name, s.dim, (SELECT count(*) FROM embeddings e "
            "WHERE e.space = s.space) FROM vector_spaces s ORDER BY s.created"
        ).fetchall()
        return [VectorSpace(str(r[0]), str(r[1]), int(r[2]), int(r[3])) for r in rows]

    # --- vectors ----------------------------------------------------------------------
    def has_vectors(self, space: str, hashes: Sequence[str]) -> set[str]:
        """The subset of ``hashes`` that already have a vector in ``space``."""
        found: set[str] = set()
        uniq = list(dict.fromkeys(hashes))
        for i in range(0, len(uniq), 500):
            part = uniq[i : i + 500]
            q = ",".join("?" * len(part))
            found.update(
                r[0]
                for r in self.db.execute(
                    f"SELECT hash FROM embeddings WHERE space=? AND hash IN ({q})", [space, *part]
                )
            )
        return found

    def expect_vectors(self, space: str, count: int) -> None:
        """Nothing to prepare on SQLite (exact search; no index to maintain)."""

    def put_vectors(self, space: str, items: Iterable[tuple[str, npt.NDArray[np.float32]]]) -> int:
        """Store ``(hash, vector)`` pairs in ``space`` (existing ones are kept).

        Call inside a transaction. Returns the number of pairs given.
        """
        import numpy as np

        dtype = self._dtype(space)[0]
        rows = [(space, h, np.asarray(v, dtype=dtype).tobytes()) for h, v in items]
        self.db.executemany(
            "INSERT OR IGNORE INTO embeddings(space, hash, vector) VALUES (?,?,?)", rows
        )
        return len(rows)

    def vector(self, space: str, hash_: str) -> npt.NDArray[np.float32] | None:
        """One stored vector ``float32[dim]``, or ``None``."""
        import numpy as np

        row = self.db.execute(
            "SELECT vector FROM embeddings WHERE space=? AND hash=?", (space, hash_)
        ).fetchone()
        if row is None:
            return None
        return np.frombuffer(row[0], dtype=self._dtype(space)[0]).astype(np.float32)

    def prune(self) -> int:
        """Delete vectors (of every space) whose text no live chunk uses; returns rows.

        Call inside a transaction.
        """
        cur = self.db.execute(
            "DELETE FROM embeddings WHERE NOT EXISTS "
            "(SELECT 1 FROM chunks c WHERE c.hash = embeddings.hash)"
        )
        return int(cur.rowcount or 0)

    def drop_space(self, space: str) -> int:
        """Forget a space and its vectors; returns vectors removed. Call in a transaction."""
        from cairn.store.sql.matrix import DROPPED_AT

        cur = self.db.execute("DELETE FROM embeddings WHERE space=?", (space,))
        self.db.execute("DELETE FROM vector_spaces WHERE space=?", (space,))
        self.set_meta(DROPPED_AT, str(self.generation()))  # matrices older than it: reload
        return int(cur.rowcount or 0)

    def matrix(self, space: str) -> VectorMatrix:
        """Load every live chunk vector of ``space`` (see :class:`VectorMatrix`; with
        its ``chunk_ids``, so :meth:`matrix_since` can patch it later)."""
        from cairn.store.sql.matrix import load_matrix

        dim, dtype = self._shape(space)
        return load_matrix(self.db, space, dim, dtype)

    def matrix_since(self, space: str, old: VectorMatrix | None) -> VectorMatrix:
        """The current :meth:`matrix`, made from ``old`` (a matrix of ``space`` this
        index returned before) by dropping the rows of chunks gone and reading only the
        chunks that got a vector since (:func:`cairn.store.sql.matrix.patch_matrix`);
        a full load when there is no ``old`` or a patch would read much of it anyway.
        ``old`` itself when the generation has not moved."""
        from cairn.store.sql.matrix import load_matrix, patch_matrix

        dim, dtype = self._shape(space)
        if old is not None:
            patched = patch_matrix(self.db, old, space, dim, dtype)
            if patched is not None:
                return patched
        return load_matrix(self.db, space, dim, dtype)

    def _shape(self, space: str) -> tuple[int, str]:
        """``(dimension, numpy dtype)`` of a space's stored vectors (0 when unknown)."""
        row = self.db.execute("SELECT dim FROM vector_spaces WHERE space=?", (space,)).fetchone()
        return (int(row[0]) if row else 0), self._dtype(space)[0]

    # --- nearest neighbours (exact, over the in-process matrix) ------------------------
    def indexed(self, space: str) -> bool:
        """``False``: SQLite has no vector index; the search service keeps the matrix
        in memory (:mod:`cairn.search.dense`), which is faster than :meth:`nearest`
        loading it per call."""
        return False

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
        """Exact cosine top-``k`` units over :meth:`matrix` (see
        :meth:`cairn.store.indexes.VectorIndex.nearest`)."""
        from cairn.store.sql.nearest import exact_nearest

        return exact_nearest(self.matrix(space), vector, k, candidates, excluded=excluded,
                             include_alternates=include_alternates)

    def similarity(
        self, space: str, vector: npt.NDArray[np.float32], unit_ids: Sequence[str]
    ) -> dict[str, float]:
        """Best-chunk cosine per given unit, over :meth:`matrix`."""
        from cairn.store.sql.nearest import best_similarity

        return best_similarity(self.matrix(space), vector, unit_ids)

    def size(self, space: str) -> int:
        """Live chunk vectors in ``space``."""
        row = self.db.execute(
            "SELECT count(*) FROM chunks c JOIN embeddings e ON e.space = ? AND e.hash = c.hash",
            (space,)).fetchone()
        return int(row[0])

    def counts(self) -> dict[str, int]:
        """Rows in ``chunks`` and ``embeddings``: ``{"chunks": n, "vectors": n}``."""
        return {
            "chunks": int(self.db.execute("SELECT count(*) FROM chunks").fetchone()[0]),
            "vectors": int(self.db.execute("SELECT count(*) FROM embeddings").fetchone()[0]),
        }

    def integrity_check(self, space: str | None = None) -> list[str]:
        """Problems of the chunk and vector tables (``[]`` = fine): chunks without a
        unit, vectors whose size does not match their space's dimension, and (with
        ``space``) live chunks that have no vector in that space."""
        problems: list[str] = []
        orphans = self.db.execute(
            "SELECT count(*) FROM chunks c WHERE NOT EXISTS "
            "(SELECT 1 FROM units u WHERE u.id = c.unit_id)"
        ).fetchone()[0]
        if orphans:
            problems.append(f"{orphans} chunks without a unit")
        for sp, dim, dtype, bad in self.db.execute(
            "SELECT s.space, s.dim, s.dtype, (SELECT count(*) FROM embeddings e "
            "WHERE e.space = s.space "
            "AND length(e.vector) != (CASE s.dtype WHEN 'f2' THEN 2 ELSE 4 END) * s.dim) "
            "FROM vector_spaces s"
        ):
            if bad:
                kind = "float16" if dtype == "f2" else "float32"
                problems.append(f"{bad} vectors in space {sp} are not {dim} {kind} values")
        if space is not None:
            missing = self.missing_vectors(space)
            if missing:
                problems.append(
                    f"{missing} chunks have no vector in space {space} (run cairn index)"
                )
        return problems

    def any_vectors(self) -> bool:
        """Whether any vector is stored (cheap)."""
        return self.db.execute("SELECT 1 FROM embeddings LIMIT 1").fetchone() is not None


class VectorsMixin(SQLBase):
    """Gives a store its ``vectors`` (created on first use)."""

    @cached_property
    def vectors(self) -> SQLiteVectors:
        """The chunk and vector tables (:class:`cairn.store.base.VectorIndex`)."""
        return SQLiteVectors(self)
