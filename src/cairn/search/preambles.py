"""One rule of what is listed: a document's title-only preamble is not listed when
another unit of its document is (one result per place to read).

:func:`drop_shadowed` applies it to any list. In the keyword list the rule must not
depend on how deep the list is (:func:`settle_preambles`): a preamble's document keeps
the preamble's place, held by its best other matching unit when it has one, so the top
``k`` hits are a prefix of the top ``k + n``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cairn.model import TextQuery, UnitFacts

BestOf = Callable[[TextQuery, list[str]], dict[str, list[str]]]
"""``(text query, document ids) -> document id -> its two best units`` for the query,
best first (:meth:`cairn.store.keyword.KeywordIndex.best_in_documents`)."""
FactsOf = Callable[[list[str]], dict[str, UnitFacts]]
"""Unit ids → their :class:`UnitFacts` (ids gone from the index are absent)."""


def drop_shadowed(keys: Sequence[Any], facts: Mapping[str, UnitFacts]) -> list[int]:
    """Positions in ``keys`` (unit ids, or items with a ``key``) to keep: units that
    exist, less title-only preambles of a document another kept unit belongs to (one
    result per place to read)."""
    ids = [k if isinstance(k, str) else k.key for k in keys]
    with_content = {facts[u].document_id for u in ids if u in facts and not facts[u].title_only}
    return [
        i
        for i, u in enumerate(ids)
        if u in facts and not (facts[u].title_only and facts[u].document_id in with_content)
    ]


def settle_preambles(
    kw: Sequence[tuple[str, float]],
    tq: TextQuery,
    facts: dict[str, UnitFacts],
    best: BestOf,
    facts_of: FactsOf,
) -> list[tuple[str, float]]:
    """The keyword list with title-only preambles settled the same way at any depth,
    so the top ``k`` is a prefix of the top ``k + n``: a preamble whose document has a
    matching unit ranked above it is dropped; one whose document's best other matching
    unit ranks below it (in the list or, beyond the list, in the store) gives that unit
    its place and score; one whose document has no other match stays. Units gone from
    the index are dropped.

    Args:
        kw: ``[(unit id, BM25)]`` best first, one try's list.
        tq: the query the list answers.
        facts: unit id → facts of the list's units; gains the units found beyond it.
        best: each document's best two units for a query.
        facts_of: reads units' facts.
    """
    best_other: dict[str, str] = {}
    for u, _ in kw:
        f = facts.get(u)
        if f is not None and not f.title_only:
            best_other.setdefault(f.document_id, u)
    if tq.positive:
        pending = [(u, facts[u].document_id) for u, _ in kw if u in facts
                   and facts[u].title_only and facts[u].document_id not in best_other]
        top, more = best_two(tq, [d for _, d in pending], best, facts_of)
        for u, doc in pending:
            if doc in best_other:
                continue
            for k in top.get(doc, ()):
                if k != u and k in more and not more[k].title_only:
                    best_other[doc] = k
                    facts[k] = more[k]
                    break
    out: list[tuple[str, float]] = []
    placed: set[str] = set()
    for u, score in kw:
        f = facts.get(u)
        if f is None or u in placed:
            continue
        if f.title_only and f.document_id in best_other:
            other = best_other[f.document_id]
            if other not in placed:  # ranked below: it takes the preamble's place
                out.append((other, score))
                placed.add(other)
            continue
        out.append((u, score))
        placed.add(u)
    return out


def best_two(
    tq: TextQuery, docs: Sequence[str], best: BestOf, facts_of: FactsOf
) -> tuple[dict[str, list[str]], dict[str, UnitFacts]]:
    """Each document's two best units for ``tq`` (what ``tq`` with ``id:DOC`` lists
    first: :meth:`cairn.store.keyword.KeywordIndex.best_in_documents`) and the facts of
    those units."""
    top = best(tq, list(dict.fromkeys(docs))) if docs else {}
    return top, facts_of([k for units in top.values() for k in units])
