"""A unit the semantic list cannot hold (no vector: a note that is all metadata, or one
still waiting to be embedded) is not penalised for its absence in hybrid RRF: it gets
the semantic share at its keyword rank (``rrf_semantic_unlistable``)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.ingest.embedding import embed_pass
from cairn.search.fusion import rrf
from cairn.search.hits import summands_add_up

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def test_rrf_fills_the_share_of_a_list_a_key_cannot_be_in() -> None:
    kw = [("a", 9.0), ("b", 8.0), ("c", 7.0)]
    sem = [("b", 0.9), ("c", 0.8)]
    plain = rrf({"keyword": kw, "semantic": sem}, k=60, weights={"keyword": 0.6, "semantic": 0.4})
    assert [f.key for f in plain] == ["b", "c", "a"]  # a is in one list only
    fair = rrf(
        {"keyword": kw, "semantic": sem},
        k=60,
        weights={"keyword": 0.6, "semantic": 0.4},
        unlistable={"semantic": {"a", "zz"}},
    )
    by = {f.key: f for f in fair}
    assert by["a"].summands["rrf_semantic_unlistable"] == pytest.approx(0.4 / 61)
    assert by["a"].summands["rrf_keyword"] == pytest.approx(0.6 / 61)
    assert "rrf_semantic_unlistable" not in by["b"].summands  # it is in the list
    assert "zz" not in by  # naming a key does not list it
    assert fair[0].key == "a"  # rank 1 in the only list it can be in
    for f in fair:
        assert math.isclose(math.fsum(f.summands.values()), f.score)


NOTES = {
    # all metadata, no text: nothing to embed (a blank preamble gets no chunk)
    "Blade Runner.md": '---\ndirector:\n  - "[[Ridley Scott]]"\ngenre: Sci-fi\nyear: 1982\n---\n',
    "films.md": "# Films I liked\n\nA film about a replicant hunter; the director is famous.\n",
    "ridley.md": "# Director notes\n\nScott directed many films; Ridley was born in 1937.\n",
    "garden.md": "# Garden\n\nCompost and water.\n",
}


def test_hybrid_keeps_a_metadata_only_note_it_found_by_keyword(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("model2vec")
    from cairn.embed.static import StaticEmbedder

    monkeypatch.setenv("CAIRN_EMBED", "none")
    root = tmp_path / "vault"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text, encoding="utf-8")
    emb = StaticEmbedder()
    with Cairn(Config(db_path=tmp_path / "i.db"), embedder=emb) as cairn:
        cairn.index([root])
        embed_pass(cairn.store, emb)
        kw = cairn.search("ridley scott director", mode="keyword")
        assert kw.hits[0].path == "Blade Runner.md"  # the meta column matches all three
        res = cairn.search("ridley scott director", mode="hybrid", explain=True)
        assert res.hits[0].path == "Blade Runner.md", [h.path for h in res.hits]
        top = res.hits[0].explain
        assert "semantic" not in top and "rrf_semantic_unlistable" in top["summands"]
        assert summands_add_up(top)
        for h in res.hits[1:]:  # embedded units are ranked as before
            assert "rrf_semantic_unlistable" not in h.explain["summands"]
