"""Embedding the chunks that lack a vector reads their texts a page at a time: the peak
of Python memory while :func:`cairn.ingest.embedding.embed_missing` runs stays near a
page, every distinct text is embedded once, and the progress still ends at the total
of texts and of characters."""

from __future__ import annotations

import tracemalloc
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from _long_notes import write_notes
from cairn.app import Cairn
from cairn.ingest import embedding
from cairn.ingest.embedding import chunk_pending, embed_missing, unit_prefix


class Lengths:
    """A small real embedder: a text's vector is made of its length and its first
    characters (deterministic, no model to load)."""

    name = "test:lengths"
    dim = 4
    fingerprint = "test-lengths-v1"

    def __init__(self, keep: bool = True) -> None:
        self.keep = keep
        self.seen: list[str] = []  # the texts embedded (when kept), in order
        self.count = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.count += len(texts)
        if self.keep:
            self.seen.extend(texts)
        out = np.array(
            [[len(t), ord(t[0]) if t else 0, ord(t[-1]) if t else 0, 1.0] for t in texts],
            dtype=np.float32,
        )
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def chunked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """An index whose units are chunked and have no vectors."""
    tmp = tmp_path_factory.mktemp("embed-memory")
    folder = tmp / "notes"
    folder.mkdir()
    chars = write_notes(folder)
    with Cairn.open(db=tmp / "i.db") as c:
        c.index([folder], embed=False)
        chunk_pending(c.store, c.embedding.settings().chunk_config)
    return tmp / "i.db", chars


def test_embedding_every_waiting_text_holds_one_page_of_them(
    chunked: tuple[Path, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "i.db"
    db.write_bytes(chunked[0].read_bytes())
    monkeypatch.setattr(embedding, "TEXT_PAGE", 20, raising=False)
    emb = Lengths(keep=False)
    with Cairn.open(db=db) as c:
        tracemalloc.start()
        try:
            embedded, missing, _s = embed_missing(c.store, emb, batch_size=8)
            _now, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert c.store.vectors.missing_vectors(emb.fingerprint) == 0
    assert embedded == emb.count and missing >= embedded > 300
    # every text at once is at least `chars` (ASCII: a byte a character); a page of
    # 20 texts of a section or less is well under 200 kB
    assert peak < chunked[1] * 2 // 3, (peak, chunked[1])


def test_paged_embedding_embeds_each_distinct_text_once_and_reports_its_total(
    chunked: tuple[Path, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "i.db"
    db.write_bytes(chunked[0].read_bytes())
    with Cairn.open(db=db) as c:
        pairs = c.store.vectors.chunks_missing_vectors(Lengths.fingerprint)
        expected = {
            ch.hash: unit_prefix(u) + u.body[ch.window_start : ch.window_end] for ch, u in pairs
        }
    monkeypatch.setattr(embedding, "TEXT_PAGE", 7, raising=False)
    emb = Lengths()
    calls: list[tuple[str, float, float]] = []

    class Progress:
        def __call__(self, done: int, total: int, phase: str) -> None:
            calls.append(("count", done, total))

        def work(self, done: float, total: float, phase: str) -> None:
            calls.append(("work", done, total))

    with Cairn.open(db=db) as c:
        embed_missing(c.store, emb, batch_size=3, progress=Progress())
    assert sorted(emb.seen) == sorted(expected.values())
    counts = [x for x in calls if x[0] == "count"]
    works = [x for x in calls if x[0] == "work"]
    assert counts[0][1] == 0 and counts[-1][1] == counts[-1][2] == len(expected)
    assert works[-1][1] == works[-1][2] == sum(len(t) for t in expected.values())
