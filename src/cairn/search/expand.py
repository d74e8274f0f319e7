"""Graph expansion of a ranking: walk typed edges from the top results and re-score
(the walk itself is :meth:`cairn.graph.service.GraphService.expand`).

A unit that expansion brings in must pass the query's filters (and be on a canonical
branch unless alternates are asked for). Expansion never lifts a hit above one that
every ranked list put ahead of it (:func:`_bounded`). Each expanded result scores exactly
``base_score + boost``; with ``explain`` the boost is the ``graph_expansion`` summand
and the ``graph`` section says which edges brought it (as the graph service words them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cairn.model import TextQuery
from cairn.search.dense import DenseHit
from cairn.search.fusion import Fused
from cairn.search.query import Query
from cairn.store import Store

if TYPE_CHECKING:
    from cairn.graph.expand import ExpandedHit
    from cairn.graph.service import GraphService

Entry = tuple[str, float, dict[str, Any], DenseHit | None, bool]
"""``(unit id, score, explanation, chunk, matched by keyword)`` — what hits are built from."""

POOL = 3
"""Expansion walks from ``POOL × (offset + limit)`` ranked results."""


def expand_entries(
    graph: GraphService,
    store: Store,
    pool: Sequence[Fused],
    base: dict[str, Entry],
    query: Query,
    *,
    explain: bool,
) -> list[Entry]:
    """Re-rank ``pool`` (best first, with its entries ``base`` by unit id) by graph
    expansion; every result of the expansion that may be listed (passing ``query``'s
    filters and branch), best first."""
    expanded = graph.expand([(f.key, f.score) for f in pool])
    new_ids = [e.unit_id for e in expanded if e.unit_id not in base]
    allowed = set(store.filter_units(new_ids, TextQuery((), query.filters, query.alternates)))
    kept = [e for e in expanded if e.unit_id in base or e.unit_id in allowed]
    boosts, capped_by = _bounded(kept, pool)
    out: list[Entry] = []
    for e in kept:
        entry = base.get(e.unit_id) or (e.unit_id, 0.0, {}, None, False)
        unit_id, _, exp, chunk, by_keyword = entry
        exp = dict(exp)
        boost = boosts[unit_id]
        score = e.base_score + boost  # exactly the sum of the summands
        if explain:
            exp["summands"] = {**dict(exp.get("summands", {})), "graph_expansion": boost}
            exp["graph"] = {
                "base_score": e.base_score,
                "rank_before": e.rank_before,
                **graph.explain(e),
                "boost": boost,
                **({"boost_walked": e.boost, "kept_below": capped_by[unit_id]}
                   if unit_id in capped_by else {}),
            }
            exp["score"] = score
        out.append((unit_id, score, exp, chunk, by_keyword))
    before = {f.key: i for i, f in enumerate(pool)}
    out.sort(key=lambda x: (-x[1], before.get(x[0], len(before))))
    return out


def _bounded(
    expanded: Sequence[ExpandedHit], pool: Sequence[Fused]
) -> tuple[dict[str, float], dict[str, str]]:
    """Each hit's boost, cut so that expansion never lifts a hit above one that every
    ranked list (keyword and semantic) put ahead of it and that was ahead before: a hub
    note a few sections link to (keyword rank 19, semantic 32) stays below the section
    both lists rank first, and a unit only the walk brought in stays below every hit
    that all lists ranked. With a single list (keyword mode) the boosts stand.

    Returns ``(unit id → boost, unit id → the hit it was kept below)``.
    """
    boosts = {e.unit_id: e.boost for e in expanded}
    lists = {name for f in pool for name in f.ranks}
    if len(lists) < 2:
        return boosts, {}
    ranks = {f.key: f.ranks for f in pool}
    order = {f.key: i for i, f in enumerate(pool)}
    final: dict[str, float] = {}
    capped_by: dict[str, str] = {}
    # in the order before expansion (the walk's own finds last), so whoever can hold a
    # hit down has its final score already
    for e in sorted(expanded, key=lambda x: (order.get(x.unit_id, len(order)), -x.score)):
        mine = ranks.get(e.unit_id, {})
        score = e.base_score + e.boost
        for a, a_score in final.items():
            theirs = ranks.get(a)
            if (
                e.boost > 0
                and theirs is not None
                and a_score <= score
                and order[a] < order.get(e.unit_id, len(order))
                and all(n in theirs and theirs[n] < mine.get(n, 1 << 30) for n in lists)
            ):
                # just below it, so no tie-break downstream can put it first
                score, capped_by[e.unit_id] = math.nextafter(a_score, -math.inf), a
        final[e.unit_id] = score
        boosts[e.unit_id] = score - e.base_score
    return boosts, capped_by
