"""pgvector on the PostgreSQL backend: the HNSW path and the exact paths give the same
semantic and hybrid answers as SQLite's in-process matrix (real server, real model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.store.test_postgres_parity import _notes

from cairn.app import Cairn
from cairn.config import Config
from cairn.store import open_store, open_url

pytestmark = pytest.mark.postgres

QUERIES = ("watering plants in the morning", "travel to Portugal", "budget for hardware",
           "Japanese garden")


def _indexed_pair(tmp_path: Path, pg_url: str) -> tuple[Cairn, Cairn]:
    root = _notes(tmp_path)
    cfg = Config(db_path=tmp_path / "index.db", embed={"provider": "static"})
    lite = Cairn(cfg, store=open_store(tmp_path / "index.db"))
    pg = Cairn(cfg, store=open_url(pg_url))
    for c in (lite, pg):
        c.index([str(root)])
    return lite, pg


def test_hnsw_search_matches_the_matrix(tmp_path: Path, pg_url: str) -> None:
    lite, pg = _indexed_pair(tmp_path, pg_url)
    try:
        vectors = pg.store.vectors
        assert vectors.pgvector  # the pgserver wheel carries pgvector
        space = next(s.space for s in vectors.spaces())
        assert not vectors.indexed(space)  # small: searched exactly in process
        n = vectors.size(space)
        assert n == lite.store.vectors.size(space) > 0
        vectors.index_from = 1  # now large enough: the HNSW index is built
        with pg.store.transaction():
            vectors.prune()
        assert vectors.indexed(space)
        pg.search("warm up", mode="semantic")  # a new ranker sees the index
        for q in QUERIES:
            a = [(h.unit_id, round(h.score, 3)) for h in lite.search(q, mode="semantic").hits]
            b = [(h.unit_id, round(h.score, 3)) for h in pg.search(q, mode="semantic").hits]
            assert [u for u, _ in a] == [u for u, _ in b], q
            assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=2e-3), q
            ha = [h.unit_id for h in lite.search(q, mode="hybrid", limit=5).hits]
            hb = [h.unit_id for h in pg.search(q, mode="hybrid", limit=5).hits]
            assert set(ha) == set(hb), q
            # a filter restricts the candidates: exact search over their chunks
            fa = [h.unit_id for h in lite.search(f"path:vault/ {q}", mode="semantic").hits]
            fb = [h.unit_id for h in pg.search(f"path:vault/ {q}", mode="semantic").hits]
            assert fa == fb, q
        # the store's own answers agree with the exact matrix of SQLite
        qv = next(iter(lite.store.vectors.matrix(space).matrix))
        exact = lite.store.vectors.nearest(space, qv, 3)
        near = vectors.nearest(space, qv, 3)
        assert [h[0] for h in near] == [h[0] for h in exact]
        units = [h[0] for h in exact]
        sims = vectors.similarity(space, qv, units)
        assert sims == pytest.approx(lite.store.vectors.similarity(space, qv, units), abs=2e-3)
        # deleting a note deletes its pgvector rows with its embeddings
        (tmp_path / "notes" / "vault" / "Watering.md").unlink()
        pg.index([str(tmp_path / "notes")])
        left = pg.store.db.execute("SELECT count(*) FROM pg_vectors").fetchone()[0]
        assert left == pg.store.vectors.counts()["vectors"]
        assert all(h.title != "Mornings" for h in pg.search("watering", mode="semantic").hits)
    finally:
        lite.close()
        pg.close()


def test_copied_vectors_are_searchable_by_the_server(tmp_path: Path, pg_url: str) -> None:
    root = _notes(tmp_path)
    cfg = Config(db_path=tmp_path / "a.db", embed={"provider": "static"})
    with Cairn(cfg, store=open_store(tmp_path / "a.db")) as a:
        a.index([str(root)])
        want = [h.unit_id for h in a.search("morning watering", mode="semantic").hits]
        a.storage.copy(pg_url)
    with Cairn(cfg, store=open_url(pg_url)) as pg:
        vectors = pg.store.vectors
        n = pg.store.db.execute("SELECT count(*) FROM pg_vectors").fetchone()[0]
        assert n == vectors.counts()["vectors"] > 0
        vectors.index_from = 1
        with pg.store.transaction():
            vectors.prune()
        assert [h.unit_id for h in pg.search("morning watering", mode="semantic").hits] == want


def test_pgvector_copies_equal_the_stored_vectors(tmp_path: Path, pg_url: str) -> None:
    """Vectors go to the server in pgvector's binary form (written with put_vectors, and
    by fill() after a copy): each pgvector row equals its bytea row, value for value."""
    import numpy as np

    lite, pg = _indexed_pair(tmp_path, pg_url)
    try:
        vectors = pg.store.vectors
        raw = pg.store.db.raw  # type: ignore[attr-defined]
        raw.execute("DELETE FROM pg_vectors WHERE hash IN (SELECT hash FROM pg_vectors "
                    "ORDER BY hash LIMIT 3)")
        assert vectors.fill() == 3
        rows = raw.execute(
            "SELECT e.vector, s.dtype, p.v::text FROM embeddings e JOIN vector_spaces s "
            "ON s.space = e.space JOIN pg_vectors p ON p.space = e.space AND p.hash = e.hash"
        ).fetchall()
        assert len(rows) == sum(s.vectors for s in vectors.spaces()) > 3
        for blob, dtype, text in rows:
            stored = np.frombuffer(bytes(blob), dtype="<f2" if dtype == "f2" else "<f4")
            sent = np.array([float(x) for x in text.strip("[]").split(",")], dtype=np.float32)
            assert np.allclose(stored.astype(np.float32), sent, rtol=1e-6, atol=1e-7)
    finally:
        lite.close()
        pg.close()


def _index_oid(pg: Cairn, space: str) -> int | None:
    vectors: Any = pg.store.vectors
    row = pg.store.db.execute("SELECT to_regclass(?)::oid",
                              (vectors._index_name(space),)).fetchone()
    return int(row[0]) if row and row[0] is not None else None


def test_a_bulk_load_rebuilds_the_hnsw_index(tmp_path: Path, pg_url: str) -> None:
    """A pass adding many vectors beside those a space holds drops its HNSW index and
    builds it again at the end (a new index, the same answers); a pass adding a few
    leaves it in place and the server maintains it."""
    lite, pg = _indexed_pair(tmp_path, pg_url)
    try:
        vectors: Any = pg.store.vectors
        space = next(s.space for s in vectors.spaces())
        vectors.index_from = 1
        with pg.store.transaction():
            vectors.prune()
        first = _index_oid(pg, space)
        assert first is not None
        vectors.bulk_from = 1
        bulk = tmp_path / "notes" / "vault" / "more"
        bulk.mkdir()
        before = vectors.size(space)
        for i in range(before):  # as many new chunks as the space holds: a bulk load
            (bulk / f"n{i}.md").write_text(f"# Seedlings {i}\nSeedlings need light {i}.\n",
                                          encoding="utf-8")
        for c in (lite, pg):
            c.index([str(tmp_path / "notes")])
        assert vectors.size(space) >= 2 * before
        rebuilt = _index_oid(pg, space)
        assert rebuilt is not None and rebuilt != first  # dropped, then built again
        assert vectors.indexed(space)
        for q in (*QUERIES, "seedlings light"):
            a = [h.unit_id for h in lite.search(q, mode="semantic").hits]
            b = [h.unit_id for h in pg.search(q, mode="semantic").hits]
            assert a == b, q
        (bulk / "one.md").write_text("# Seedlings again\nA few more.\n", encoding="utf-8")
        pg.index([str(tmp_path / "notes")])
        assert _index_oid(pg, space) == rebuilt  # a small pass: kept and maintained
    finally:
        lite.close()
        pg.close()
