"""The term index (:meth:`cairn.fields.service.FieldsService.terms`): ``cairn terms TERM`` — every
conversation and note where a term occurs, with its counts per month ("what have I
learned about X this quarter")."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from cairn.errors import QueryError
from cairn.formats import conversation_formats
from cairn.model import HEADING, MESSAGE, HitUnit, UnitFacts
from cairn.text import fts_tokens

if TYPE_CHECKING:
    from cairn.store import Store

ALL_UNITS = 1_000_000
"""Units read per term at most (the whole index in practice)."""


@dataclass(frozen=True, slots=True)
class TermDocument:
    """One conversation or note holding the term.

    Attributes:
        document_id / title / path / format: the document (``path`` relative to its
            root).
        source: ``conversation`` or ``note``.
        count: occurrences of the term in it: in its units' text and its headings' own
            titles, each counted once where it is written (not again through the outline
            paths of the units under it, nor a chat message's role-and-time title). A
            conversation's title is its preamble's text, so it counts once.
        units: units holding it; ``first`` / ``last``: the months (``YYYY-MM``) of the
            first and last occurrence.
        months: ``YYYY-MM -> count``, oldest first.
    """

    document_id: str
    title: str
    path: str
    format: str
    source: str
    count: int
    units: int
    first: str
    last: str
    months: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TermsResult:
    """``cairn terms``: the ``term``, its ``total`` count, the ``documents`` holding it
    (most occurrences first), ``months`` (``YYYY-MM -> count`` over all of them, oldest
    first), ``conversations`` and ``notes`` (how many documents of each), ``took_ms``."""

    term: str
    total: int
    conversations: int
    notes: int
    documents: tuple[TermDocument, ...]
    months: Mapping[str, int]
    took_ms: float


def _month(facts: UnitFacts | None) -> str:
    """The month of a unit: its own time (a chat message), else its document's
    modified or created date, else the file's modification time."""
    if facts is not None:
        for iso in (facts.time, facts.modified, facts.created):
            if iso and len(iso) >= 7 and iso[:4].isdigit() and iso[5:7].isdigit():
                return iso[:7]
        if facts.mtime:
            return datetime.fromtimestamp(facts.mtime, UTC).strftime("%Y-%m")
    return "unknown"


def count_phrase(words: Sequence[str], text: str) -> int:
    """Non-overlapping occurrences of the token sequence ``words`` (case-folded) in
    ``text``, tokenised as the FTS index tokenises it."""
    toks = [t.casefold() for t in fts_tokens(text)]
    n, i, k = 0, 0, len(words)
    while k and i <= len(toks) - k:
        if toks[i : i + k] == list(words):
            n += 1
            i += k
        else:
            i += 1
    return n


def find_term(
    store: Store, weights: Mapping[str, float], term: str, *, include_alternates: bool = False
) -> TermsResult:
    """Every document where ``term`` (a word or a phrase) occurs, with counts.

    Args:
        term: the word or phrase (matched as the keyword index tokenises text: case
            and accents as in search, no stemming).
        include_alternates: also chat messages off the canonical branch.

    Returns:
        A :class:`TermsResult`; its months are ``YYYY-MM`` (``unknown`` when a
        unit has no date at all).

    Raises:
        QueryError: the term holds no word.
    """
    from cairn.search.query import parse_query

    t0 = time.perf_counter()
    words = [w.casefold() for w in fts_tokens(term)]
    if not words:
        raise QueryError(f"{term!r}: no word to look for")
    tq = parse_query('"' + " ".join(words) + '"').for_store()
    hits = store.search_text(
        replace(tq, alternates=include_alternates),
        limit=ALL_UNITS,
        weights=weights,
    )
    ids = [uid for uid, _ in hits]
    units: dict[str, HitUnit] = store.hit_units(ids) if ids else {}
    facts: dict[str, UnitFacts] = store.unit_facts(ids) if ids else {}
    per_doc: dict[str, list[tuple[HitUnit, int, str]]] = {}
    for uid in ids:
        u = units.get(uid)
        if u is None:
            continue
        # counted where the words are written, once: a unit's text, and a heading's
        # own title; never the titles it inherits through its outline path (a
        # conversation's title would count once per message) nor a chat
        # message's made-up title (role and time)
        n = count_phrase(words, f"{u.title}\n{u.body}" if u.kind == HEADING else u.body)
        if n == 0:
            continue  # the index matched it by title, outline or tags only
        per_doc.setdefault(u.document_id, []).append((u, n, _month(facts.get(uid))))
    docs: list[TermDocument] = []
    total: Counter[str] = Counter()
    for doc_id, rows in per_doc.items():
        months: Counter[str] = Counter()
        for _, n, month in rows:
            months[month] += n
        total.update(months)
        u = rows[0][0]
        dated = sorted(m for m in months if m != "unknown") or ["unknown"]
        chat = u.format in conversation_formats() or any(r[0].kind == MESSAGE for r in rows)
        docs.append(
            TermDocument(
                doc_id,
                u.doc_title,
                u.path,
                u.format,
                "conversation" if chat else "note",
                sum(months.values()),
                len(rows),
                dated[0],
                dated[-1],
                dict(sorted(months.items())),
            )
        )
    docs.sort(key=lambda d: (-d.count, d.path))
    return TermsResult(
        " ".join(words),
        sum(total.values()),
        sum(1 for d in docs if d.source == "conversation"),
        sum(1 for d in docs if d.source == "note"),
        tuple(docs),
        dict(sorted(total.items())),
        round((time.perf_counter() - t0) * 1000, 1),
    )
