"""Fusion of ranked lists: Reciprocal Rank Fusion and the linear blend (DESIGN.md,
Retrieval §3).

RRF (the default): ``S(d) = Σ_l w_l / (k + rank_l(d))`` over the lists ``l`` that hold
``d``, ranks 1-based, ``k = 10``, weights keyword 0.5 / semantic 0.5 by default. A small
``k`` keeps the head of each list on top: with ``k = 60`` and 0.6/0.4 a unit only the
semantic list finds scores at most 0.4/61, below a keyword-only unit at rank 31, so it
never reached the first page when the keyword list was long (it nearly always is); with
``k = 10`` and equal weights the semantic list's first unit ties the keyword list's first.
Chosen on the dev splits of the judged notes and of SciFact (``docs/benchmarks.md``).

Ranks alone forget how far apart the scores are: a list whose first unit is far ahead of
its second gives both nearly the same RRF share, and a unit at rank 30 of the other list
still adds a quarter of a first place. So each list also adds a ``rel_<list>`` summand,
``relative · w_l · norm_l(raw)`` with ``norm_l`` the min-max normalised raw score over
the list's first 100 (1 at its head, 0 at its tail), ``relative = 0.1`` by default: a clear head of
either list keeps most of its lead, and a list's tail adds next to nothing. Chosen on the
dev splits of the judged notes, SciFact and LoCoMo (``docs/benchmarks.md``).

Linear blend: ``S = α·sim + β·kw + γ·graph + δ·time_decay + ε·type_weight`` with
``sim`` the cosine similarity of the unit's best chunk (clipped to [0, 1]), ``kw`` the
BM25 score divided by the best BM25 score of the query (so in [0, 1]), ``graph`` a
graph-proximity score in [0, 1] (0 until graph expansion supplies one),
``time_decay = exp(−λ·age_days)`` and ``type_weight`` the note type's
``retriever_weight`` from ``types.yaml`` (1.0 when the type has none). Defaults:
α 0.45, β 0.25, γ 0.20, δ 0.07, ε 0.03, λ 0.0025 per day.

Every fused score is the exact (``math.fsum``) sum of its named summands, which the
explanation lists. Scores are made distinct so evaluation tools that sort by score
alone agree with our order: a ``tiebreak`` summand (at most 1e-6, from the lists' raw
scores) separates RRF near-ties, and equal scores left after that get an ``order``
summand of a few 1e-12 in key order. Ordering is deterministic: score, then key.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from cairn.errors import ConfigError

TIEBREAK_SCALE = 1e-6
ORDER_STEP = 1e-12
RELATIVE_DEPTH = 100
"""The ``rel_<list>`` normalisation reads a list's first this many scores (0 at the last
of them and below), so a unit's summand does not depend on how deep the list was read."""


@dataclass(frozen=True, slots=True)
class FusionConfig:
    """Fusion settings (``[fusion]`` in ``cairn.toml``).

    Attributes:
        method: ``rrf`` or ``linear``.
        rrf_k: the RRF constant.
        weights: per-list RRF weights (``keyword``, ``semantic``).
        alpha / beta / gamma / delta / epsilon: linear blend weights.
        decay_lambda: λ of ``time_decay`` per day.
        relative: weight of the RRF's score-aware summands ``rel_<list>`` (0: ranks only).
        coverage: weight of the ``coverage`` summand of hybrid RRF results, the share
            of the query's rarer words a unit holds (:mod:`cairn.search.coverage`;
            0: off).
        document: weight of the ``document`` summand of hybrid RRF results: a
            document's best unit gains this share of its next two units' weighted,
            normalised list scores (:mod:`cairn.search.documents`; 0, the default: off;
            0.05 raised the judged notes' dev split but lowered its multihop, structured
            and chat kinds, ``docs/benchmarks.md``).
        per_file: with a filter and words, units of one document listed before other
            documents' units (the ``file_crowding`` summand, :mod:`cairn.search.documents`;
            0: off).
        link_hop: weight of the ``link_hop`` summand of hybrid RRF results: the best
            listed unit of a document one of the first three results links to gains
            this share of the linking unit's score (:mod:`cairn.search.documents`; 0: off).
        depth: candidates taken from each list before fusion.
        min_similarity: semantic candidates below this cosine are dropped, so a query
            with no related note does not list unrelated ones by meaning. The default,
            0, drops only anti-correlated ones; the useful floor depends on the model
            (0.2 leaves every SciFact measure unchanged for both shipped models, but
            the static model's scores on short notes are often lower).
        explicit: the keys ``cairn.toml`` set (``weights.keyword`` and
            ``weights.semantic`` for the weights), which a model's recommendation
            (:meth:`with_model`) never overrides; ``None`` (a config built in code):
            every value is as given and no recommendation applies.
    """

    method: str = "rrf"
    rrf_k: float = 10.0
    weights: Mapping[str, float] = field(default_factory=lambda: {"keyword": 0.5, "semantic": 0.5})
    alpha: float = 0.45
    beta: float = 0.25
    gamma: float = 0.20
    delta: float = 0.07
    epsilon: float = 0.03
    decay_lambda: float = 0.0025
    relative: float = 0.1
    coverage: float = 0.4
    document: float = 0.0
    per_file: int = 3
    link_hop: float = 0.0
    depth: int = 100
    min_similarity: float = 0.0
    explicit: frozenset[str] | None = field(default=None, compare=False)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> FusionConfig:
        """Read a ``[fusion]`` table (keys as the attributes; ``lambda`` for λ).

        Raises:
            ConfigError: an unknown method or a value of the wrong type.
        """
        base = cls()
        method = str(data.get("method", base.method))
        if method not in ("rrf", "linear"):
            raise ConfigError("[fusion] method must be 'rrf' or 'linear'")
        try:
            weights = dict(base.weights)
            weights.update({str(k): float(v) for k, v in dict(data.get("weights", {})).items()})
            return cls(
                method=method,
                rrf_k=float(data.get("rrf_k", base.rrf_k)),
                weights=weights,
                alpha=float(data.get("alpha", base.alpha)),
                beta=float(data.get("beta", base.beta)),
                gamma=float(data.get("gamma", base.gamma)),
                delta=float(data.get("delta", base.delta)),
                epsilon=float(data.get("epsilon", base.epsilon)),
                decay_lambda=float(data.get("lambda", data.get("decay_lambda", base.decay_lambda))),
                relative=float(data.get("relative", base.relative)),
                coverage=float(data.get("coverage", base.coverage)),
                document=float(data.get("document", base.document)),
                per_file=int(data.get("per_file", base.per_file)),
                link_hop=float(data.get("link_hop", base.link_hop)),
                depth=int(data.get("depth", base.depth)),
                min_similarity=float(data.get("min_similarity", base.min_similarity)),
                explicit=frozenset(
                    [str(k) for k in data if k != "weights"]
                    + [f"weights.{k}" for k in dict(data.get("weights", {}))]
                ),
            )
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"[fusion] has a value of the wrong type: {exc}") from exc

    def with_model(self, recommended: Mapping[str, Any] | None) -> FusionConfig:
        """These settings with an embedding model's recommended fusion applied where
        ``cairn.toml`` set nothing (see ``explicit``).

        Args:
            recommended: what the model's folder states (its ``fusion.json``, read by
                :func:`cairn.embed.base.read_fusion` into the embedder's ``fusion``):
                ``weights`` (``{"semantic": w}``), ``rrf_k``, ``min_similarity``,
                ``relative``; other keys are ignored, and so is a value of the wrong
                type (a model folder is not the user's configuration). A model whose
                ``rrf_k`` or weights apply but that states no ``relative`` was tuned on
                ranks alone, so ``relative`` is 0 for it (unless ``cairn.toml`` sets it).

        Returns:
            A new config (``self`` when nothing applies).
        """
        if not recommended or self.explicit is None:
            return self
        changes: dict[str, Any] = {}
        weights = dict(self.weights)
        try:
            for name, w in dict(recommended.get("weights", {})).items():
                if f"weights.{name}" not in self.explicit and name in ("keyword", "semantic"):
                    weights[str(name)] = float(w)
            for key in ("rrf_k", "min_similarity", "relative"):
                if key in recommended and key not in self.explicit:
                    changes[key] = float(recommended[key])
        except (TypeError, ValueError, AttributeError):
            return self
        if weights != dict(self.weights):
            changes["weights"] = weights
        ranks_only = ("rrf_k" in changes or "weights" in changes) and "relative" not in recommended
        if ranks_only and "relative" not in self.explicit:
            changes["relative"] = 0.0
        return replace(self, **changes) if changes else self


@dataclass(frozen=True, slots=True)
class Fused:
    """One fused result.

    Attributes:
        key: the item (a unit id in search).
        score: ``math.fsum(summands.values())``.
        summands: named parts of the score.
        ranks / raw: per list, the item's 1-based rank and raw score (lists that do not
            hold the item are absent).
    """

    key: Any
    score: float
    summands: Mapping[str, float]
    ranks: Mapping[str, int]
    raw: Mapping[str, float]


Ranked = Sequence[tuple[Any, float]]
"""A ranked list, best first: ``(key, raw score)`` pairs."""


def _norm(lst: Ranked) -> dict[Any, float]:
    """Min-max normalised raw scores of a list (1.0 for every item of a flat list)."""
    if not lst:
        return {}
    vals = [s for _, s in lst]
    lo, hi = min(vals), max(vals)
    span = hi - lo
    return {k: (s - lo) / span if span > 0 else 1.0 for k, s in lst}


def norm_head(lst: Ranked, depth: int = RELATIVE_DEPTH) -> dict[Any, float]:
    """Raw scores min-max normalised over the list's first ``depth`` items, clipped to
    [0, 1] (1.0 for every item when those are flat)."""
    if not lst:
        return {}
    head = [s for _, s in lst[:depth]]
    lo, hi = min(head), max(head)
    span = hi - lo
    out: dict[Any, float] = {}
    for k, s in lst:
        if k not in out:
            out[k] = min(1.0, max(0.0, (s - lo) / span)) if span > 0 else 1.0
    return out


def _positions(
    lists: Mapping[str, Ranked],
) -> tuple[dict[Any, dict[str, int]], dict[Any, dict[str, float]]]:
    ranks: dict[Any, dict[str, int]] = {}
    raw: dict[Any, dict[str, float]] = {}
    for name, lst in lists.items():
        for i, (key, score) in enumerate(lst, start=1):
            if name in ranks.setdefault(key, {}):
                continue  # a key listed twice keeps its best rank
            ranks[key][name] = i
            raw.setdefault(key, {})[name] = float(score)
    return ranks, raw


def make_distinct(items: list[Fused], *, key_order: bool = True) -> list[Fused]:
    """Sort by (score desc, key asc) and make every score lower than the one before.
    With ``key_order`` false, equal scores keep the order they came in (a single list's
    own order: a filter-only query lists its units in rounds over documents).

    An item whose score is not below its predecessor's (an exact tie) gets an ``order``
    summand of ``−j·1e-12`` with the smallest ``j`` that puts it below, so the order is
    kept, every summand is listed, and the summands still add up to the score.
    """
    if key_order:
        ordered = sorted(items, key=lambda f: (-f.score, str(f.key)))
    else:
        ordered = sorted(items, key=lambda f: -f.score)
    out: list[Fused] = []
    for f in ordered:
        if out and f.score >= out[-1].score:
            summands = dict(f.summands)
            base = f.summands.get("order", 0.0)
            # start near the answer: a run of n ties is O(n), not O(n²) fsums
            step = max(1, int((f.score - out[-1].score) / ORDER_STEP))
            while True:
                summands["order"] = base - step * ORDER_STEP
                score = math.fsum(summands.values())
                if score < out[-1].score:
                    break
                step += 1
            f = Fused(f.key, score, summands, f.ranks, f.raw)
        out.append(f)
    return out


def rrf(
    lists: Mapping[str, Ranked],
    *,
    k: float = 10.0,
    weights: Mapping[str, float] | None = None,
    tiebreak: bool = True,
    unlistable: Mapping[str, Collection[Any]] | None = None,
    relative: float = 0.0,
) -> list[Fused]:
    """Reciprocal Rank Fusion of ranked lists, optionally score-aware.

    Args:
        lists: list name → ``(key, raw score)`` pairs, best first.
        k: the RRF constant.
        weights: list name → weight (missing names weigh 1.0).
        tiebreak: add the ``tiebreak`` summand ``1e-6 · Σ_l w_l·norm_l(raw) / Σ_l w_l``
            (``norm_l`` min-max over list ``l``), which separates near-ties.
        unlistable: list name → keys that list cannot hold (a unit with no vectors
            cannot be in the semantic list: its text is all metadata, or it waits to be
            embedded). Such a key is not penalised for the absence: it gets that list's
            share at its best rank elsewhere, as the summand ``rrf_<list>_unlistable``
            (no ``rel_<list>`` for it: a share of that too lowered the judged notes'
            dev split).
        relative: add ``rel_<list> = relative · w_l · norm_l(raw)`` for each list that
            holds the key (``norm_l`` min-max over the first :data:`RELATIVE_DEPTH` of
            list ``l``, clipped to [0, 1]; 1.0 for a flat list); 0 leaves ranks alone.

    Returns:
        Every key of every list, best first, with summands ``rrf_<list>`` (and
        ``rel_<list>``, ``tiebreak``); scores distinct (see :func:`make_distinct`).
    """
    w = dict(weights or {})
    ranks, raw = _positions(lists)
    norms = {name: _norm(lst) for name, lst in lists.items()}
    heads = {name: norm_head(lst) for name, lst in lists.items()} if relative else {}
    wsum = sum(w.get(n, 1.0) for n in lists) or 1.0
    absent = {n: set(keys) for n, keys in (unlistable or {}).items() if n in lists}
    out: list[Fused] = []
    for key, rk in ranks.items():
        summands = {f"rrf_{n}": w.get(n, 1.0) / (k + r) for n, r in rk.items()}
        if relative:
            for n in rk:
                summands[f"rel_{n}"] = relative * w.get(n, 1.0) * heads[n][key]
        best = min(rk.values())
        for n, keys in absent.items():
            if n not in rk and key in keys:
                summands[f"rrf_{n}_unlistable"] = w.get(n, 1.0) / (k + best)
        if tiebreak:
            tb = sum(w.get(n, 1.0) * norms[n][key] for n in rk) / wsum
            summands["tiebreak"] = TIEBREAK_SCALE * tb
        out.append(Fused(key, math.fsum(summands.values()), summands, rk, raw[key]))
    return make_distinct(out)


@dataclass(frozen=True, slots=True)
class Signals:
    """Per-item inputs of the linear blend other than the lists themselves.

    Attributes:
        sim: cosine similarity for items the semantic list does not hold (e.g. computed
            exactly for keyword-only candidates); items in neither get 0.
        graph: graph proximity in [0, 1].
        age_days: age of the item in days (``None``: no date, decay term 0).
        type_weight: the note type's ``retriever_weight`` (missing: 1.0).
    """

    sim: Mapping[Any, float] = field(default_factory=dict)
    graph: Mapping[Any, float] = field(default_factory=dict)
    age_days: Mapping[Any, float | None] = field(default_factory=dict)
    type_weight: Mapping[Any, float] = field(default_factory=dict)


def linear(
    keyword: Ranked,
    semantic: Ranked,
    signals: Signals | None = None,
    config: FusionConfig | None = None,
) -> list[Fused]:
    """The linear blend ``S = α·sim + β·kw + γ·graph + δ·time_decay + ε·type_weight``.

    Args:
        keyword: ``(key, bm25)`` best first (BM25 as ``-bm25()``, higher is better).
        semantic: ``(key, cosine)`` best first.
        signals: graph, dates, type weights and extra similarities.
        config: the weights and λ.

    Returns:
        Every key of either list, best first, with summands ``sim``, ``kw``, ``graph``,
        ``time_decay``, ``type_weight`` (each already multiplied by its weight); scores
        distinct (see :func:`make_distinct`).
    """
    cfg = config or FusionConfig()
    sig = signals or Signals()
    ranks, raw = _positions({"keyword": keyword, "semantic": semantic})
    best_kw = max((s for _, s in keyword), default=0.0)
    out: list[Fused] = []
    for key, rk in ranks.items():
        r = raw[key]
        sim = r["semantic"] if "semantic" in r else float(sig.sim.get(key, 0.0))
        sim = min(1.0, max(0.0, sim))
        kw = r["keyword"] / best_kw if "keyword" in r and best_kw > 0 else 0.0
        age = sig.age_days.get(key)
        decay = math.exp(-cfg.decay_lambda * max(0.0, age)) if age is not None else 0.0
        summands = {
            "sim": cfg.alpha * sim,
            "kw": cfg.beta * kw,
            "graph": cfg.gamma * float(sig.graph.get(key, 0.0)),
            "time_decay": cfg.delta * decay,
            "type_weight": cfg.epsilon * float(sig.type_weight.get(key, 1.0)),
        }
        out.append(Fused(key, math.fsum(summands.values()), summands, rk, r))
    return make_distinct(out)


def single(name: str, lst: Ranked) -> list[Fused]:
    """One list as fused results: the score is the list's raw score (summand ``name``);
    equal scores keep the list's order."""
    ranks, raw = _positions({name: lst})
    out = [
        Fused(key, raw[key][name], {name: raw[key][name]}, ranks[key], raw[key]) for key in ranks
    ]
    return make_distinct(out, key_order=False)
