"""Vector storage: new spaces hold float16 vectors in a rowid table (no overflow page
per vector); an index made with float32 vectors (component version 1) upgrades in
place and keeps reading them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from cairn.store import open_store
from cairn.store.sql.vectors import MIGRATIONS


def _unit_vectors(n: int, dim: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_new_space_is_float16_and_reads_back_close(tmp_path: Path) -> None:
    store = open_store(tmp_path / "i.db")
    vs = store.vectors
    vecs = _unit_vectors(50, 384)
    with store.transaction():
        vs.ensure_space("sp", "model", 384)
        vs.put_vectors("sp", ((f"h{i}", v) for i, v in enumerate(vecs)))
    got = vs.vector("sp", "h7")
    assert got is not None and got.dtype == np.float32
    assert np.max(np.abs(got - vecs[7])) < 1e-3
    # ranking by cosine is the same as with float32
    q = vecs[3]
    back = np.stack([vs.vector("sp", f"h{i}") for i in range(50)])  # type: ignore[misc]
    assert list(np.argsort(-(back @ q))[:10]) == list(np.argsort(-(vecs @ q))[:10])
    assert vs.integrity_check() == []
    store.close()
    con = sqlite3.connect(tmp_path / "i.db")
    sizes = {r[0] for r in con.execute("SELECT DISTINCT length(vector) FROM embeddings")}
    assert sizes == {384 * 2}
    con.close()


def test_float32_index_upgrades_in_place(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    open_store(db).close()  # the main schema, no vector tables yet
    con = sqlite3.connect(db)
    with con:  # the vectors component as version 1 left it
        con.execute(
            "CREATE TABLE IF NOT EXISTS components (name TEXT PRIMARY KEY, version INTEGER)"
        )
        for stmt in MIGRATIONS[0].split(";"):
            if stmt.strip():
                con.execute(stmt)
        con.execute(
            "INSERT INTO components(name, version) VALUES ('vectors', 1) "
            "ON CONFLICT(name) DO UPDATE SET version=1"
        )
        con.execute(
            "INSERT INTO vector_spaces(space, name, dim, created) VALUES ('old', 'm', 8, 'x')"
        )
        old = _unit_vectors(3, 8, seed=1)
        con.executemany(
            "INSERT INTO embeddings(space, hash, vector) VALUES ('old', ?, ?)",
            [(f"h{i}", v.astype("<f4").tobytes()) for i, v in enumerate(old)],
        )
    con.close()
    store = open_store(db)
    vs = store.vectors  # migrates
    got = vs.vector("old", "h1")
    assert got is not None and np.array_equal(got, old[1])  # float32 kept exactly
    assert vs.integrity_check() == []
    with store.transaction():
        vs.ensure_space("new", "m2", 8)
        vs.put_vectors("new", [("h1", old[1])])
        vs.put_vectors("old", [("h9", old[2])])  # an old space stays float32
    assert vs.integrity_check() == []
    assert {s.space: s.vectors for s in vs.spaces()} == {"old": 4, "new": 1}
    store.close()
    con = sqlite3.connect(db)
    lengths = dict(con.execute("SELECT space, max(length(vector)) FROM embeddings GROUP BY 1"))
    assert lengths == {"old": 32, "new": 16}
    con.close()
