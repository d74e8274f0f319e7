"""The vector matrix patched after an index run equals a full load of it, and reads only
the chunks that got a vector since (``store.vectors.matrix_since``); a patch of a patched
matrix appends to its buffer and marks the rows of chunks gone dead instead of copying
the rest, and searches over it find what they find over a full load."""

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


def live_same(a: VectorMatrix, b: VectorMatrix) -> None:
    """``a`` and ``b`` hold the same live rows: chunk, unit, offsets and vector."""
    import numpy as np

    def rows(m: VectorMatrix) -> list[tuple[Any, ...]]:
        live = range(m.matrix.shape[0]) if m.dead is None else np.flatnonzero(~m.dead)
        return [(int(m.chunk_ids[i]), m.unit_ids[int(m.units[i])], int(m.ordinals[i]),
                 int(m.starts[i]), int(m.ends[i]), bool(m.alternate[i]),
                 m.matrix[i].tobytes()) for i in live]

    assert (a.space, a.generation) == (b.space, b.generation)
    assert rows(a) == rows(b)
    assert a.live() == b.live()


@pytest.fixture
def roomy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dead rows kept up to half the rows (the vault is small: a change kills a share
    of its 24 rows that a large index reaches only after many runs)."""
    import cairn.store.sql.matrix as matrix_module

    monkeypatch.setattr(matrix_module, "DEAD_SHARE", 0.5)


def rewrite(c: Cairn, root: Path, static: Embedder, name: str, text: str) -> None:
    (root / name).write_text(text)
    c.index([root], embed=False)
    embed_pass(c.store, static)


def test_a_patch_of_a_patch_appends_without_copying(
    vault: tuple[Cairn, Path], static: Embedder, roomy: None
) -> None:
    import numpy as np

    from cairn.store.sql.nearest import best_similarity, exact_nearest

    c, root = vault
    vec = c.store.vectors
    space = static.fingerprint
    loaded = vec.matrix(space)
    rewrite(c, root, static, "n01.md", "# Note 1\n\nFirst change.\n")
    first = vec.matrix_since(space, loaded)  # copied, into a buffer with room
    kept = first.matrix.copy()
    rewrite(c, root, static, "n03.md", "# Note 3\n\nTrams and custard tarts.\n")
    (root / "n05.md").unlink()
    rewrite(c, root, static, "late.md", "# Late\n\nThe ocean at dusk.\n")
    second = vec.matrix_since(space, first)
    full = vec.matrix(space)
    live_same(second, full)
    assert np.shares_memory(second.matrix, first.matrix), "appended, not copied"
    assert second.dead is not None and second.dead.sum() > 0
    assert np.array_equal(first.matrix, kept), "the old matrix's rows are untouched"
    assert second.matrix.shape[0] == first.matrix.shape[0] + second.dead.sum() - (
        first.live() - full.live())  # the dead rows are the only extra rows
    q = full.matrix[3]
    assert exact_nearest(second, q, 50) == exact_nearest(full, q, 50)
    gone = sorted(set(second.unit_ids) - set(full.unit_ids))  # n05's units
    assert gone and not set(gone) & {h[0] for h in exact_nearest(second, q, 10**6)}
    units = list(full.unit_ids) + gone
    assert best_similarity(second, q, units) == best_similarity(full, q, units)
    third = vec.matrix_since(space, second)
    assert third is second  # nothing moved since


def test_a_patch_of_an_older_matrix_never_writes_over_a_newer_one(
    vault: tuple[Cairn, Path], static: Embedder, roomy: None
) -> None:
    import numpy as np

    c, root = vault
    vec = c.store.vectors
    space = static.fingerprint
    loaded = vec.matrix(space)
    rewrite(c, root, static, "n01.md", "# Note 1\n\nFirst change.\n")
    first = vec.matrix_since(space, loaded)
    rewrite(c, root, static, "n02.md", "# Note 2\n\nSecond change.\n")
    second = vec.matrix_since(space, first)
    assert np.shares_memory(second.matrix, first.matrix)
    held = second.matrix.copy()
    rewrite(c, root, static, "n04.md", "# Note 4\n\nThird change.\n")
    again = vec.matrix_since(space, first)  # not the newest matrix of its buffer
    live_same(again, vec.matrix(space))
    assert np.array_equal(second.matrix, held)
    assert not np.shares_memory(again.matrix, first.matrix)


def test_dead_rows_past_their_share_are_copied_away(
    vault: tuple[Cairn, Path], static: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cairn.store.sql.matrix as matrix_module

    c, root = vault
    vec = c.store.vectors
    space = static.fingerprint
    loaded = vec.matrix(space)
    rewrite(c, root, static, "n01.md", "# Note 1\n\nFirst change.\n")
    first = vec.matrix_since(space, loaded)
    monkeypatch.setattr(matrix_module, "DEAD_SHARE", 0.0)
    rewrite(c, root, static, "n02.md", "# Note 2\n\nSecond change.\n")
    second = vec.matrix_since(space, first)
    assert second.dead is None
    same(second, vec.matrix(space))


def test_dense_search_skips_dead_rows(vault: tuple[Cairn, Path], static: Embedder,
                                      roomy: None) -> None:
    """A ranker's dense index over a patched snapshot with dead rows answers as over a
    full load: the same hits, similarities and size; a deleted unit is never found."""
    from cairn.search.dense import DenseIndex

    c, root = vault
    vec = c.store.vectors
    space = static.fingerprint
    dense = DenseIndex(vec, space)
    dense.snapshot()
    for i, name in enumerate(("n01.md", "n02.md", "n06.md")):
        rewrite(c, root, static, name, f"# Changed {i}\n\nCompost, rewritten {i}.\n")
        if i == 1:
            (root / "n08.md").unlink()
            c.index([root], embed=False)
        dense.snapshot()  # patched after each run, as a server does
    vm, _ = dense.snapshot()
    assert vm.dead is not None and vm.dead.any()
    full = DenseIndex(vec, space)
    full._snaps = type(dense._snaps)(vec, space)  # a fresh, fully loaded snapshot
    assert full.snapshot()[0].dead is None
    q = static.embed(["compost and bread"])[0]
    got, want = dense.search(q, 100), full.search(q, 100)
    assert [h.unit_id for h in got] == [h.unit_id for h in want]
    gone = sorted(set(vm.unit_ids) - set(full.snapshot()[0].unit_ids))  # n08's units
    assert gone and not [h for h in got if h.unit_id in gone]
    units = [h.unit_id for h in want] + gone
    assert dense.unit_similarity(q, units) == full.unit_similarity(q, units)
    assert dense.size() == full.size()


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
    chunk_pending(c.store, c.embedding.settings().chunk_config)  # its chunk waits for a vector
    (root / "n01.md").write_text("# Note 1\n\nChanged after.\n")
    c.index([root], embed=False)
    chunk_pending(c.store, c.embedding.settings().chunk_config)  # higher ids, vectors now
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

    from cairn.store.sql.matrix import _MAX_RUNS, _kept_rows

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

    from cairn.store.sql.waiting import count_in_background

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
    from cairn.store.sql.waiting import _COUNT, _COUNT_SQLITE

    c, root = vault
    space = static.fingerprint
    (root / "chunked.md").write_text("# Chunked\n\nA chunk without a vector.\n\n## B\n\nTwo.\n")
    c.index([root], embed=False)
    chunk_pending(c.store, c.embedding.settings().chunk_config)  # chunks, no vectors
    (root / "bare.md").write_text("# Bare\n\nNo chunks at all yet.\n")
    (root / "title.md").write_text("# Only a title\n")  # a bare title: nothing to embed
    c.index([root], embed=False)
    db = c.store.db  # type: ignore[attr-defined]
    portable = db.execute(_COUNT, (space,)).fetchone()[0]
    assert portable >= 3
    assert db.execute(_COUNT_SQLITE, (space,)).fetchone()[0] == portable
    assert db.execute(_COUNT_SQLITE, ("another-space",)).fetchone()[0] == db.execute(
        _COUNT, ("another-space",)).fetchone()[0] > portable


def test_an_index_run_leaves_its_waiting_count_for_other_processes(
        tmp_path: Path, static: Embedder) -> None:
    """A run ends by counting the units waiting for a vector into the index: another
    store on the same file (a server, a new ``cairn search``) takes that count without
    scanning while the index is as the run left it, and counts again once it is not."""
    from cairn.store import open_store

    root = tmp_path / "v"
    root.mkdir()
    for i in range(4):
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nText {i}.\n")
    with Cairn(Config(db_path=tmp_path / "i.db"), embedder=static) as c:
        c.index([root])
        (root / "late.md").write_text("# Late\n\nNot embedded yet.\n")
        c.index([root], embed=False)  # a run that leaves units waiting
    other = open_store(tmp_path / "i.db")
    try:
        vs = other.vectors
        got, sql = statements_of(other, lambda: vs.waiting_units(static.fingerprint))
        assert not any("count(" in s for s in sql), "taken from the index, not counted"
        vs._waiting.clear()  # type: ignore[attr-defined]
        with other.transaction():  # a change the recorded count does not name
            other.db.execute("UPDATE vector_meta SET value = value + 1 "  # type: ignore[attr-defined]
                             "WHERE key = 'generation'")
        again, sql = statements_of(other, lambda: vs.waiting_units(static.fingerprint))
        assert any("count(" in s for s in sql), "counted again"
        assert got == again > 0
    finally:
        other.close()


def statements_of(store: Any, fn: Any) -> tuple[Any, list[str]]:
    """``fn()`` with the SQL this thread's connection of ``store`` ran meanwhile."""
    seen: list[str] = []
    store.db.set_trace_callback(seen.append)
    try:
        return fn(), seen
    finally:
        store.db.set_trace_callback(None)


def test_a_server_takes_the_count_a_run_left_in_the_background(
        tmp_path: Path, static: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a server (``count_in_background``) the count the index process's run left is
    taken at once, and no background scan replaces it (a scan here answers 999)."""
    import time

    import cairn.store.sql.waiting as waiting
    from cairn.store import open_store

    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nText.\n")
    space = static.fingerprint
    with Cairn(Config(db_path=tmp_path / "i.db"), embedder=static) as c:
        c.index([root])
        other = open_store(tmp_path / "i.db")
        counting = waiting._COUNT_SQLITE
        scan = "SELECT 999 WHERE ? IS NOT NULL"  # what the server would count (not c)
        monkeypatch.setattr(waiting, "_COUNT_SQLITE", scan)
        waiting.count_in_background(True)
        try:
            assert other.vectors.waiting_units(space) == 0  # the first run's count
            for i in range(3):
                (root / f"new{i}.md").write_text(f"# New {i}\n\nFresh text {i}.\n")
            monkeypatch.setattr(waiting, "_COUNT_SQLITE", counting)
            c.index([root], embed=False)  # leaves units waiting, and says how many
            monkeypatch.setattr(waiting, "_COUNT_SQLITE", scan)
            deadline = time.monotonic() + 0.5  # a background count would say 999
            while time.monotonic() < deadline:
                assert other.vectors.waiting_units(space) == 3  # the run's, at once
                time.sleep(0.05)
            vs = other.vectors
            vs._waiting.clear()  # type: ignore[attr-defined]
            key = vs._waiting_key(space)  # type: ignore[attr-defined]
            # what the background counter calls takes it too
            assert vs._count_waiting(space, key, blocking=True) == 3  # type: ignore[attr-defined]
        finally:
            waiting.count_in_background(False)
            other.close()


def test_the_background_counter_waits_for_the_runs_count_while_it_writes(
        tmp_path: Path, static: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """While an index run keeps writing (longer than the settle wait), the background
    counter does not scan (a scan here answers 999): it takes the count the run leaves
    at its end."""
    import sqlite3
    import threading
    import time

    import cairn.store.sql.waiting as waiting
    from cairn.store import open_store

    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nText.\n")
    space = static.fingerprint
    with Cairn(Config(db_path=tmp_path / "i.db"), embedder=static) as c:
        c.index([root])
    other = open_store(tmp_path / "i.db")
    monkeypatch.setattr(waiting, "_COUNT_SQLITE", "SELECT 999 WHERE ? IS NOT NULL")
    waiting.count_in_background(True)

    def run() -> None:  # a run's commits for 1.5 s, then its count (7) at its end
        db = sqlite3.connect(tmp_path / "i.db", isolation_level=None)
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            db.execute("UPDATE vector_meta SET value = value + 1 WHERE key = 'generation'")
            time.sleep(0.05)
        gen = db.execute("SELECT value FROM vector_meta WHERE key = 'generation'").fetchone()
        last = db.execute("SELECT max(rowid) FROM units").fetchone()
        db.execute("INSERT OR REPLACE INTO vector_meta VALUES (?, ?)",
                   (waiting.RECORDED + space, f"{gen[0]} {last[0]} 7"))
        db.close()

    try:
        assert other.vectors.waiting_units(space) == 0
        writer = threading.Thread(target=run)
        writer.start()
        seen = set()
        deadline = time.monotonic() + 10
        while (n := other.vectors.waiting_units(space)) != 7:
            seen.add(n)
            assert time.monotonic() < deadline
            time.sleep(0.02)
        writer.join()
        assert seen == {0}, "no count of its own while the run wrote"
    finally:
        waiting.count_in_background(False)
        other.close()
