"""The embedding pass over a real indexed vault: cache hits on rename and re-index,
model switch into a separate space, deletion leaves nothing behind, --no-embed."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cairn.app import Cairn
from cairn.config import Config, SearchConfig
from cairn.embed.base import Embedder
from cairn.ingest.embedding import embed_pass
from cairn.search.service import SearchService

os.environ.setdefault("HF_HUB_OFFLINE", "1")

NOTES = {
    "garden.md": "# Garden\n\nCompost needs greens and browns in balance.\n\n"
    "## Tools\n\nA spade, a fork and a wheelbarrow.\n",
    "work/budget.md": "---\ntitle: Budget review\ntags: [work]\n---\n\n"
    "# Q3 numbers\n\nRevenue grew eight percent; travel costs fell.\n",
    "recipes/bread.md": "# Sourdough\n\nFeed the starter the night before baking.\n",
}


class Counting:
    """Wraps an embedder and counts the texts it is asked to embed."""

    def __init__(self, inner: Embedder, fingerprint: str | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.fingerprint = fingerprint or inner.fingerprint
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts.extend(texts)
        return self.inner.embed(texts)


@pytest.fixture(autouse=True)
def _index_without_embedding(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Cairn.index`` embeds nothing here (``CAIRN_EMBED=none``): these tests run the
    embedding pass themselves, with the embedder they choose."""
    monkeypatch.setenv("CAIRN_EMBED", "none")


@pytest.fixture(scope="module")
def static() -> Embedder:
    pytest.importorskip("model2vec")
    from cairn.embed.static import StaticEmbedder

    return StaticEmbedder()


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def _counts(cairn: Cairn) -> dict[str, int]:
    c = cairn.store.counts()
    return {"units": c["units"], "fts": c["fts_rows"], **cairn.store.vectors.counts()}


def _unit_ids(cairn: Cairn, path: str) -> list[str]:
    res = cairn.search(f"path:{path}", mode="keyword", limit=100)
    return [h.unit_id for h in res.hits]


def test_rename_and_reindex_hit_the_cache(tmp_path: Path, static: Embedder) -> None:
    root = _vault(tmp_path)
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        emb = Counting(static)
        vs = cairn.store.vectors
        with cairn.store.transaction():  # the index run chunked already: start again
            vs.reset_chunks("")
        pending = [u.unit_id for u in vs.units_without_chunks()]
        n_units = len(pending)  # blank preambles (text before a heading) get none
        assert 0 < n_units < _counts(cairn)["units"]
        first = embed_pass(cairn.store, emb)
        assert vs.units_without_chunks() == [] and not vs.has_unchunked()
        per_unit = [len(vs.chunks_of(u)) for u in pending]
        assert all(per_unit) and sum(per_unit) == _counts(cairn)["chunks"]  # only those
        assert first.embedded == _counts(cairn)["chunks"] >= n_units
        assert first.embedded == len(set(emb.texts)) == len(emb.texts) > 0
        assert any("Budget review" in t and "#work" in t for t in emb.texts)  # prefix
        before = _counts(cairn)

        # nothing changed: nothing chunked, nothing embedded
        emb.texts.clear()
        cairn.index()
        again = embed_pass(cairn.store, emb)
        assert (again.units_chunked, again.embedded, emb.texts) == (0, 0, [])

        # a move/rename: new unit ids, same text -> chunks redone, no embedding
        (root / "recipes" / "bread.md").rename(root / "baking.md")
        run = cairn.index()
        assert run.added == 1 and run.removed == 1
        moved = embed_pass(cairn.store, emb)
        assert moved.embedded == 0 and emb.texts == []
        assert vs.integrity_check(static.fingerprint) == []
        assert _counts(cairn) == before

        # an edit re-embeds only the changed unit's text
        p = root / "garden.md"
        p.write_text(p.read_text().replace("wheelbarrow", "rake"), encoding="utf-8")
        cairn.index()
        edited = embed_pass(cairn.store, emb)
        assert edited.embedded == 1 and len(emb.texts) == 1 and "rake" in emb.texts[0]
        # the old text's vector is pruned (by this pass or the index run's own)
        assert _counts(cairn) == before


def test_model_switch_embeds_into_a_separate_space(tmp_path: Path, static: Embedder) -> None:
    root = _vault(tmp_path)
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        a = Counting(static)
        embed_pass(cairn.store, a)
        n = len(a.texts)
        b = Counting(static, fingerprint="other-model-space")
        rep = embed_pass(cairn.store, b)
        assert rep.space == "other-model-space" and rep.embedded == n and len(b.texts) == n
        vs = cairn.store.vectors
        assert vs.missing_vectors("other-model-space") == 0
        assert vs.missing_vectors("a-third-space") == vs.counts()["chunks"]
        spaces = {s.space: s.vectors for s in vs.spaces()}
        assert spaces == {static.fingerprint: n, "other-model-space": n}
        assert vs.matrix(static.fingerprint).matrix.shape[0] == vs.counts()["chunks"]
        # switching back costs nothing: the first space is still there
        a.texts.clear()
        assert embed_pass(cairn.store, a).embedded == 0 and a.texts == []


def test_deleting_a_note_leaves_no_chunk_vector_or_fts_row(
    tmp_path: Path, static: Embedder
) -> None:
    root = _vault(tmp_path)
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        embed_pass(cairn.store, static)
        vs = cairn.store.vectors
        garden = _unit_ids(cairn, "garden.md")
        hashes = [c.hash for u in garden for c in vs.chunks_of(u)]
        assert hashes and vs.has_vectors(static.fingerprint, hashes) == set(hashes)
        units_before = _counts(cairn)["units"]
        (root / "garden.md").unlink()
        cairn.index()
        # chunks go with their units at once (ON DELETE CASCADE) ...
        assert all(vs.chunks_of(u) == [] for u in garden)
        assert vs.integrity_check() == []
        embed_pass(cairn.store, static)
        # ... and the vectors at the end of the pass
        assert vs.has_vectors(static.fingerprint, hashes) == set()
        c = _counts(cairn)
        assert c["units"] == c["fts"] <= units_before - len(garden)
        assert _unit_ids(cairn, "garden.md") == []
        assert cairn.store.hit_units(garden) == {}
        assert c["vectors"] == c["chunks"]
        assert cairn.notes.check() == []


def test_no_embedder_degrades_with_one_notice(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        rep = embed_pass(cairn.store, None)
        assert (rep.space, rep.embedded) == ("", 0)
        counts = cairn.store.vectors.counts()
        assert counts["vectors"] == 0 and counts["chunks"] > 0  # chunked, not embedded


def test_a_move_under_no_embed_keeps_its_vector(tmp_path: Path, static: Embedder) -> None:
    root = _vault(tmp_path)
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        embed_pass(cairn.store, static)
        before = cairn.store.vectors.counts()
        (root / "recipes" / "bread.md").rename(root / "baking.md")
        cairn.index()
        rep = embed_pass(cairn.store, None)  # e.g. `cairn index --no-embed`
        assert rep.pruned == 0 and cairn.store.vectors.counts() == before
        s = SearchService(cairn.store, SearchConfig(), embedder=static)
        hit = s.search("starter dough baking", mode="semantic", limit=1).hits[0]
        assert hit.path == "baking.md"


def test_vector_blobs_are_float16(tmp_path: Path, static: Embedder) -> None:
    root = _vault(tmp_path)
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        embed_pass(cairn.store, static)
        vs = cairn.store.vectors
        h = next(c.hash for u in _unit_ids(cairn, "garden.md") for c in vs.chunks_of(u))
        v = vs.vector(static.fingerprint, h)
        assert v is not None and v.shape == (static.dim,)
        blob = cairn.store.db.execute("SELECT vector FROM embeddings LIMIT 1").fetchone()[0]
        assert len(blob) == 2 * static.dim  # float16 on disk, float32 when read
        assert v.dtype == np.float32 and abs(float(np.linalg.norm(v)) - 1.0) < 1e-3


def test_integrity_check_finds_missing_and_malformed_vectors(
    tmp_path: Path, static: Embedder
) -> None:
    root = _vault(tmp_path)
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        vs = cairn.store.vectors
        embed_pass(cairn.store, static)
        assert vs.integrity_check(static.fingerprint) == []
        h = cairn.store.db.execute("SELECT hash FROM chunks LIMIT 1").fetchone()[0]
        cairn.store.db.execute(
            "UPDATE embeddings SET vector = x'00' WHERE hash = ? AND space = ?",
            (h, static.fingerprint),
        )
        assert any("are not 256 float16" in p for p in vs.integrity_check())
        cairn.store.db.execute("DELETE FROM embeddings WHERE hash = ?", (h,))
        assert any("have no vector" in p for p in vs.integrity_check(static.fingerprint))
