"""Graph expansion of a ranking: walk typed edges from the top results and re-score
(the walk itself is :meth:`cairn.graph.service.GraphService.expand`).

A unit that expansion brings in must pass the query's filters (and be on a canonical
branch unless alternates are asked for). Each expanded result scores exactly
``base_score + boost``; with ``explain`` the boost is the ``graph_expansion`` summand
and the ``graph`` section says which edges brought it (as the graph service words them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cairn.search.dense import DenseHit
from cairn.search.fusion import Fused
from cairn.search.query import Query
from cairn.store import Store

if TYPE_CHECKING:
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
    include_alternates: bool,
) -> list[Entry]:
    """Re-rank ``pool`` (best first, with its entries ``base`` by unit id) by graph
    expansion; every result of the expansion that may be listed, best first."""
    expanded = graph.expand([(f.key, f.score) for f in pool])
    new_ids = [e.unit_id for e in expanded if e.unit_id not in base]
    allowed = set(store.filter_units(new_ids, query.filters, include_alternates=include_alternates))
    out: list[Entry] = []
    for e in expanded:
        entry = base.get(e.unit_id)
        if entry is None:
            if e.unit_id not in allowed:
                continue
            entry = (e.unit_id, 0.0, {}, None, False)
        unit_id, _, exp, chunk, by_keyword = entry
        exp = dict(exp)
        score = e.base_score + e.boost  # exactly the sum of the summands
        if explain:
            exp["summands"] = {**dict(exp.get("summands", {})), "graph_expansion": e.boost}
            exp["graph"] = {
                "base_score": e.base_score,
                "boost": e.boost,
                "rank_before": e.rank_before,
                **graph.explain(e),
            }
            exp["score"] = score
        out.append((unit_id, score, exp, chunk, by_keyword))
    return out
