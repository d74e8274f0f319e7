"""Graph expansion in hybrid search never lifts a hit above one that both the keyword
and the semantic list ranked higher (and that was ahead before expansion): on the
Obsidian help's plugin pages, the "All core plugins" hub, which every plugin page
links to, stayed above the page the query names."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn

pytestmark = [pytest.mark.corpus, pytest.mark.embed]

PLUGINS = (Path(__file__).resolve().parents[3] / "shared" / "corpus" / "markdown"
           / "obsidian-help-NO-LICENCE" / "en" / "Plugins")


@pytest.fixture(scope="module")
def cairn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cairn]:
    tmp = tmp_path_factory.mktemp("plugins")
    shutil.copytree(PLUGINS, tmp / "Plugins")
    with pytest.MonkeyPatch.context() as mp:  # the module's index has vectors
        mp.delenv("CAIRN_EMBED", raising=False)
        with Cairn.open(db=tmp / "i.db") as c:
            c.index([tmp])
            assert c.search("Canvas", mode="hybrid", explain=True).hits[0].explain["semantic"]
            yield c


def _ranks(h: Any) -> dict[str, int]:
    ex = h.explain or {}
    return {k: ex[k]["rank"] for k in ("keyword", "semantic")
            if isinstance(ex.get(k), dict) and "rank" in ex[k]}


def test_the_hub_stays_below_the_page_both_lists_rank_first(cairn: Cairn) -> None:
    hits = cairn.search("Canvas", mode="hybrid", expand=True, explain=True, limit=10).hits
    titles = [(h.title, h.path) for h in hits]
    canvas = titles.index(("Canvas", "Plugins/Canvas.md"))
    hub = [i for i, (t, p) in enumerate(titles) if p == "Plugins/Core plugins.md"]
    assert all(i > canvas for i in hub), titles
    kept = [h for h in hits if "kept_below" in (h.explain or {}).get("graph", {})]
    for h in kept:  # the explanation still adds up: base + the boost that was kept
        g = h.explain["graph"]
        assert h.score == pytest.approx(g["base_score"] + g["boost"])
        assert g["boost"] < g["boost_walked"]


def test_no_title_query_has_a_hit_lifted_over_one_both_lists_rank_higher(
    cairn: Cairn,
) -> None:
    queries = sorted({p.stem for p in PLUGINS.glob("*.md")})
    lifted = []
    for q in queries:
        before = [h.unit_id for h in cairn.search(q, mode="hybrid", limit=30).hits]
        pos = {u: i for i, u in enumerate(before)}
        hits = cairn.search(q, mode="hybrid", expand=True, explain=True, limit=10).hits
        for j, g in enumerate(hits):
            mine = _ranks(g)
            for h in hits[j + 1 :]:
                theirs = _ranks(h)
                if (len(theirs) == 2
                        and all(theirs[k] < mine.get(k, 1 << 30) for k in theirs)
                        and pos.get(h.unit_id, 99) < pos.get(g.unit_id, 99)):
                    lifted.append((q, g.title, h.title))
    assert lifted == []


def test_keyword_mode_keeps_the_whole_boost(cairn: Cairn) -> None:
    hits = cairn.search("Canvas", mode="keyword", expand=True, explain=True, limit=10).hits
    assert not any("kept_below" in (h.explain or {}).get("graph", {}) for h in hits)
    assert any((h.explain or {}).get("graph", {}).get("boost", 0) > 0 for h in hits)
