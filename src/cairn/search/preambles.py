"""One rule of what is listed: a document's title-only preamble is not listed when
another unit of its document is (one result per place to read).

:func:`drop_shadowed` applies it to any list. In the keyword list the rule must not
depend on how deep the list is (:func:`settle_preambles`): a preamble's document keeps
the preamble's place, held by its best other matching unit when it has one, so the top
``k`` hits are a prefix of the top ``k + n``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from cairn.model import Filter, TextQuery, UnitFacts

KeywordSearch = Callable[[TextQuery, int], list[tuple[str, float]]]
"""``(text query, limit) -> [(unit id, BM25)]`` best first (chat-turn context off)."""
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
    search: KeywordSearch,
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
        search: the keyword search (asked for each document's best two units).
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
        top, more = best_two(tq, [d for _, d in pending], search, facts_of)
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
    tq: TextQuery, docs: Sequence[str], search: KeywordSearch, facts_of: FactsOf
) -> tuple[dict[str, list[str]], dict[str, UnitFacts]]:
    """Each document's two best units for ``tq`` (what ``tq`` with ``id:DOC`` lists
    first) and the facts of the units read: one keyword search with ``id:`` naming every
    document (a unit's score does not depend on the filter, so a document's units keep
    their order), read deeper only while a document has fewer than two and the list was
    full."""
    docs = list(dict.fromkeys(docs))
    if not docs:
        return {}, {}
    named = Filter("id", docs[0], any_of=tuple(docs[1:]))
    inside = replace(tq, filters=(*tq.filters, named))
    n = 2 * len(docs)
    while True:
        found = search(inside, n)
        more = facts_of([k for k, _ in found])
        top: dict[str, list[str]] = {d: [] for d in docs}
        for k, _ in found:  # id:DOC names the document's units and a unit called DOC
            owner = more[k].document_id if k in more else None
            for d in dict.fromkeys((owner, k)):
                if d in top and len(top[d]) < 2:
                    top[d].append(k)
        if len(found) < n or all(len(v) == 2 for v in top.values()):
            return top, more
        n *= 4
