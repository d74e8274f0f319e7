"""The vector matrix patched after an index run equals a full load of it, and reads only
the chunks that got a vector since (``store.vectors.matrix_since``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.embed.base import Embedder
from cairn.ingest.embedding import embed_pass
from cairn.model import VectorMatrix

FIELDS = ("space", "generation", "unit_ids", "units", "ordinals", "starts", "ends",
          "alternate", "matrix", "chunk_ids")


@pytest.fixture(scope="module")
def static() -> Embedder:
    pytest.importorskip("model2vec")
    from cairn.embed.static import StaticEmbedder

    return StaticEmbedder()


@pytest.fixture
def vault(tmp_path: Path, static: Embedder, monkeypatch: pytest.MonkeyPatch
          ) -> Iterator[tuple[Cairn, Path]]:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    root = tmp_path / "v"
    root.mkdir()
    for i in range(12):
        (root / f"n{i:02d}.md").write_text(
            f"# Note {i}\n\nCompost and bread, turned weekly {i}.\n\n## Part\n\nMore {i}.\n")
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([root])
        embed_pass(c.store, static)
        yield c, root


def same(a: VectorMatrix, b: VectorMatrix) -> None:
    import numpy as np

    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape and (x == y).all(), f
        else:
            assert x == y, f


def statements(c: Cairn, fn: Any) -> tuple[Any, list[str]]:
    """``fn()`` with the SQL this thread's connection ran meanwhile."""
    seen: list[str] = []
    db = c.store.db  # type: ignore[attr-defined]
    db.set_trace_callback(seen.append)
    try:
        return fn(), seen
    finally:
        db.set_trace_callback(None)


def test_a_patch_equals_a_full_load(vault: tuple[Cairn, Path], static: Embedder) -> None:
    c, root = vault
    vec = c.store.vectors
    space = static.fingerprint
    old = vec.matrix(space)
    assert old.chunk_ids is not None and len(old.chunk_ids) == old.matrix.shape[0] > 0
    (root / "n03.md").write_text("# Note 3\n\nRewritten: trams and custard tarts.\n")
    (root / "n07.md").unlink()
    (root / "new.md").write_text("# Lisbon\n\nThe ocean at dusk.\n\n## Food\n\nBacalhau.\n")
    c.index([root], embed=False)
    embed_pass(c.store, static)
    patched, sql = statements(c, lambda: vec.matrix_since(space, old))
    same(patched, vec.matrix(space))
    assert patched.generation == vec.generation() != old.generation
    reads = [s for s in sql if " IN (" in s]
    assert reads and all(s.count("?") <= 5 for s in reads), "only the new chunks are read"
    assert not [s for s in sql if "JOIN embeddings e ON" in s], "no join for the ids"
    assert "n07" not in " ".join(patched.unit_ids)
    assert vec.matrix_since(space, patched) is patched  # nothing moved since


def test_chunks_that_waited_for_a_vector_are_merged_in_order(
    vault: tuple[Cairn, Path], static: Embedder
) -> None:
    import numpy as np

    from cairn.ingest.embedding import chunk_pending

    c, root = vault
    vec = c.store.vectors
    space = static.fingerprint
    (root / "late.md").write_text("# Late\n\nChunked now, embedded later.\n")
    c.index([root], embed=False)
    chunk_pending(c.store, c._chunk_config())  # its chunk waits for a vector
    (root / "n01.md").write_text("# Note 1\n\nChanged after.\n")
    c.index([root], embed=False)
    chunk_pending(c.store, c._chunk_config())  # higher chunk ids, given vectors now
    n01 = [ch.hash for ch, src in vec.chunks_missing_vectors(space)
           if src.title == "Note 1"]
    assert n01
    with c.store.transaction():
        vec.put_vectors(space, [(h, np.full(static.dim, static.dim ** -0.5, np.float32))
                                for h in n01])
    old = vec.matrix(space)
    embed_pass(c.store, static)  # the late chunk gets its vector: a row in the middle
    patched = vec.matrix_since(space, old)
    same(patched, vec.matrix(space))
    added = sorted(set(patched.chunk_ids.tolist()) - set(old.chunk_ids.tolist()))
    assert added and added[0] < int(old.chunk_ids.max())


def test_a_patch_after_the_space_was_dropped_drops_the_rows_it_lost(
    vault: tuple[Cairn, Path], static: Embedder
) -> None:
    """``drop_space`` is the one way a live chunk loses its vector (and may get
    another back): a matrix loaded before it is loaded whole, one loaded after it is
    patched by the chunk ids alone again."""
    import numpy as np

    c, root = vault
    vec = c.store.vectors
    space = static.fingerprint
    old = vec.matrix(space)
    with c.store.transaction():
        vec.drop_space(space)
    missing = vec.chunks_missing_vectors(space)
    hashes = sorted({ch.hash for ch, _src in missing})
    assert len(hashes) > 4
    with c.store.transaction():  # a few vectors come back (a partial re-embedding)
        vec.ensure_space(space, static.name, static.dim)
        vec.put_vectors(space, [(h, np.full(static.dim, static.dim ** -0.5, np.float32))
                                for h in hashes[:3]])
    patched, sql = statements(c, lambda: vec.matrix_since(space, old))
    full = vec.matrix(space)
    same(patched, full)
    assert 0 < patched.matrix.shape[0] < old.matrix.shape[0]
    embed_pass(c.store, static)  # the rest come back too
    full = vec.matrix(space)
    (root / "n02.md").write_text("# Note 2\n\nAfter the drop: pears.\n")
    c.index([root], embed=False)
    embed_pass(c.store, static)
    again, sql = statements(c, lambda: vec.matrix_since(space, full))
    same(again, vec.matrix(space))
    assert not [s for s in sql if "JOIN embeddings e ON" in s]


def test_a_large_change_or_an_old_matrix_loads_whole(
    vault: tuple[Cairn, Path], static: Embedder
) -> None:
    import dataclasses

    c, root = vault
    vec = c.store.vectors
    space = static.fingerprint
    old = vec.matrix(space)
    for p in root.glob("*.md"):
        p.write_text(p.read_text() + "\nAll changed.\n")
    c.index([root], embed=False)
    embed_pass(c.store, static)
    same(vec.matrix_since(space, old), vec.matrix(space))
    bare = dataclasses.replace(vec.matrix(space), chunk_ids=None, generation=-1)
    same(vec.matrix_since(space, bare), vec.matrix(space))
    same(vec.matrix_since(space, None), vec.matrix(space))


def test_kept_rows_equal_a_boolean_gather() -> None:
    """The run-by-run copy of a patch equals ``concatenate([m[keep], tail])`` for any
    pattern of dropped rows: none, all, at either end, a few, and dropped all over
    (the gather itself)."""
    import numpy as np

    from cairn.store.sqlite.matrix import _MAX_RUNS, _kept_rows

    rng = np.random.default_rng(7)
    m = rng.random((5000, 8), dtype=np.float32)
    tail = rng.random((3, 8), dtype=np.float32)
    alternating = np.arange(5000) % 2 == 0
    assert alternating.sum() > _MAX_RUNS
    patterns = [np.ones(5000, bool), np.zeros(5000, bool), alternating,
                rng.random(5000) > 0.01, rng.random(5000) > 0.5]
    for drop in ([0], [4999], [0, 1, 2, 4998, 4999], list(range(100, 200))):
        keep = np.ones(5000, bool)
        keep[drop] = False
        patterns.append(keep)
    for keep in patterns:
        got = _kept_rows(m, keep, tail)
        assert got.flags.c_contiguous
        assert np.array_equal(got, np.concatenate([m[keep], tail]))


def test_a_server_counts_waiting_units_in_the_background(
        vault: tuple[Cairn, Path], static: Embedder) -> None:
    """In a server (``count_in_background``) a stale count of the units waiting for a
    vector is answered at once, without the scan on the asking thread, and a
    background thread brings it to the exact count; elsewhere the count is exact at
    once."""
    import time

    from cairn.store.sqlite.waiting import count_in_background

    c, root = vault
    vs = c.store.vectors
    space = static.fingerprint
    assert vs.waiting_units(space) == 0
    count_in_background(True)
    try:
        for i in range(3):  # new notes, not embedded: they wait for a vector
            (root / f"new{i}.md").write_text(f"# New {i}\n\nFresh text {i}.\n")
        c.index([root])
        got, sql = statements(c, lambda: vs.waiting_units(space))
        assert got == 0  # the last count, at once
        assert not any("count(" in s for s in sql)
        deadline = time.monotonic() + 30
        while vs.waiting_units(space) == 0:
            assert time.monotonic() < deadline, "the background count never came"
            time.sleep(0.05)
    finally:
        count_in_background(False)
    counted = vs.waiting_units(space)
    vs._waiting.clear()  # type: ignore[attr-defined]
    assert counted == vs.waiting_units(space) > 0  # the exact count


def test_the_sqlite_waiting_count_equals_the_portable_one(
        vault: tuple[Cairn, Path], static: Embedder) -> None:
    """The SQLite-only count (narrow indexes first) counts what the portable one does:
    units without chunks and units with a chunk lacking a vector, each kind present."""
    from cairn.ingest.embedding import chunk_pending
    from cairn.store.sqlite.waiting import _COUNT, _COUNT_SQLITE

    c, root = vault
    space = static.fingerprint
    (root / "chunked.md").write_text("# Chunked\n\nA chunk without a vector.\n\n## B\n\nTwo.\n")
    c.index([root], embed=False)
    chunk_pending(c.store, c._chunk_config())  # chunks, no vectors
    (root / "bare.md").write_text("# Bare\n\nNo chunks at all yet.\n")
    (root / "title.md").write_text("# Only a title\n")  # a bare title: nothing to embed
    c.index([root], embed=False)
    db = c.store.db  # type: ignore[attr-defined]
    portable = db.execute(_COUNT, (space,)).fetchone()[0]
    assert portable >= 3
    assert db.execute(_COUNT_SQLITE, (space,)).fetchone()[0] == portable
    assert db.execute(_COUNT_SQLITE, ("another-space",)).fetchone()[0] == db.execute(
        _COUNT, ("another-space",)).fetchone()[0] > portable
