"""Hybrid search's ``coverage`` summand over a real indexed vault with the shipped static
model: a unit holding more of the query's words rises above a short unit that holds one
rare word, ``--explain`` names the summand, and it is computed only where it can tell
units apart."""

from __future__ import annotations

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
from cairn.ingest.embedding import embed_pass
from cairn.model import HitUnit
from cairn.search.coverage import query_words, shares, stem, unit_words
from cairn.search.fusion import FusionConfig
from cairn.search.hits import summands_add_up
from cairn.search.query import parse_query
from cairn.search.service import SearchService, SemanticConfig

os.environ.setdefault("HF_HUB_OFFLINE", "1")

_LOAD = ("The nightly load copies orders from the shop database into the warehouse, checks "
         "totals, and writes a summary for the finance team. ")
NOTES = {
    # one sentence holding most of the query's words, deep in a long note: BM25 weighs it
    # down for its length
    "warehouse/contract.md": "# Orders contract\n\n" + _LOAD * 14
    + "A row that arrives late is fixed by re-running the load for its day.\n",
    "warehouse/readme.md": "# Warehouse\n\n" + _LOAD * 14 + "\n",
    # a short section holding one of the query's words, the rarest
    "releases/v1.0.md": "# Release 1.0\n\n## No longer broken\n\nThe editor no longer freezes.\n",
    "garden.md": "# Garden\n\nCompost needs greens and browns; turn the pile weekly.\n",
    "bread.md": "# Sourdough\n\nFeed the starter the night before baking bread.\n",
}
QUERY = "rows that arrive late fixed by re-running instead of waiting longer"
# the keyword list alone, ranks only: its order is BM25's, which coverage then corrects
KEYWORD_RANKS = FusionConfig(relative=0.0, weights={"keyword": 1.0, "semantic": 0.0})


@pytest.fixture(autouse=True)
def _index_without_embedding(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Cairn.index`` embeds nothing here: the tests embed with the static model."""
    monkeypatch.setenv("CAIRN_EMBED", "none")


@pytest.fixture(scope="module")
def static() -> Embedder:
    pytest.importorskip("model2vec")
    from cairn.embed.static import StaticEmbedder

    return StaticEmbedder()


@pytest.fixture
def vault(tmp_path: Path, static: Embedder) -> Iterator[Cairn]:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        embed_pass(cairn.store, static)
        yield cairn


def _search(cairn: Cairn, emb: Embedder, fusion: FusionConfig, text: str = QUERY,
            ) -> list[tuple[str, str, dict[str, float]]]:
    s = SearchService(cairn.store, SearchConfig(), SemanticConfig(fusion=fusion), embedder=emb)
    res = s.search(text, mode="hybrid", limit=3, explain=True)
    for h in res.hits:
        assert summands_add_up(h.explain)
    return [(h.path, h.title, dict(h.explain["summands"])) for h in res.hits]


def test_a_unit_holding_more_query_words_rises_above_a_one_word_match(
    vault: Cairn, static: Embedder
) -> None:
    """BM25 puts the short "No longer broken" section, which holds only ``longer``, above
    the contract's section, which holds ``rows``, ``arrive``, ``late``, ``fixed``,
    ``re-running``; with ``coverage`` the contract comes first, the summand named."""
    off = _search(vault, static, replace(KEYWORD_RANKS, coverage=0.0))
    assert off[0][:2] == ("releases/v1.0.md", "No longer broken")
    assert not any("coverage" in s for _, _, s in off)
    on = _search(vault, static, replace(KEYWORD_RANKS, coverage=FusionConfig().coverage))
    path, _, summands = on[0]
    assert path == "warehouse/contract.md"
    assert 0 < summands["coverage"] <= FusionConfig().coverage * math.fsum(
        v for k, v in summands.items() if k != "coverage")
    one_word = next(s for p, t, s in on if t == "No longer broken")
    assert "coverage" not in one_word  # one query word held: below MIN_WORDS


def test_a_one_word_query_gains_no_coverage(vault: Cairn, static: Embedder) -> None:
    """With a single content word there is nothing to cover: no unit gains."""
    hits = _search(vault, static, FusionConfig(), text="the rows")
    assert hits and not any("coverage" in s for _, _, s in hits)


def _unit(body: str) -> HitUnit:
    return HitUnit(unit_id="u", document_id="d", ordinal=0, kind="section", title="",
                   outline_path=(), body=body, parent_id=None, line_start=1, line_end=1,
                   tags=(), todo=None, role=None, doc_title="", path="n.md", format="markdown",
                   root_path="/r")


def test_a_word_every_candidate_holds_weighs_less() -> None:
    """The share weighs each word by how few of the read units hold it."""
    words = query_words(parse_query("the orders late rows").positive)
    assert words == {"order", "late", "rows"}
    assert stem("Waiting") == stem("waited") == "wait"
    assert unit_words(_unit("Late rows: the waited_for RUNS ran"), words | {"runs"}) == {
        "late", "rows", "runs"}
    held = {
        "a": frozenset({"order", "late"}),
        "b": frozenset({"order", "rows"}),
        "c": frozenset({"order"}),
        "d": frozenset({"order", "late", "rows"}),
    }
    c = shares(words, held)
    assert c["c"] == 0.0  # one word held
    assert c["d"] == pytest.approx(1.0)
    # "late" and "rows" are each held by two units, "order" by all four
    assert c["a"] == pytest.approx(c["b"]) and c["a"] > 0.5


def test_cli_explain_names_the_coverage_summand(
    vault: Cairn, static: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cairn search --explain`` lists ``coverage`` as a row of a hit's score."""
    from cairn.interfaces import cli
    from cairn.interfaces.cli import _common

    real = Cairn(vault.config, store=vault.store, embedder=static)

    @contextmanager
    def opener(db: Path | None, create: bool = False) -> Iterator[Cairn]:
        yield real

    monkeypatch.setattr(_common, "open_cairn", opener)
    r = CliRunner().invoke(cli.app, ["search", "--mode", "hybrid", "--explain", QUERY])
    assert r.exit_code == 0, r.output
    assert "coverage" in r.stdout
