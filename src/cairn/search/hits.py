"""From ranked unit ids to :class:`cairn.model.Hit` values: snippets, context and
explanations.

With ``explain``, each hit's ``explain`` holds the mode, each list's rank and raw score
(``keyword: {rank, bm25}``, ``semantic: {rank, cosine, chunk}``; a chat message whose
keyword score its neighbouring turns or its speaker raised also has ``keyword.parts``,
named parts adding up to ``bm25``: :func:`cairn.search.turns.keyword_parts`), the fusion settings,
with a reranker ``rerank: {model, rank_before, fused_score, relevance, retrieval_weight}``,
the named ``summands`` and the ``score`` they add up to (``math.fsum``); graph
expansion adds a ``graph_expansion`` summand and a ``graph`` section.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cairn.model import Hit, HitUnit
from cairn.search.dense import DenseHit
from cairn.search.fusion import Fused, FusionConfig
from cairn.search.query import Query
from cairn.search.rerank import explain_rerank
from cairn.search.snippet import first_match, make_snippet, term_patterns
from cairn.store import Store

if TYPE_CHECKING:
    from cairn.model import StoredUnit  # a keyword search never loads the views


def _short(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def hit_context(store: Store, u: HitUnit,
                siblings: Mapping[str, Sequence[str]] | None = None) -> tuple[str, ...]:
    """Sibling heading titles of a heading (from ``siblings``, the batch of
    :meth:`cairn.store.base.Store.siblings_many`, when given); the previous and next
    messages of a chat message (``"user: …"``), so a hit can be read in context."""
    if u.kind == "heading":
        if siblings is not None and u.unit_id in siblings:
            return tuple(siblings[u.unit_id])
        return tuple(store.siblings(u.document_id, u.parent_id, u.unit_id))
    if u.kind == "message":
        unit = store.unit(u.unit_id)
        if unit is not None and unit.extra.get("alternate"):
            return tuple(
                f"{n.extra.get('role') or 'message'}: {_short(n.body or n.title)}"
                for n in _branch_neighbours(store, unit)
            )
        return tuple(
            f"{n.role or 'message'}: {_short(n.body or n.title)}"
            for n in store.neighbours(u.document_id, u.ordinal, "message")
        )
    return ()


def _branch_neighbours(store: Store, unit: StoredUnit) -> list[StoredUnit]:
    """The messages before and after an alternate on its own branch: its parent
    (``extra["parent_message_id"]``) and its first reply, not the canonical branch's
    messages that happen to sit beside it in the document."""
    messages = [m for m in store.units_of(unit.document_id) if m.kind == "message"]
    mid, parent_id = unit.extra.get("message_id"), unit.extra.get("parent_message_id")
    parent = next(
        (m for m in messages if parent_id is not None and m.extra.get("message_id") == parent_id),
        None,
    )
    reply = next(
        (m for m in messages if mid is not None and m.extra.get("parent_message_id") == mid),
        None,
    )
    return [m for m in (parent, reply) if m is not None]


def filters_explained(query: Query) -> list[dict[str, Any]]:
    """The query's filters as JSON-ready dicts ``{field, value, key, negate}``."""
    return [
        {"field": x.field, "value": x.value, "key": x.key, "negate": x.negate}
        for x in query.filters
    ]


def explain_fused(
    f: Fused,
    *,
    mode: str,
    query: Query,
    fusion: FusionConfig,
    chunk: DenseHit | None,
    syntax: str | None,
    model: str | None,
    reranker: str | None = None,
    keyword_parts: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The explanation of one fused result (see the module docstring); a re-ranked
    one also has a ``rerank`` section (:func:`cairn.search.rerank.explain_rerank`).
    ``keyword_parts``: the parts of its keyword raw score
    (:attr:`cairn.search.rank.Ranking.keyword_parts`), shown only when they add up to
    it (a score a preamble passed on is not the message's own)."""
    exp: dict[str, Any] = {"mode": mode}
    kw_name = "keyword" if "keyword" in f.ranks else "bm25"
    sem_name = "semantic" if "semantic" in f.ranks else "cosine"
    if kw_name in f.ranks:
        exp["keyword"] = {"rank": f.ranks[kw_name], "bm25": f.raw[kw_name]}
        if keyword_parts and _adds_up(keyword_parts.values(), f.raw[kw_name]):
            exp["keyword"]["parts"] = dict(keyword_parts)
    if sem_name in f.ranks:
        sem: dict[str, Any] = {"rank": f.ranks[sem_name], "cosine": f.raw[sem_name]}
        if chunk is not None:
            sem["chunk"] = chunk.chunk
        exp["semantic"] = sem
    if mode == "hybrid":
        exp["fusion"] = fusion.method
        if fusion.method == "rrf":
            exp["rrf_k"] = fusion.rrf_k
            exp["list_weights"] = dict(fusion.weights)
            exp["relative"] = fusion.relative
        else:
            exp["blend"] = {
                "alpha": fusion.alpha,
                "beta": fusion.beta,
                "gamma": fusion.gamma,
                "delta": fusion.delta,
                "epsilon": fusion.epsilon,
                "lambda": fusion.decay_lambda,
            }
    if syntax is not None and mode != "semantic":
        exp["fts_query"] = syntax
    if model is not None and mode != "keyword":
        exp["model"] = model
    rr = explain_rerank(f, reranker) if reranker is not None else None
    if rr is not None:
        exp["rerank"] = rr
    exp["summands"] = dict(f.summands)
    exp["score"] = f.score
    exp["filters"] = filters_explained(query)
    return exp


def summands_add_up(explain: Mapping[str, Any], tol: float = 1e-12) -> bool:
    """Whether an explanation's summands add up to its score (within ``tol``)."""
    return _adds_up(explain.get("summands", {}).values(), explain.get("score", math.nan), tol)


def _adds_up(parts: Iterable[Any], total: Any, tol: float = 1e-12) -> bool:
    s = math.fsum(float(v) for v in parts)
    return abs(s - float(total)) <= tol * max(1.0, abs(s))


def build_hits(
    store: Store,
    entries: Sequence[tuple[str, float, dict[str, Any], DenseHit | None, bool]],
    query: Query,
    *,
    first_rank: int = 1,
) -> list[Hit]:
    """Hits for ``(unit id, score, explanation, chunk, matched by keyword)`` entries,
    ranked from ``first_rank``; units gone from the index are skipped.

    The snippet is cut from the chunk that matched by meaning when the unit was not
    also a keyword match, else from the whole body (the title when the body is blank).
    A hit names the first of its unit's Obsidian blocks whose text holds one of the
    query's words (``Hit.block``).
    """
    units = store.hit_units([e[0] for e in entries])
    patterns = term_patterns(query.positive)
    siblings = store.siblings_many(
        [(u.document_id, u.parent_id, u.unit_id) for u in units.values()
         if u.kind == "heading"])
    hits: list[Hit] = []
    for unit_id, score, exp, chunk, by_keyword in entries:
        u = units.get(unit_id)
        if u is None:
            continue
        source = u.body
        if chunk is not None and not by_keyword:
            source = u.body[chunk.start : chunk.end] or u.body
        snippet, highlights = make_snippet(source if source.strip() else u.title, patterns)
        in_block = first_match([b.text for b in u.blocks], patterns) if u.blocks else None
        hits.append(
            Hit(
                rank=first_rank + len(hits),
                score=score,
                unit_id=u.unit_id,
                document_id=u.document_id,
                title=u.title,
                outline_path=u.outline_path,
                doc_title=u.doc_title,
                path=u.path,
                abs_path=f"{u.root_path.rstrip('/')}/{u.path}",
                root=u.root_path,
                format=u.format,
                line_start=u.line_start,
                line_end=u.line_end,
                snippet=snippet,
                kind=u.kind,
                tags=u.tags,
                todo=u.todo,
                siblings=hit_context(store, u, siblings),
                highlights=highlights,
                explain=exp,
                priority=u.priority,
                planning=u.planning,
                block=u.blocks[in_block[0]].id if in_block else None,
            )
        )
    return hits
