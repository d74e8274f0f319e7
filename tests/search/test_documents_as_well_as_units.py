"""Documents as well as units, over small real indexes: a file whose sections together
match rises above one short section (``document``), a note the best hit links to rises
(``link_hop``), and a filter matching many units of one file still lists the other
files (``file_crowding``), each named in ``--explain`` with the summands adding up."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import Config, SearchConfig
from cairn.embed.base import Embedder
from cairn.ingest.embedding import embed_pass
from cairn.interfaces.cli import app
from cairn.search.fusion import FusionConfig
from cairn.search.hits import summands_add_up
from cairn.search.service import SearchService, SemanticConfig

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# the default fusion without coverage and without the rules under test
PLAIN = FusionConfig(coverage=0.0, document=0.0, link_hop=0.0)
# the keyword list's ranks and scores only (semantic weight 0): the order is BM25's
KEYWORD_ONLY = replace(PLAIN, weights={"keyword": 1.0, "semantic": 0.0})

_FILLER = "The shed holds the tools, the hose and a bench by the window. " * 6

NOTES = {
    # three sections, each with one of the query's words
    "garden/compost.md": "# Compost\n\n"
    + "## Greens\n\nAdd greens such as grass to the compost pile.\n"
    + "\n\n## Browns\n\nAdd browns such as leaves to the compost pile.\n"
    + "\n\n## Turning\n\nTurn the compost pile weekly so it heats.\n",
    # one short section holding two of them
    "misc/tips.md": "# Tips\n\n## Browns and greens\n\nBrowns and greens.\n",
    # a note on task switching that names the system it relies on only by link
    "work/switching.md": "# Task switching\n\nTask switching costs focus; I batch my "
    "tasks with the [[gtd|productivity system]] I keep.\n",
    "work/gtd.md": "# Getting Things Done\n\nA system by David Allen: capture, clarify, "
    "organise, reflect, engage. " + _FILLER + "Productivity follows.\n",
    "work/habits.md": "# Habits\n\nA productivity habit: plan the day. Productivity "
    "needs rest.\n",
    "work/focus.md": "# Focus\n\nProductivity, productivity: one thing at a time.\n",
    # the lists' tails: a word of the query once in a long note
    **{f"misc/shed{i}.md": f"# Shed {i}\n\n" + _FILLER * 3 + "Turning the lock.\n"
       for i in range(6)},
}


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


def _search(cairn: Cairn, emb: Embedder, fusion: FusionConfig, text: str,
            ) -> list[tuple[str, str, dict[str, float]]]:
    s = SearchService(cairn.store, SearchConfig(), SemanticConfig(fusion=fusion), embedder=emb)
    res = s.search(text, mode="hybrid", limit=5, explain=True)
    for h in res.hits:
        assert summands_add_up(h.explain)
    return [(h.path, h.title, dict(h.explain["summands"])) for h in res.hits]


def test_a_file_whose_sections_together_match_rises_above_one_short_section(
    vault: Cairn, static: Embedder
) -> None:
    """Both lists put the short two-word tip first; the compost note's sections each
    match, and with ``document`` at 0.05 its best section comes first, the summand
    named on it and on no other section of its file; off by default."""
    query = "greens browns turning compost"
    off = _search(vault, static, PLAIN, query)
    assert off[0][:2] == ("misc/tips.md", "Browns and greens")
    assert off[1][0] == "garden/compost.md"
    assert not any("document" in s for _, _, s in off)
    assert FusionConfig().document == 0.0
    on = _search(vault, static, replace(PLAIN, document=0.05), query)
    assert on[0][:2] == off[1][:2]
    assert on[0][2]["document"] > 0
    assert not any("document" in s for p, _, s in on[1:] if p == "garden/compost.md")


def test_a_note_the_best_hit_links_to_gains_a_share_of_its_score(
    vault: Cairn, static: Embedder
) -> None:
    """The task-switching note links to the GTD note; the habits and focus notes hold
    the query's word more often. With ``link_hop`` the linked note comes above it, named."""
    query = "task switching productivity"
    off = _search(vault, static, KEYWORD_ONLY, query)
    paths = [p for p, _, _ in off]
    assert paths[0] == "work/switching.md"
    assert paths.index("work/habits.md") < paths.index("work/gtd.md")
    on = _search(vault, static, replace(KEYWORD_ONLY, link_hop=0.25), query)
    paths = [p for p, _, _ in on]
    assert paths.index("work/gtd.md") < paths.index("work/habits.md")
    hop = {p: s.get("link_hop") for p, _, s in on}
    seed = sum(v for k, v in on[0][2].items() if k != "link_hop")
    assert 0 < hop["work/gtd.md"] <= 0.25 * seed  # a share of the linking note's score
    assert hop["work/habits.md"] is None and hop["work/switching.md"] is None


@pytest.fixture
def tagged(tmp_path: Path) -> Path:
    """``a.org`` with twelve headings tagged ``:x:`` that each say "bread" twice, and
    ``b.org`` with one that says it once in a longer body: by BM25 every ``a.org``
    heading comes first."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.org").write_text(
        "#+title: A\n\n"
        + "".join(f"* Part {i} :x:\nBread and bread {i}.\n" for i in range(12)),
        encoding="utf-8",
    )
    (root / "b.org").write_text(
        "#+title: B\n\n* Only part :x:\nBread, " + _FILLER + "\n", encoding="utf-8")
    (root / "c.org").write_text("#+title: C\n\n* Untagged\nBread.\n", encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
    return tmp_path


def test_a_filter_with_words_lists_another_file_after_three_units_of_one(tagged: Path
                                                                         ) -> None:
    with Cairn(Config(db_path=tagged / "i.db")) as cairn:
        hits = cairn.search("tag:x bread", mode="keyword", limit=5, explain=True).hits
        assert [h.path for h in hits] == ["a.org"] * 3 + ["b.org", "a.org"]
        assert all(summands_add_up(h.explain) for h in hits)
        assert [("file_crowding" in h.explain["summands"]) for h in hits] == [
            False, False, False, False, True]
        assert all(h.score > 0 for h in hits)
        # the words alone, no filter: BM25's order stands
        plain = cairn.search("bread", mode="keyword", limit=5).hits
        assert [h.path for h in plain] == ["a.org"] * 5
        # pages still join into one big page
        every = cairn.search("tag:x bread", mode="keyword", limit=13).hits
        pages = [cairn.search("tag:x bread", mode="keyword", limit=4, offset=o).hits
                 for o in (0, 4, 8, 12)]
        assert [h.unit_id for p in pages for h in p] == [h.unit_id for h in every]


@pytest.mark.parametrize("files", [False, True])
def test_the_cli_shows_both_tagged_files_for_a_filter_and_a_word(tagged: Path, files: bool
                                                                 ) -> None:
    args = ["search", "tag:x bread", "--mode", "keyword", "--limit", "5", "--json",
            "--db", str(tagged / "i.db")]
    res = CliRunner().invoke(app, args + (["--files"] if files else []))
    assert res.exit_code == 0, res.output
    out = json.dumps(json.loads(res.output))
    assert "a.org" in out and "b.org" in out


def test_per_file_zero_keeps_the_scores_order(tagged: Path) -> None:
    with Cairn(Config(db_path=tagged / "i.db")) as cairn:
        s = SearchService(cairn.store, SearchConfig(),
                          SemanticConfig(fusion=FusionConfig(per_file=0)), embedder=None)
        hits = s.search("tag:x bread", mode="keyword", limit=5).hits
        assert [h.path for h in hits] == ["a.org"] * 5


def test_hybrid_and_semantic_search_list_another_file_too(tagged: Path, static: Embedder
                                                           ) -> None:
    """The semantic list ranks every unit the filter passes by meaning: a file with
    twelve near-identical headings would fill the page in both modes that use it."""
    with Cairn(Config(db_path=tagged / "i.db")) as cairn:
        embed_pass(cairn.store, static)
        s = SearchService(cairn.store, SearchConfig(), SemanticConfig(), embedder=static)
        for mode in ("hybrid", "semantic"):
            hits = s.search("tag:x bread", mode=mode, limit=5, explain=True).hits
            assert [h.path for h in hits[:4]].count("a.org") == 3, mode
            assert "b.org" in [h.path for h in hits[:4]], mode
            assert all(summands_add_up(h.explain) for h in hits)


def test_the_first_page_is_the_same_whatever_limit_is_asked(tmp_path: Path) -> None:
    """``b.org``'s unit is BM25's last, past a short page's candidates: the cap reads a
    fixed window, so a page of 5 and a page of 40 begin alike, ``b.org`` fourth."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.org").write_text(
        "#+title: A\n\n"
        + "".join(f"* Part {i} :x:\nBread and bread {i}.\n" for i in range(30)),
        encoding="utf-8",
    )
    (root / "b.org").write_text(
        "#+title: B\n\n* Only part :x:\nBread, " + _FILLER + "\n", encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        short = cairn.search("tag:x bread", mode="keyword", limit=5).hits
        long = cairn.search("tag:x bread", mode="keyword", limit=40).hits
        assert [h.path for h in short] == ["a.org"] * 3 + ["b.org", "a.org"]
        assert [h.unit_id for h in short] == [h.unit_id for h in long[:5]]
        second = cairn.search("tag:x bread", mode="keyword", limit=5, offset=5).hits
        assert [h.unit_id for h in second] == [h.unit_id for h in long[5:10]]


def test_cli_explain_names_the_file_crowding_summand(tagged: Path) -> None:
    args = ["search", "tag:x bread", "--mode", "keyword", "--limit", "5", "--explain",
            "--json", "--db", str(tagged / "i.db")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    hits = json.loads(res.output)["hits"]
    assert [("file_crowding" in h["explain"]["summands"]) for h in hits] == [
        False, False, False, False, True]
