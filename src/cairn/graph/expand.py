"""Graph expansion for ranking (DESIGN.md, "Retrieval", step 4).

Given ranked hits ``(unit id, score)``, walk 1–2 hops from the top ones along edges
and pass part of each seed's score to the units reached:

    contribution(path) = score(seed) × Π over its edges (alpha × w(relation) × weight(edge)
                                                        × (reverse if walked backwards))

``w(relation)`` comes from :data:`DEFAULT_WEIGHTS` (configurable); relations absent from
the table (or weighted 0) are not walked; a negative weight (``contradicts``) lowers the
target and is not walked further. ``weight(edge)`` is the edge's own strength (OKF
confidence, tag rarity). Walking an edge backwards (a hit that *is linked to by* a
seed) is scaled by ``reverse`` except for symmetric relations. Per (seed, unit) the
strongest path counts; contributions of several seeds add up. The new score is
``base + boost`` (``base`` = 0 for units the search did not return), and each hit keeps
the paths that brought it in, with the edges' evidence, for ``--explain``.

A link to a note (rather than to one of its headings) reaches the note's first unit,
which for a note starting with ``# Title`` holds nothing but the title. So a note-level
link reaches the whole note: the walk goes on from the note's top-level headings too
(the ``parent`` step is kept in the path, at no cost), and the boost lands on the
note's best-ranked unit among the hits, else on its first top-level heading when the
first unit has no body, else on the first unit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cairn.errors import QueryError
from cairn.graph.edges import SYMMETRIC
from cairn.graph.traverse import steps_from
from cairn.model import UnitShape
from cairn.model.graph_results import Step
from cairn.store import EdgeIndex

DEFAULT_WEIGHTS: Mapping[str, float] = {
    "references": 1.0,
    "embeds": 1.0,
    "depends_on": 1.2,
    "derived_from": 1.1,
    "supports": 1.0,
    "refines": 1.0,
    "part_of": 0.8,
    "related": 0.6,
    "contradicts": -0.9,
    "shares_tag": 0.3,
    "shares_property": 0.3,
    "parent": 0.3,
    # relations a language model labels (``cairn enrich``, origin ``llm``)
    "builds_on": 1.0,
    "implements": 1.0,
    "prerequisite": 1.0,
}
"""Per-relation weights (typed relations count most, a contradiction against,
relations by shared tags or properties little; with embeds, refines, implicit,
``parent`` and the relations ``cairn enrich`` labels; ``next``/``previous`` and
``unresolved`` are not walked)."""


@dataclass(frozen=True, slots=True)
class ExpandConfig:
    """Expansion settings.

    Attributes:
        weights: relation → weight (see :data:`DEFAULT_WEIGHTS`).
        hops: 1 or 2.
        alpha: share of a seed's score passed along one edge of weight 1.
        reverse: factor for walking a (non-symmetric) edge from target to source.
        seeds: how many top hits are expanded.
        origins: only walk edges of these origins (``None``: all).
    """

    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    hops: int = 1
    alpha: float = 0.5
    reverse: float = 0.5
    seeds: int = 10
    origins: tuple[str, ...] | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> ExpandConfig:
        """Build from a config table: ``{"hops": 2, "weights": {"related": 0.4}}``;
        given weights are merged over the defaults."""
        if not data:
            return cls()
        weights = dict(DEFAULT_WEIGHTS)
        weights.update({str(k): float(v) for k, v in dict(data.get("weights", {})).items()})
        origins = data.get("origins")
        return cls(
            weights=weights,
            hops=int(data.get("hops", 1)),
            alpha=float(data.get("alpha", 0.5)),
            reverse=float(data.get("reverse", 0.5)),
            seeds=int(data.get("seeds", 10)),
            origins=tuple(origins) if origins else None,
        )


@dataclass(frozen=True, slots=True)
class Path:
    """How a seed's score reached a hit: the steps walked and what they added."""

    seed: str
    steps: tuple[Step, ...]
    contribution: float


@dataclass(frozen=True, slots=True)
class ExpandedHit:
    """A hit after expansion.

    ``rank_before`` is the 1-based rank in the input (``None`` when expansion brought
    the unit in); ``paths`` the strongest path from each seed that reached it.
    """

    unit_id: str
    score: float
    base_score: float
    boost: float
    rank_before: int | None
    paths: tuple[Path, ...] = ()


def expand(
    es: EdgeIndex, hits: Sequence[tuple[str, float]], config: ExpandConfig | None = None
) -> list[ExpandedHit]:
    """Re-score ``hits`` (best first) by graph expansion; returns all input hits plus
    the units reached, best first (ties by input rank, then id). Stub nodes are never
    returned. See the module docstring for the formula.

    Raises:
        QueryError: ``config.hops`` is not 1 or 2.
    """
    cfg = config or ExpandConfig()
    if cfg.hops not in (1, 2):
        raise QueryError(f"expansion hops must be 1 or 2, not {cfg.hops}")
    base = {uid: float(s) for uid, s in hits}
    rank = {uid: i for i, (uid, _s) in reversed(list(enumerate(hits, start=1)))}
    walk_rels = [r for r, w in cfg.weights.items() if w]
    best: dict[tuple[str, str], Path] = {}
    # frontier: (node, seed, carried score, steps so far)
    frontier: list[tuple[str, str, float, tuple[Step, ...]]] = [
        (uid, uid, float(s), ()) for uid, s in hits[: cfg.seeds] if s
    ]
    info: dict[str, tuple[str, int, int]] = _units(es, list(base))
    kids: dict[str, list[tuple[str, Step]]] = {}
    up: dict[str, tuple[str, Step]] = {}
    for _hop in range(cfg.hops):
        if not frontier or not walk_rels:
            break
        # a top-level heading stands for its note too: walk on from the note's first unit
        _learn_up(es, {n for n, *_ in frontier}, info, up)
        frontier += [(up[n][0], seed, c, (*steps, up[n][1]))
                     for n, seed, c, steps in frontier if n in up and up[n][0] != seed]
        by_node: dict[str, list[tuple[str, float, tuple[Step, ...]]]] = {}
        for node, seed, carried, steps in frontier:
            by_node.setdefault(node, []).append((seed, carried, steps))
        reached: list[tuple[str, str, float, tuple[Step, ...]]] = []
        for st in steps_from(es, list(by_node), relations=walk_rels, origins=cfg.origins):
            if st.to.startswith("stub:"):
                continue
            w_rel = cfg.weights.get(st.relation, 0.0)
            factor = cfg.alpha * w_rel * st.weight
            if not st.forward and st.relation not in SYMMETRIC:
                factor *= cfg.reverse
            for seed, carried, steps in by_node[st.frm]:
                if st.to == seed or any(s.frm == st.to for s in steps):
                    continue  # no cycles back through the path
                c = carried * factor
                path = Path(seed, (*steps, st), c)
                key = (seed, st.to)
                old = best.get(key)
                if old is None or abs(c) > abs(old.contribution):
                    best[key] = path
                if w_rel > 0:
                    reached.append((st.to, seed, c, path.steps))
        _learn(es, {n for n, *_ in reached}, info, kids)
        frontier = []
        for node, seed, c, steps in reached:
            frontier.append((node, seed, c, steps))
            # a note-level link reaches the whole note: walk on from its top-level
            # headings too, at no extra cost (the parent step is kept in the path)
            for child, step in kids.get(node, ()):
                if child != seed:
                    frontier.append((child, seed, c, (*steps, step)))
    # Where the boost of a note-level link lands: the note's best-ranked unit among the
    # hits; else its first top-level heading when the first unit has no body (a note
    # that starts with "# Title"); else the first unit itself.
    best_hit_of_doc: dict[str, str] = {}
    for uid, _s in hits:
        d = info.get(uid)
        if d is not None:
            best_hit_of_doc.setdefault(d[0], uid)
    boosts: dict[str, float] = {}
    paths: dict[str, list[Path]] = {}
    for (seed, node), p in sorted(best.items(), key=lambda kv: -abs(kv[1].contribution)):
        target = node
        u = info.get(node)
        if node not in base and u is not None and u[1] == 0:
            alt = best_hit_of_doc.get(u[0])
            if alt is not None and alt != seed:
                target = alt
            elif u[2] == 0 and kids.get(node):
                target = kids[node][0][0]
        if target == seed or any(q.seed == seed for q in paths.get(target, [])):
            continue  # one path per (seed, hit)
        boosts[target] = boosts.get(target, 0.0) + p.contribution
        paths.setdefault(target, []).append(p)
    out = [
        ExpandedHit(
            uid,
            round(base.get(uid, 0.0) + boosts.get(uid, 0.0), 9),
            base.get(uid, 0.0),
            round(boosts.get(uid, 0.0), 9),
            rank.get(uid),
            tuple(sorted(paths.get(uid, []), key=lambda p: -abs(p.contribution))),
        )
        for uid in dict.fromkeys([*base, *boosts])
    ]
    out.sort(key=lambda h: (-h.score, rank.get(h.unit_id, len(rank) + 1), h.unit_id))
    return out


def _units(es: EdgeIndex, unit_ids: Sequence[str]) -> dict[str, tuple[str, int, int]]:
    """``unit id -> (document id, ordinal, body length)``."""
    shapes: Mapping[str, UnitShape] = es.unit_shapes(unit_ids)
    return {u: (s.document_id, s.ordinal, s.body_chars) for u, s in shapes.items()}


def _learn(
    es: EdgeIndex,
    nodes: set[str],
    info: dict[str, tuple[str, int, int]],
    kids: dict[str, list[tuple[str, Step]]],
) -> None:
    """Fill ``info`` for ``nodes`` and ``kids`` (first unit → its top-level headings,
    in document order, with the reversed ``parent`` step) for the first units among
    them."""
    info.update(_units(es, [n for n in nodes if n not in info]))
    firsts = [n for n in nodes if n in info and info[n][1] == 0 and n not in kids]
    if not firsts:
        return
    found: dict[str, list[tuple[str, Step]]] = {n: [] for n in firsts}
    for a in es.in_arcs(firsts, ["parent"]):
        if a.origin == "structural":
            found[a.target].append(
                (a.source, Step(a.id, a.target, a.source, a.relation, a.origin, a.weight, False)))
    info.update(_units(es, [c for lst in found.values() for c, _ in lst if c not in info]))
    for n, lst in found.items():
        lst.sort(key=lambda cs: info.get(cs[0], ("", 1 << 30, 0))[1])
        kids[n] = lst[:20]


def _learn_up(
    es: EdgeIndex,
    nodes: set[str],
    info: dict[str, tuple[str, int, int]],
    up: dict[str, tuple[str, Step]],
) -> None:
    """Fill ``up`` (top-level heading → its note's first unit, with the ``parent`` step)
    for ``nodes``."""
    todo = [n for n in nodes if n not in up and not n.startswith("stub:")]
    if not todo:
        return
    arcs = [a for a in es.out_arcs(todo, ["parent"]) if a.origin == "structural"]
    info.update(_units(es, [a.target for a in arcs if a.target not in info]))
    for a in arcs:
        if info.get(a.target, ("", 1, 0))[1] == 0:
            up[a.source] = (a.target, Step(a.id, a.source, a.target, a.relation, a.origin,
                                           a.weight, True))


def explain(es: EdgeIndex, hit: ExpandedHit) -> dict[str, Any]:
    """The expansion part of ``--explain`` for one hit: its base score, boost, and per
    path the seed and each edge walked: its relation and origin, ``from`` / ``to`` — the
    edge's own source and target as stored (the link goes from ``from`` to ``to``),
    each with title, path and line —, ``direction`` (``out`` when the walk followed
    the edge from source to target, ``in`` when it went against it, from the linked
    note back to the linking one), ``walked_from`` / ``walked_to`` (the ids in walk
    order), and the evidence (e.g. the link text ``[[Answer]]``)."""
    edge_ids = [s.edge_id for p in hit.paths for s in p.steps]
    rows = es.edges_by_ids(edge_ids)
    nodes = es.nodes([n for p in hit.paths for s in p.steps for n in (s.frm, s.to)])

    def label(n: str) -> dict[str, Any]:
        r = nodes.get(n)
        if r is None:
            return {"id": n, "title": None, "path": None, "line": None}
        return {"id": n, "title": r.title, "path": r.path, "line": r.line}

    def edge(s: Step) -> dict[str, Any]:
        source, target = (s.frm, s.to) if s.forward else (s.to, s.frm)
        e = rows.get(s.edge_id)
        return {
            **s.to_mapping(),
            "from": label(source),
            "to": label(target),
            "walked_from": s.frm,
            "walked_to": s.to,
            "evidence": [dict(x) for x in e.evidence[:5]] if e is not None else [],
        }

    return {
        "base": hit.base_score,
        "boost": hit.boost,
        "rank_before": hit.rank_before,
        "paths": [
            {
                "seed": p.seed,
                "contribution": round(p.contribution, 6),
                "edges": [edge(s) for s in p.steps],
            }
            for p in hit.paths
        ],
    }


def proximity(expanded: Sequence[ExpandedHit], *, allow_negative: bool = False) -> dict[str, float]:
    """Graph proximity per unit for the linear blend's ``graph`` term (DESIGN.md,
    "Retrieval" §3): each hit's boost divided by the best base score among the hits,
    clipped to [0, 1] (to [-1, 1] with ``allow_negative``, so ``contradicts`` can lower a
    hit). Units without a boost are left out (proximity 0)."""
    top = max((h.base_score for h in expanded), default=0.0)
    if top <= 0:
        top = max((abs(h.boost) for h in expanded), default=0.0) or 1.0
    lo = -1.0 if allow_negative else 0.0
    return {
        h.unit_id: max(lo, min(1.0, h.boost / top)) for h in expanded if h.boost
    }
