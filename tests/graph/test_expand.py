"""Graph expansion in ranking: the answer one link away from the best keyword match
moves up, and the explanation names the link.

Vault (``→`` a wikilink):

    Composting guide ("compost" ×4)  →  Worm bins ("compost" ×1: the answer)
    Heap notes ("compost" ×3, no links)
    Myths ("compost" ×1)  -contradicts->  Worm bins   (front matter contradicts: …)
"""

from __future__ import annotations

from typing import Any

import pytest

from cairn.errors import QueryError

pytest.importorskip("cairn.formats.markdown")

from cairn.graph.expand import DEFAULT_WEIGHTS, ExpandConfig, ExpandedHit

FILES = {
    "guide.md": "# Composting guide\n\nCompost, compost, compost: everything about compost. "
    "For small flats see [[Worm bins]].\n",
    "worm bins.md": "# Worm bins\n\nRed wigglers turn kitchen scraps into compost.\n",
    "heap.md": "# Heap notes\n\nThe compost heap: turn the compost, water the compost.\n",
    "myths.md": "---\ncontradicts: \"[[guide]]\"\n---\n# Myths\n\n"
    "Compost smells. Another sentence about nothing in particular here.\n",
    # notes without the word, so that it is rare enough for BM25 to score it
    **{f"filler{i}.md": f"# Filler {i}\n\nTomatoes, beans and squash, note {i}.\n"
       for i in range(8)},
}


def _ranked(v: Any, query: str) -> list[tuple[str, float]]:
    return [(h.unit_id, h.score) for h in v.cairn.search(query, limit=10).hits]


def _order(v: Any, hits: list[ExpandedHit] | list[tuple[str, float]]) -> list[str]:
    ids = [h.unit_id if isinstance(h, ExpandedHit) else h[0] for h in hits]
    return [v.label(i) for i in ids]


def test_expansion_moves_the_linked_answer_up(make_vault: Any) -> None:
    v = make_vault(FILES)
    before = _ranked(v, "compost")
    order = _order(v, before)
    assert order[0] == "guide.md#Composting guide"
    answer = "worm bins.md#Worm bins"
    assert order.index(answer) > order.index("heap.md#Heap notes")
    after = v.graph.expand(before)
    new = _order(v, after)
    assert new.index(answer) < new.index("heap.md#Heap notes")
    assert new.index(answer) < order.index(answer)
    hit = next(h for h in after if v.label(h.unit_id) == answer)
    assert hit.boost > 0 and hit.rank_before == order.index(answer) + 1
    exp = v.graph.explain(hit)
    (path,) = exp["paths"]
    (edge,) = path["edges"]
    assert v.label(path["seed"]) == "guide.md#Composting guide"
    assert (edge["relation"], edge["origin"], edge["direction"]) == (
        "references", "declared", "out")
    assert edge["from"]["title"] == "Composting guide"
    assert edge["to"]["path"] == "worm bins.md"
    assert edge["evidence"][0]["raw"] == "[[Worm bins]]"


def test_contradicts_lowers_the_score(make_vault: Any) -> None:
    v = make_vault(FILES)
    before = dict(_ranked(v, "compost"))
    # Myths' front matter says it contradicts the guide: the guide, reached from Myths
    # along that edge, gets a negative boost.
    myths = v.uid("myths.md#")
    guide = v.uid("guide.md#Composting guide")
    out = v.graph.expand([(myths, 1.0), (guide, before[guide])])
    g = next(h for h in out if h.unit_id == guide)
    assert g.boost < 0
    assert g.score < before[guide]
    assert g.paths[0].steps[0].relation == "contradicts"


def test_weights_are_configurable_and_zero_disables(make_vault: Any) -> None:
    v = make_vault(FILES)
    before = _ranked(v, "compost")
    off = ExpandConfig.from_mapping({"weights": {"references": 0}})
    assert off.weights["depends_on"] == DEFAULT_WEIGHTS["depends_on"]
    answer = v.uid("worm bins.md#Worm bins")
    boosts = {h.unit_id: h.boost for h in v.graph.expand(before, off)}
    assert boosts[answer] == 0
    strong = ExpandConfig.from_mapping({"weights": {"references": 2.0}})
    weak = ExpandConfig.from_mapping({"weights": {"references": 0.5}})
    b_strong = {h.unit_id: h.boost for h in v.graph.expand(before, strong)}[answer]
    b_weak = {h.unit_id: h.boost for h in v.graph.expand(before, weak)}[answer]
    assert b_strong == pytest.approx(4 * b_weak)


def test_two_hops_reach_further_and_bring_in_new_units(make_vault: Any) -> None:
    v = make_vault({
        "a.md": "# A\n\nzebra zebra. See [[B]].\n",
        "b.md": "# B\n\nNothing relevant. See [[C]].\n",
        "c.md": "# C\n\nThe far answer.\n",
    })
    hits = _ranked(v, "zebra")
    assert _order(v, hits) == ["a.md#A"]
    one = {v.label(h.unit_id): h for h in v.graph.expand(hits)}
    two = {v.label(h.unit_id): h for h in v.graph.expand(hits, ExpandConfig(hops=2))}
    # the link [[B]] reaches b.md's first unit (just the title); the boost lands on its
    # heading "B", which holds the text
    assert "b.md#B" in one and not any(k.startswith("c.md") for k in one)
    assert "c.md#C" in two and two["c.md#C"].rank_before is None
    assert 0 < two["c.md#C"].boost < two["b.md#B"].boost
    # [[B]], then on from B's heading (the whole note is linked), then [[C]]
    assert [s.relation for s in two["c.md#C"].paths[0].steps] == [
        "references", "parent", "references"]
    with pytest.raises(QueryError):
        v.graph.expand(hits, ExpandConfig(hops=3))


def test_proximity_for_the_linear_blend(make_vault: Any) -> None:
    v = make_vault(FILES)
    hits = _ranked(v, "compost")
    prox = v.graph.proximity(hits)
    answer = v.uid("worm bins.md#Worm bins")
    assert 0 < prox[answer] <= 1
    assert all(0 <= p <= 1 for p in prox.values())
    signed = v.graph.proximity(hits, allow_negative=True)
    assert signed[v.uid("myths.md#Myths")] < 0
    assert v.uid("myths.md#Myths") not in prox or prox[v.uid("myths.md#Myths")] == 0
