"""Chunking the units of an index holds a page of their text at a time, not the index:
the peak of Python memory while :func:`cairn.ingest.embedding.chunk_pending` runs stays
near a page however many units wait, and the chunks made are those of one read of
every unit, in index order."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from _long_notes import NOTES, SECTIONS, write_notes
from cairn.app import Cairn
from cairn.ingest import embedding
from cairn.ingest.embedding import chunk_pending


@pytest.fixture(scope="module")
def waiting(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """An index whose units have no chunks yet (indexed without embeddings)."""
    tmp = tmp_path_factory.mktemp("chunk-memory")
    folder = tmp / "notes"
    folder.mkdir()
    chars = write_notes(folder)
    with Cairn.open(db=tmp / "i.db") as c:
        c.index([folder], embed=False)
        assert c.store.vectors.has_unchunked()
    return tmp / "i.db", chars


def test_chunking_every_waiting_unit_holds_one_page_of_text(
    waiting: tuple[Path, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "i.db"
    db.write_bytes(waiting[0].read_bytes())
    monkeypatch.setattr(embedding, "UNIT_PAGE", 10, raising=False)
    with Cairn.open(db=db) as c:
        config = c.embedding.settings().chunk_config
        tracemalloc.start()
        try:
            units, chunks = chunk_pending(c.store, config)
            _now, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert not c.store.vectors.has_unchunked()
    assert units == NOTES * (SECTIONS + 1) and chunks >= units
    # every unit's text at once is `chars` (ASCII: a byte a character) and more; a page
    # of 10 sections is 40 kB, beside what chunking one section allocates (its tokens)
    assert peak < waiting[1] * 2 // 3, (peak, waiting[1])


def test_paged_chunking_makes_the_chunks_of_one_whole_read(
    waiting: tuple[Path, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paged, whole = tmp_path / "paged.db", tmp_path / "whole.db"
    paged.write_bytes(waiting[0].read_bytes())
    whole.write_bytes(waiting[0].read_bytes())
    with Cairn.open(db=whole) as c:
        config = c.embedding.settings().chunk_config
        sources = c.store.vectors.units_without_chunks()
        made = [embedding.chunk_unit(u, config) for u in sources]
        expected = [
            (u.unit_id, ch.ordinal, ch.start, ch.end, name)
            for u, (name, chs, _t) in zip(sources, made, strict=True)
            for ch in chs
        ]
    monkeypatch.setattr(embedding, "UNIT_PAGE", 7, raising=False)
    with Cairn.open(db=paged) as c:
        chunk_pending(c.store, c.embedding.settings().chunk_config)
        db = c.store.db  # type: ignore[attr-defined]
        rows = db.execute(
            "SELECT unit_id, ordinal, start, end, profile FROM chunks ORDER BY id"
        ).fetchall()
    assert [tuple(r) for r in rows] == expected
