"""The linear blend's inputs other than the two lists (:class:`cairn.search.fusion.Signals`):
exact cosine for keyword-only candidates, each unit's age, its note type's weight and
its graph proximity to the best hits."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from cairn.model import UnitFacts
from cairn.search.dense import DenseIndex
from cairn.search.fusion import Signals

Proximity = Callable[[Sequence[tuple[str, float]]], Mapping[str, float]]
"""``[(unit id, score)]`` best first → ``unit id -> graph proximity in [0, 1]``."""


def age_days(f: UnitFacts, now: float) -> float | None:
    """Age in days from a unit's time, its document's modified/created date, or mtime."""
    for v in (f.time, f.modified, f.created):
        if v:
            ts = _parse_time(str(v))
            if ts is not None:
                return max(0.0, (now - ts) / 86400.0)
    return max(0.0, (now - f.mtime) / 86400.0) if f.mtime else None


def _parse_time(value: str) -> float | None:
    v = value.strip().replace("Z", "+00:00")
    try:
        dt = datetime.fromisoformat(v[:10] if len(v) == 10 else v)
    except ValueError:
        try:
            dt = datetime.fromisoformat(v[:10])
        except ValueError:
            return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def blend_signals(
    kw: list[tuple[str, float]],
    sem: list[tuple[str, float]],
    qvec: Any,
    facts: Mapping[str, UnitFacts],
    *,
    dense: DenseIndex | None,
    now: float,
    type_weights: Mapping[str, float],
    graph_proximity: Proximity | None,
) -> Signals:
    """The blend's signals for every unit of ``kw`` and ``sem`` (``[(unit id, score)]``).

    Args:
        kw / sem: the keyword and semantic lists.
        qvec: the query vector (``None``: no cosine for keyword-only units).
        facts: unit id → facts (units without are left out of ages and type weights).
        dense: the vectors searched (``None``: no cosine).
        now: POSIX time ages count from.
        type_weights: case-folded note type → ``retriever_weight``.
        graph_proximity: the ``graph`` term (``None``: 0 for every unit).
    """
    keys = list(dict.fromkeys([k for k, _ in kw] + [k for k, _ in sem]))
    in_sem = {k for k, _ in sem}
    sims: dict[str, float] = {}
    if qvec is not None and dense is not None:
        sims = dense.unit_similarity(qvec, [k for k in keys if k not in in_sem])
    ages: dict[str, float | None] = {}
    tw: dict[str, float] = {}
    for key in keys:
        f = facts.get(key)
        if f is None:
            continue
        ages[key] = age_days(f, now)
        tw[key] = type_weights.get((f.type or "").casefold(), 1.0)
    graph: Mapping[str, float] = {}
    if graph_proximity is not None:  # the γ·graph term: nearness to the top hits
        seeds = sorted({**dict(sem), **dict(kw)}.items(), key=lambda kv: -kv[1])
        graph = graph_proximity(seeds)
    return Signals(sim=sims, age_days=ages, type_weight=tw, graph=dict(graph))
