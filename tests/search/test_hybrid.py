"""Hybrid search over a real indexed vault with the shipped static model: modes,
explanations, filters, keyword-only degrade, and exactly k live hits after deletes."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import Config, SearchConfig
from cairn.embed.base import Embedder
from cairn.embed.locator import ModelLocator
from cairn.ingest.embedding import embed_pass
from cairn.search.fusion import FusionConfig
from cairn.search.hits import summands_add_up
from cairn.search.service import _UNSET, SearchService, SemanticConfig, SemanticService

os.environ.setdefault("HF_HUB_OFFLINE", "1")

NOTES = {
    "pets/cat.md": "# Our cat\n\nThe kitten naps on the warm windowsill every afternoon.\n",
    "pets/dog.md": "# The dog\n\nWalks in the park twice a day; loves chasing balls.\n",
    "work/budget.md": "---\ntags: [work]\n---\n# Budget\n\nRevenue grew eight percent; "
    "travel costs fell sharply this quarter.\n",
    "work/hiring.md": "---\ntags: [work]\n---\n# Hiring plan\n\nWe will hire two engineers "
    "and one designer next quarter.\n",
    "garden.md": "# Garden\n\nCompost needs greens and browns; turn the pile weekly.\n",
    "bread.md": "# Sourdough\n\nFeed the starter the night before baking bread.\n",
    "travel.md": "# Trip to Lisbon\n\nTrams, custard tarts and the ocean view.\n",
    "music.md": "# Guitar practice\n\nScales for ten minutes, then chord changes.\n",
}


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


@pytest.fixture
def vault(tmp_path: Path, static: Embedder) -> Iterator[tuple[Cairn, Path]]:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        embed_pass(cairn.store, static)
        yield cairn, root


def _searcher(
    cairn: Cairn, emb: Embedder | None, fusion: FusionConfig | None = None
) -> SearchService:
    cfg = SemanticConfig(fusion=fusion or FusionConfig())
    return SearchService(cairn.store, SearchConfig(), cfg, embedder=emb)


def test_modes_and_default(vault: tuple[Cairn, Path], static: Embedder) -> None:
    cairn, _ = vault
    s = _searcher(cairn, static)
    assert s.ranker().default_mode() == "hybrid"
    kw = s.search("windowsill", mode="keyword", explain=True)
    assert kw.hits[0].path == "pets/cat.md"
    h = kw.hits[0]
    assert isinstance(h.snippet, str) and "windowsill" in h.snippet
    assert [h.snippet[a:b] for a, b in h.highlights] == ["windowsill"]
    assert kw.hits[0].explain["mode"] == "keyword"
    assert kw.hits[0].explain["keyword"]["rank"] == 1
    # no shared word with the cat note: keywords miss, meaning finds it
    assert s.search("sleepy feline", mode="keyword").hits == ()
    sem = s.search("sleepy feline", mode="semantic", limit=3, explain=True)
    assert sem.hits[0].path == "pets/cat.md"
    e = sem.hits[0].explain
    assert e["mode"] == "semantic" and e["semantic"]["rank"] == 1
    assert e["score"] == pytest.approx(e["semantic"]["cosine"])
    hy = s.search("sleepy feline", limit=3, explain=True)
    assert hy.hits[0].path == "pets/cat.md" and hy.hits[0].explain["mode"] == "hybrid"


def test_explain_summands_add_up_rrf_and_linear(
    vault: tuple[Cairn, Path], static: Embedder
) -> None:
    cairn, _ = vault
    for fusion in (FusionConfig(), FusionConfig(method="linear")):
        s = _searcher(cairn, static, fusion=fusion)
        res = s.search("quarter revenue engineers", limit=5, explain=True)
        assert len(res.hits) == 5
        scores = [h.score for h in res.hits]
        assert scores == sorted(scores, reverse=True) and len(set(scores)) == 5
        for h in res.hits:
            e = h.explain
            assert summands_add_up(e) and e["score"] == h.score
            assert math.fsum(e["summands"].values()) == pytest.approx(h.score, abs=1e-15)
            assert e["fusion"] == fusion.method
            if fusion.method == "rrf":
                for name, lst in (("keyword", "rrf_keyword"), ("semantic", "rrf_semantic")):
                    if name in e:
                        w = fusion.weights[name]
                        k = fusion.rrf_k
                        assert e["summands"][lst] == pytest.approx(w / (k + e[name]["rank"]))
            else:
                assert set(e["summands"]) >= {"sim", "kw", "graph", "time_decay", "type_weight"}
        top = res.hits[0].explain
        assert "keyword" in top and "semantic" in top  # found by both lists


def test_filters_and_exclusions_apply_to_the_semantic_list(
    vault: tuple[Cairn, Path], static: Embedder
) -> None:
    cairn, _ = vault
    s = _searcher(cairn, static)
    res = s.search("tag:work money and people", mode="semantic", limit=10)
    assert {h.path for h in res.hits} == {"work/budget.md", "work/hiring.md"}
    res = s.search("sleepy feline -kitten", mode="semantic", limit=10)
    assert "pets/cat.md" not in {h.path for h in res.hits}
    assert len(res.hits) == 10 or len(res.hits) >= 6


def test_similarity_floor_drops_unrelated_semantic_candidates(
    vault: tuple[Cairn, Path], static: Embedder
) -> None:
    cairn, _ = vault
    loose = _searcher(cairn, static, fusion=FusionConfig(min_similarity=-1.0))
    strict = _searcher(cairn, static, fusion=FusionConfig(min_similarity=0.2))
    everything = loose.search("sleepy feline", mode="semantic", limit=20, explain=True)
    assert len(everything.hits) == len({h.unit_id for h in everything.hits}) >= 8
    kept = strict.search("sleepy feline", mode="semantic", limit=20, explain=True)
    want = [h.unit_id for h in everything.hits if h.explain["semantic"]["cosine"] >= 0.2]
    assert [h.unit_id for h in kept.hits] == want and 0 < len(want) < len(everything.hits)


def test_keyword_only_degrade_without_embedder(vault: tuple[Cairn, Path]) -> None:
    cairn, _ = vault
    s = _searcher(cairn, None)
    assert s.ranker().default_mode() == "keyword"
    res = s.search("windowsill", mode="hybrid", explain=True)
    assert res.hits and res.hits[0].path == "pets/cat.md"
    assert res.hits[0].explain["mode"] == "keyword"
    assert any("unavailable" in n for n in res.notes)
    # a configured model that cannot be found: one notice, keyword results, no crash
    locator = ModelLocator(
        package_dir=Path("/nonexistent"), cache_dir=Path("/nonexistent"), allow_download=False
    )
    svc = SemanticService(cairn.store, SearchConfig(), SemanticConfig(), locator=locator)
    assert svc.embedder is None
    assert len(svc.notices) == 1 and "keywords only" in svc.notices[0]
    res = svc.search("windowsill", mode="semantic")
    assert res.hits[0].path == "pets/cat.md"
    assert any("keyword" in n for n in res.notes)


def test_exactly_k_live_hits_after_deleting_notes(
    vault: tuple[Cairn, Path], static: Embedder
) -> None:
    cairn, root = vault
    s = _searcher(cairn, static, fusion=FusionConfig(min_similarity=-1.0))  # no floor
    before = s.search("animals pets cat dog", mode="semantic", limit=4)
    assert len(before.hits) == 4  # the matrix is now loaded and cached
    gone = {"pets/cat.md", "pets/dog.md"}
    assert gone & {h.path for h in before.hits}
    for rel in gone:
        (root / rel).unlink()
    cairn.index()  # no embedding pass: the cascade alone must keep search honest
    for mode in ("semantic", "hybrid", "keyword"):
        res = s.search("animals pets cat dog garden work", mode=mode, limit=4)
        if mode != "keyword":
            assert len(res.hits) == 4, mode
        assert not gone & {h.path for h in res.hits}
        live = cairn.store.hit_units([h.unit_id for h in res.hits])
        assert all(h.unit_id in live for h in res.hits)
    many = s.search("the", mode="semantic", limit=5)
    assert len(many.hits) == 5


def test_cli_search_explain_and_eval(
    vault: tuple[Cairn, Path],
    static: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cairn.interfaces import cli
    from cairn.interfaces.cli import _common

    cairn, _ = vault
    real = Cairn(cairn.config, store=cairn.store, embedder=static)  # the real door

    @contextmanager
    def opener(db: Path | None, create: bool = False) -> Iterator[Cairn]:
        yield real

    monkeypatch.setattr(_common, "open_cairn", opener)
    app = cli.app  # the real `cairn` command: search with --mode, eval mounted
    runner = CliRunner()
    r = runner.invoke(
        app,
        ["search", "--mode", "hybrid", "--explain", "--json", "--limit", "3", "sleepy", "feline"],
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert len(data["hits"]) == 3 and data["hits"][0]["path"] == "pets/cat.md"
    for h in data["hits"]:
        assert summands_add_up(h["explain"])
    r = runner.invoke(app, ["search", "--explain", "sleepy", "feline"])
    assert r.exit_code == 0, r.output
    assert "semantic (rrf_semantic)" in r.stdout and "tiebreak" in r.stdout
    assert "score" in r.stdout
    r = runner.invoke(app, ["search", "--mode", "fuzzy", "x"])
    assert r.exit_code == 2

    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    docs = [
        ("d1", "Sourdough", "Feed the starter before baking bread."),
        ("d2", "Guitar", "Practice scales and chord changes daily."),
        ("d3", "Compost", "Greens and browns make good compost."),
    ]
    (beir / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in docs)
    )
    (beir / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "baking bread starter"})
        + "\n"
        + json.dumps({"_id": "q2", "text": "guitar chords"})
        + "\n"
    )
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    r = runner.invoke(app, ["eval", str(beir), "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert rep["documents"] == 3 and rep["queries"] == 2
    assert [x["mode"] for x in rep["results"]] == ["keyword", "semantic", "hybrid"]
    kw = rep["results"][0]
    assert kw["ndcg@10"] == 1.0 and kw["mrr@10"] == 1.0 and kw["recall@100"] == 1.0


def test_service_without_vectors_answers_by_keyword_without_loading_a_model(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_text("# Alpha\n\nThe kitten naps on the windowsill.\n")
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        svc = SemanticService(cairn.store, SearchConfig())
        res = svc.search("kitten", mode="hybrid")
        assert [h.path for h in res.hits] == ["a.md"]
        assert any("no embeddings in this index yet" in n for n in res.notes)
        assert svc.search("kitten").hits[0].explain == {}
        assert svc._embedder is _UNSET and svc.notices == []  # no model was loaded


def test_explain_shows_the_score_aware_summands_of_each_list(
    vault: tuple[Cairn, Path], static: Embedder
) -> None:
    """Hybrid's explanation lists ``rel_keyword`` / ``rel_semantic`` (the list's
    weight × ``relative`` × the hit's normalised score) and the ``relative`` used; with
    ``relative`` 0 they are absent."""
    cairn, _ = vault
    fusion = FusionConfig()
    res = _searcher(cairn, static, fusion).search("quarter revenue engineers", limit=5,
                                                  explain=True)
    top = res.hits[0].explain
    assert top["relative"] == fusion.relative == 0.1
    for name in ("keyword", "semantic"):
        if name in top:
            part = top["summands"][f"rel_{name}"]
            assert 0.0 <= part <= fusion.relative * fusion.weights[name]
    assert any(f"rel_{n}" in top["summands"] for n in ("keyword", "semantic"))
    assert math.fsum(top["summands"].values()) == pytest.approx(res.hits[0].score, abs=1e-15)
    off = _searcher(cairn, static, replace(fusion, relative=0.0)).search(
        "quarter revenue engineers", limit=5, explain=True)
    assert not any(k.startswith("rel_") for h in off.hits for k in h.explain["summands"])
