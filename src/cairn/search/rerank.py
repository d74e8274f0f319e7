"""Re-ranking the fused top-k with a cross-encoder, blended by position (as qmd does).

The first ``top_k`` fused results (30 by default) are scored by a
:class:`cairn.embed.rerank.Reranker` against the query's positive words; each gets

    score = w(r) · 1/r  +  (1 − w(r)) · relevance

with ``r`` its 1-based fused rank, ``relevance`` the reranker's score in [0, 1] and the
retrieval weight ``w(r)`` = 0.75 for ranks 1–3, 0.60 for 4–10 and 0.40 beyond, so the
best fused hits need a clearly better passage to be overtaken while the reranker has
its say lower down. Results past ``top_k`` keep their order below every re-scored one
(``w(r)/r`` falls with ``r``, and a re-scored result scores at least ``w(k)/k``). The
two parts are the summands ``retrieval`` and ``rerank`` (they add up to the score); the
fused rank and score stay in ``ranks["fused"]`` / ``raw["fused"]`` and the relevance
in ``raw["rerank"]``, which the explanation shows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from cairn.embed.rerank import Reranker
from cairn.model import HitUnit
from cairn.search.fusion import Fused

PASSAGE_CHARS = 2000
"""Characters of a unit's body sent to the reranker at most (its tokenizer cuts to
``[rerank] max_tokens``)."""


def retrieval_weight(rank: int) -> float:
    """The weight of the fused rank in the blend: 0.75 (ranks 1–3), 0.60 (4–10), 0.40."""
    return 0.75 if rank <= 3 else 0.60 if rank <= 10 else 0.40


def passage_of(unit: HitUnit, window: tuple[int, int] | None = None) -> str:
    """What the reranker reads of a unit: its title, then its body — only the chunk
    ``window`` (``start, end`` offsets) that matched by meaning when the body is longer
    than :data:`PASSAGE_CHARS`, else its first :data:`PASSAGE_CHARS` characters."""
    title = unit.title.strip()
    body = unit.body
    if window is not None and len(body) > PASSAGE_CHARS:
        body = body[window[0] : window[1]]
    body = body.strip()[:PASSAGE_CHARS]
    return f"{title}\n{body}" if title and not body.startswith(title) else body or title


def rerank_fused(
    reranker: Reranker,
    query_text: str,
    fused: Sequence[Fused],
    units: Mapping[str, HitUnit],
    top_k: int,
    windows: Mapping[str, tuple[int, int]] | None = None,
) -> list[Fused]:
    """``fused`` re-ordered by the position-aware blend (see the module docstring).

    Args:
        reranker: scores (query, passage) pairs.
        query_text: the query's positive words and phrases.
        fused: results best first (keys unit ids).
        units: unit id → :class:`HitUnit` of at least the first ``top_k`` results
            (a missing one is scored on an empty passage).
        top_k: how many results are re-scored.
        windows: unit id → the ``(start, end)`` of the chunk that matched by meaning
            (see :func:`passage_of`).

    Returns:
        Every result of ``fused``, best first, with new scores and summands.

    Raises:
        ProviderUnavailable: the reranker failed.
    """
    head = list(fused[: max(0, top_k)])
    win = windows or {}
    passages = [passage_of(units[f.key], win.get(f.key)) if f.key in units else "" for f in head]
    relevance = reranker.score(query_text, passages) if head else []
    out: list[tuple[float, int, Fused]] = []
    for r, f in enumerate(fused, 1):
        w = retrieval_weight(r)
        summands = {"retrieval": w / r}
        raw = {**f.raw, "fused": f.score}
        if r <= len(head):
            p = min(1.0, max(0.0, float(relevance[r - 1])))
            summands["rerank"] = (1.0 - w) * p
            raw["rerank"] = p
        g = Fused(f.key, math.fsum(summands.values()), summands, {**f.ranks, "fused": r}, raw)
        out.append((-g.score, r, g))
    out.sort(key=lambda t: (t[0], t[1]))
    return [g for _, _, g in out]


def explain_rerank(f: Fused, reranker: str | None) -> dict[str, object] | None:
    """The ``rerank`` section of a hit's explanation, or ``None`` when the result was
    not re-ranked: ``{model, rank_before, fused_score, relevance, retrieval_weight}``
    (``relevance`` is ``None`` past ``top_k``)."""
    if "fused" not in f.ranks or "fused" not in f.raw:
        return None
    r = int(f.ranks["fused"])
    return {
        "model": reranker,
        "rank_before": r,
        "fused_score": f.raw["fused"],
        "relevance": f.raw.get("rerank"),
        "retrieval_weight": retrieval_weight(r),
    }
