"""Query coverage: a fused unit that holds more of the query's rarer words gains, as
the named summand ``coverage`` of its hybrid score.

Fusion reads each list's ranks and scores, and neither says how much of the query a
unit holds. BM25 sums over the words a unit matches, so a short unit that holds one
rare word ("No longer broken" for "why we fix late-arriving rows by re-running instead
of waiting longer") outranks a longer one holding four; the semantic list knows no
words at all. So, after fusion, each of the first :data:`DEPTH` fused units gains

    ``coverage`` = weight × the best fused score × c,

with ``c`` in [0, 1] the weighted share of the query's content words (function words
left out, :func:`cairn.search.stopwords.content_terms`; each word of a phrase on its
own) that the unit's title, outline, document title or text holds. Words are compared
as runs of letters and digits (as the index splits them, combining marks aside),
case-folded and without a common English ending (:func:`stem`: ``-ing``, ``-ed``,
``-es``, ``-s``, ``-ly``), so ``waiting`` matches ``waited``: a rougher cut than the
index's Porter stemmer. A word
weighs ``log(1 + n / (1 + m))`` with ``n`` the units read and ``m`` those of them that
hold it: a word every candidate holds (``sync`` among Obsidian Sync pages) says little
about which one is meant. ``c`` is 0 for a unit that holds fewer than two of the words,
and for a query of fewer than two, where coverage cannot tell units apart.

A dated chat message gains nothing: a turn is a line of a conversation, and an answer
seldom repeats the question's words (the turn before it carries them, which
:mod:`cairn.search.turns` and :mod:`cairn.search.conversation` already weigh); on
LoCoMo's dev conversations, coverage of a turn's own words lowered turn recall@10.

The weight is ``[fusion] coverage`` (:class:`cairn.search.fusion.FusionConfig`; 0 turns
it off). Chosen on the dev splits of the judged notes, SciFact and LoCoMo
(``docs/benchmarks.md``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from cairn.model import HitUnit, Term, UnitFacts
from cairn.search.fusion import Fused, make_distinct
from cairn.search.stopwords import content_terms
from cairn.store import Store

DEPTH = 100
"""Fused units read for coverage (the fusion's own depth per list)."""

MIN_WORDS = 2
"""Fewest query content words a unit must hold to gain anything."""


_ENDINGS = ("ing", "ed", "es", "s", "ly")


def stem(word: str) -> str:
    """``word`` case-folded, without one common English ending when more than three
    letters stay (``running`` → ``runn``, ``arrives`` → ``arrive``, ``tasks`` → ``task``;
    ``rows`` and ``news`` are kept whole)."""
    w = word.casefold()
    for end in _ENDINGS:
        if len(w) > len(end) + 3 and w.endswith(end):
            return w[: -len(end)]
    return w


def query_words(terms: Sequence[Term]) -> frozenset[str]:
    """The stems of the positive content words of ``terms`` (negated terms, function
    words and CJK bigrams left out; a phrase or group gives each of its words)."""
    words = {
        stem(tok)
        for term in content_terms([t for t in terms if not t.negate])
        for leaf in term.leaves()
        for tok in leaf.tokens
    }
    return frozenset(words)


def unit_words(unit: HitUnit, words: frozenset[str]) -> frozenset[str]:
    """Which of the query's stems ``words`` a unit's title, outline, document title and
    text hold: the stems of its words that begin with one of them (one scan of the
    folded text; a word holding a stem must begin with it)."""
    if not words:
        return frozenset()
    text = "\n".join((unit.title, " ".join(unit.outline_path), unit.doc_title, unit.body))
    starts = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    found = re.findall(rf"(?<![^\W_])(?:{starts})[^\W_]*", text.casefold())
    return frozenset(stem(t) for t in set(found)) & words


def shares(words: frozenset[str], held: dict[str, frozenset[str]]) -> dict[str, float]:
    """Weighted share of the query's ``words`` each unit holds (the module docstring's
    ``c``).

    Args:
        words: the query's stems (:func:`query_words`).
        held: key → the stems a unit holds (:func:`unit_words`).

    Returns:
        key → ``c`` in [0, 1] (0 for a unit holding fewer than :data:`MIN_WORDS` of
        the words; every key 0 when the query has fewer than that).
    """
    if len(words) < MIN_WORDS or not held:
        return dict.fromkeys(held, 0.0)
    n = len(held)
    weight = {w: math.log(1 + n / (1 + sum(w in h for h in held.values()))) for w in words}
    total = math.fsum(weight.values())
    out: dict[str, float] = {}
    for key, h in held.items():
        hit = words & h
        ok = len(hit) >= MIN_WORDS and total > 0
        out[key] = math.fsum(weight[w] for w in sorted(hit)) / total if ok else 0.0
    return out


def add_coverage(
    store: Store, terms: Sequence[Term], fused: Sequence[Fused], weight: float,
    facts: Mapping[str, UnitFacts],
) -> list[Fused]:
    """``fused`` (best first, unit ids as keys) with the ``coverage`` summand added to
    its first :data:`DEPTH` units that are not dated chat messages (``facts``: unit
    facts of the fused units), re-sorted; the same order when ``weight`` is 0, the
    query has fewer than :data:`MIN_WORDS` content words, or no unit gains. Raises
    what the store raises."""
    if weight <= 0 or not fused:
        return list(fused)
    words = query_words(terms)
    if len(words) < MIN_WORDS:
        return list(fused)
    head = [f.key for f in fused[:DEPTH]
            if (fact := facts.get(f.key)) is None or fact.time is None]
    units = store.hit_units(head)
    c = shares(words, {k: unit_words(units[k], words) for k in head if k in units})
    top = fused[0].score
    out: list[Fused] = []
    changed = False
    for f in fused:
        share = c.get(f.key, 0.0)
        if share > 0:
            summands = {**f.summands, "coverage": weight * top * share}
            summands.pop("order", None)  # make_distinct sets it again where needed
            f = Fused(f.key, math.fsum(summands.values()), summands, f.ranks, f.raw)
            changed = True
        out.append(f)
    return make_distinct(out) if changed else out
