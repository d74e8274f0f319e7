"""The ``chunks`` table: the pieces of a unit's text that are embedded.

A chunk is a window of a unit's body (character offsets into it), its token count, the
chunking profile and the hash of the exact text embedded; the vectors themselves live
in ``embeddings`` keyed by that hash (:mod:`cairn.store.sql.vectors`, which creates the
tables). :class:`ChunkRows` is the part of the vector index that reads and writes the
chunks and the units waiting for them.
"""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections.abc import Iterable, Sequence

from cairn.model import Chunk, ChunkSource
from cairn.store.sql.waiting import CHUNKABLE

_SOURCE_COLS = (
    "u.id, u.kind, u.title, u.outline_path, u.body, u.tags, u.inherited_tags, "
    "d.title AS doc_title, d.type AS doc_type, p.title AS before_title, "
    "p.body AS before_body"
)
_BEFORE = (
    " LEFT JOIN units p ON u.kind = 'message' AND p.document_id = u.document_id "
    "AND p.ordinal = u.ordinal - 1 AND p.kind = 'message' "
)
"""Joins a chat message's previous turn (``p``) for :data:`_SOURCE_COLS`."""
PAGE = 500
"""Units read at once by :meth:`ChunkRows.chunk_sources` (their text is held until
they are chunked)."""
_CHUNK_COLS = (
    "c.unit_id, c.ordinal, c.start, c.end, c.window_start, c.window_end, c.tokens, "
    "c.profile, c.hash"
)


def _source(r: Sequence[object]) -> ChunkSource:
    """A unit as the chunker reads it, from a row of :data:`_SOURCE_COLS`."""
    own = json.loads(str(r[5] or "[]"))
    inherited = json.loads(str(r[6] or "[]"))
    return ChunkSource(
        unit_id=str(r[0]),
        kind=str(r[1]),
        title=str(r[2] or ""),
        outline_path=tuple(json.loads(str(r[3] or "[]"))),
        body=str(r[4] or ""),
        tags=tuple(dict.fromkeys([*own, *inherited])),
        doc_title=str(r[7] or ""),
        doc_type=None if r[8] is None else str(r[8]),
        before_title=str(r[9] or ""),
        before_body=str(r[10] or ""),
    )


def _chunk(r: Sequence[object]) -> Chunk:
    """A chunk from a row of :data:`_CHUNK_COLS`."""
    return Chunk(
        str(r[0]),
        int(r[1]),  # type: ignore[call-overload]
        int(r[2]),  # type: ignore[call-overload]
        int(r[3]),  # type: ignore[call-overload]
        int(r[4]),  # type: ignore[call-overload]
        int(r[5]),  # type: ignore[call-overload]
        int(r[6]),  # type: ignore[call-overload]
        str(r[7]),
        str(r[8]),
    )


class ChunkRows:
    """Mixin of :class:`cairn.store.sql.vectors.SQLiteVectors`: the chunk rows and the
    chunking settings they were made with. The host provides ``db`` (this thread's
    connection)."""

    @property
    def db(self) -> sqlite3.Connection:  # provided by the host
        raise NotImplementedError

    def chunker_signature(self) -> str:
        """The chunking settings' signature the stored chunks were made with."""
        row = self.db.execute("SELECT value FROM vector_meta WHERE key='chunker'").fetchone()
        return str(row[0]) if row else ""

    def reset_chunks(self, signature: str) -> None:
        """Delete every chunk (vectors stay cached) and record new chunking settings.

        Call inside a transaction.
        """
        self.db.execute("DELETE FROM chunks")
        self.db.execute(
            "INSERT INTO vector_meta(key, value) VALUES ('chunker', ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (signature,),
        )
    def has_unchunked(self) -> bool:
        """Whether any unit that gets chunks still lacks them (cheap: stops at the first).
        Blank preambles (the empty text before a file's first heading) never get any."""
        return bool(
            self.db.execute(
                "SELECT EXISTS (SELECT 1 FROM units u WHERE NOT EXISTS "
                "(SELECT 1 FROM chunks c WHERE c.unit_id = u.id) AND " + CHUNKABLE + ")"
            ).fetchone()[0]
        )

    def units_without_chunks(self, document_ids: Sequence[str] | None = None) -> list[ChunkSource]:
        """Units that get chunks but have none yet (optionally only of ``document_ids``),
        in index order. Holds every such unit's text at once: a large index reads them a
        page at a time (:meth:`unchunked_rowids`, :meth:`chunk_sources`)."""
        rowids = self.unchunked_rowids(document_ids)
        return [
            u for i in range(0, len(rowids), PAGE) for u in self.chunk_sources(rowids[i : i + PAGE])
        ]

    def unchunked_rowids(self, document_ids: Sequence[str] | None = None) -> array[int]:
        """The row ids of the units that get chunks but have none yet (optionally only of
        ``document_ids``), in index order: 8 bytes a unit, their text left in the index
        until :meth:`chunk_sources` reads a page of it."""
        # the units without chunks are found on the narrow index of unit ids, and only
        # those rows are read (scanning every unit row costs more on a large index)
        sql = (
            "SELECT u.rowid FROM units u WHERE u.rowid IN (SELECT x.rowid FROM units x "
            "WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.unit_id = x.id)) AND "
            + CHUNKABLE
        )
        out: array[int] = array("q")
        if document_ids is None:
            out.extend(int(r[0]) for r in self.db.execute(sql + " ORDER BY u.rowid"))
            return out
        ids = list(dict.fromkeys(document_ids))
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            q = ",".join("?" * len(part))
            out.extend(
                int(r[0])
                for r in self.db.execute(
                    sql + f" AND u.document_id IN ({q}) ORDER BY u.rowid", part
                )
            )
        return out

    def chunk_sources(self, rowids: Sequence[int]) -> list[ChunkSource]:
        """The units of ``rowids`` as the chunker reads them, in the order given (a unit
        deleted since is left out); at most a page (:data:`PAGE`) at a time."""
        if not rowids:
            return []
        q = ",".join("?" * len(rowids))
        rows = self.db.execute(
            f"SELECT u.rowid, {_SOURCE_COLS} FROM units u JOIN documents d "
            f"ON d.id = u.document_id{_BEFORE}WHERE u.rowid IN ({q})",
            list(rowids),
        ).fetchall()
        found = {int(r[0]): _source(r[1:]) for r in rows}
        return [found[r] for r in rowids if r in found]

    def add_chunks(self, chunks: Iterable[Chunk]) -> None:
        """Store chunks (replacing one with the same unit and ordinal). Call inside a
        transaction."""
        self.db.executemany(
            "INSERT OR REPLACE INTO chunks(unit_id, ordinal, start, end, window_start, "
            "window_end, tokens, profile, hash) VALUES (?,?,?,?,?,?,?,?,?)",
            (
                (
                    c.unit_id,
                    c.ordinal,
                    c.start,
                    c.end,
                    c.window_start,
                    c.window_end,
                    c.tokens,
                    c.profile,
                    c.hash,
                )
                for c in chunks
            ),
        )

    def chunks_of(self, unit_id: str) -> list[Chunk]:
        """A unit's chunks in order."""
        rows = self.db.execute(
            f"SELECT {_CHUNK_COLS} FROM chunks c WHERE c.unit_id=? ORDER BY c.ordinal",
            (unit_id,),
        ).fetchall()
        return [_chunk(r) for r in rows]

    def chunks_missing_vectors(self, space: str) -> list[tuple[Chunk, ChunkSource]]:
        """Live chunks with no vector in ``space``, each with its unit (the embedded
        text is the unit's prefix and ``body[window_start:window_end]``)."""
        rows = self.db.execute(
            f"SELECT {_CHUNK_COLS}, {_SOURCE_COLS} FROM chunks c "
            "JOIN units u ON u.id = c.unit_id JOIN documents d ON d.id = u.document_id"
            + _BEFORE
            + "WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.space = ? AND e.hash = c.hash) "
            "ORDER BY c.id",
            (space,),
        ).fetchall()
        return [(_chunk(r[:9]), _source(r[9:])) for r in rows]

    def missing_texts(
        self, space: str, after: int = 0, limit: int = 1000, *, bodies: bool = True
    ) -> list[tuple[int, Chunk, ChunkSource]]:
        """A page of the texts lacking a vector in ``space``: ``(chunk row id, chunk,
        unit)`` for the first live chunk of each such hash with a row id above
        ``after``, by row id, at most ``limit`` (the next page starts after the last
        one). Each text comes once however many chunks share it; ``bodies=False``
        leaves the units' bodies empty (the windows' lengths are known without them)."""
        cols = _SOURCE_COLS if bodies else _SOURCE_COLS.replace("u.body", "'' AS body")
        rows = self.db.execute(
            f"SELECT c.id, {_CHUNK_COLS}, {cols} FROM chunks c "
            "JOIN units u ON u.id = c.unit_id JOIN documents d ON d.id = u.document_id"
            + _BEFORE
            + "WHERE c.id > ? AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.space = ? "
            "AND e.hash = c.hash) AND c.id = (SELECT min(x.id) FROM chunks x "
            "WHERE x.hash = c.hash) ORDER BY c.id LIMIT ?",
            (after, space, limit),
        ).fetchall()
        return [(int(r[0]), _chunk(r[1:10]), _source(r[10:])) for r in rows]

    def missing_vectors(self, space: str) -> int:
        """How many live chunks have no vector in ``space`` (0 after a complete pass;
        every chunk right after a model switch)."""
        return int(
            self.db.execute(
                "SELECT count(*) FROM chunks c WHERE NOT EXISTS "
                "(SELECT 1 FROM embeddings e WHERE e.space = ? AND e.hash = c.hash)",
                (space,),
            ).fetchone()[0]
        )
