"""Query understanding without a language model: the words of a plain query that name
what notes carry — a tag, a TODO keyword, a note type, a property name or value, a
heading, or a date — and the boost the units carrying it get.

Recognition (:func:`recognise`) compares each phrase of the query (one to
:data:`MAX_WORDS` words in a row, not all function words) with the index's
:class:`Vocabulary` — every tag, TODO keyword, type and property name and value
it holds, filed by the index when it stores a note and looked up per phrase — and keeps
the values the phrase names
exactly: case, punctuation, spacing and a plural ``s`` aside (``sci-fi`` names the genre
``[[Sci-fi]]``, ``movie`` the category ``Movies``, ``in progress`` the keyword
``INPROGRESS``). A property's name counts too (``isbn``), except names no one searches
by (ids, layout, dates). A heading counts when a phrase of two or more words is its
whole title (a look-up in the keyword index's title column). Dates are read from the
words themselves (:func:`dates_in`): ``September 2023``, ``12 March 2024``,
``2024-03``, a year, ``last week``, ``this month``, ``yesterday``.

The boost (:func:`boost`) is not a filter: every result stays, and a unit that carries
a recognised value gains ``BOOST × best score × share``, ``share`` the part of the
query's content words the values it carries cover, as one summand per value
(``matched tag books``), so ``--explain`` shows it and the summands still add up (the
first :data:`DEPTH` results are looked at). Which
results carry a value is asked of the store with the value as a filter (``tag:``,
``todo:``, ``prop:``, ``heading:``, ``ts:``/``created:``) over the results' ids. A value
few units carry (:data:`INJECT` at most; the vocabulary files their ids) brings those
missing from the results in with the boost alone as their score: a TODO state that no
query word matches is still found. A commoner value, and every date, brings in from
the whole index the units that carry it and match another content word of the query
(:func:`bring_in`: one keyword query per filter of the value, at most :data:`FETCH`
units), boosted the same way and shown as ``matched date 2023-05-07 (brought in)``; a
value alone brings in nothing, or a date would flood the results.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cairn.model import Filter, Term, TextQuery
from cairn.search.dates import resolve
from cairn.search.fusion import Fused, make_distinct
from cairn.search.query import Query
from cairn.search.stopwords import STOPWORDS
from cairn.store import Store
from cairn.text import fold_key

BOOST = 1.0
"""Share of the best score a unit gains when what it carries covers every content word
of the query (tuned on the judged set's dev split)."""
MAX_WORDS = 3
"""Longest phrase looked up (words in a row)."""
PROBE = 32
"""Headings read per phrase of two or more words (in index order) to learn whether it
titles one."""
HEADING_PROBES = 4
"""Phrases (the longest) looked up as headings per query at most."""
MAX_PROBES = 16
"""Phrases looked up per query at most (the longest query's cost stays bounded)."""
MAX_VALUES = 24
"""Recognised values per query at most (each costs the boost a look-up)."""
DEPTH = 50
"""Results looked at for boosting: the first ``DEPTH`` (the ranker fetches at least
this many, so a result's boost does not depend on how many results were asked for)."""
INJECT = 10
"""A recognised value carried by at most this many units brings those missing from the
results in (a TODO state no query word matches is found); a commoner one only boosts."""
FETCH = 24
"""Units a recognised value with many carriers (or a date) brings in at most: those
that carry it and match another content word of the query, best keyword match first."""
_MONTHS = {
    m: i + 1
    for i, names in enumerate([
        ("january", "jan"), ("february", "feb"), ("march",), ("april", "apr"), ("may",),
        ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
        ("october", "oct"), ("november", "nov"), ("december", "dec"),
    ])
    for m in names
}  # fmt: skip
_VERBS = frozenset({"may", "march"})
"""Month names that are also common words: a date only beside a day or a year."""
_RELATIVE = {
    ("yesterday",): "yesterday", ("today",): "today",
    ("last", "week"): "last-week", ("this", "week"): "this-week",
    ("last", "month"): "last-month", ("this", "month"): "this-month",
    ("last", "year"): "last-year", ("this", "year"): "this-year",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Recognised:
    """A value of the index a phrase of the query names.

    Attributes:
        kind: ``tag``, ``todo``, ``type``, ``property`` (a name and value, ``key``
            set), ``property name``, ``heading`` or ``date``.
        value: as carried (``books``, ``WAITING``, ``Sci-fi``); a date as ``lo..hi``.
        key: the property's name (``property``, ``property name``).
        words: positions of the query's words it covers.
        carriers: the units that carry it when they are few (at most :data:`INJECT`),
            else empty.
    """

    kind: str
    value: str
    key: str = ""
    words: frozenset[int] = frozenset()
    carriers: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The summand's name in explanations: ``matched tag books``."""
        if self.kind == "property":
            return f"matched property {self.key}={self.value}"
        if self.kind == "date":
            lo, _, hi = self.value.partition("..")
            one_day = hi and _dt.date.fromisoformat(lo) + _dt.timedelta(days=1) == (
                _dt.date.fromisoformat(hi))
            return f"matched date {lo if one_day else self.value}"
        return f"matched {self.kind} {self.value}"

    def filters(self, today: _dt.date) -> list[Filter]:
        """Filters of which any selects the units that carry it (a date: an active or
        inactive timestamp, or the document's ``created``, in its range)."""
        if self.kind in ("tag", "todo", "type"):
            return [Filter(self.kind, self.value)]
        if self.kind == "property":
            return [Filter("prop", self.value, key=self.key)]
        if self.kind == "property name":
            return [Filter("prop", "", key=self.value)]
        if self.kind == "heading":
            return [Filter("heading", self.value)]
        if self.kind == "date":
            day = today.isoformat()
            return [Filter(f, self.value, key=day) for f in ("ts", "ts-inactive", "created")]
        return []


@dataclass(frozen=True, slots=True)
class _Words:
    """The query's words in order (positive words and phrases; groups left out);
    ``blocks``: the spans of a quoted phrase or a word of several tokens (``sci-fi``),
    only ever named whole."""

    tokens: tuple[str, ...]
    content: frozenset[int]
    blocks: tuple[tuple[int, int], ...] = ()

    @classmethod
    def of(cls, query: Query) -> _Words:
        tokens: list[str] = []
        blocks: list[tuple[int, int]] = []
        for t in query.positive:
            if t.group or t.cjk:
                continue
            if len(t.tokens) > 1:
                blocks.append((len(tokens), len(tokens) + len(t.tokens)))
            tokens += t.tokens
        content = frozenset(i for i, w in enumerate(tokens) if w.casefold() not in STOPWORDS)
        return cls(tuple(tokens), content, tuple(blocks))

    def phrases(self) -> list[tuple[int, int]]:
        """``(start, end)`` of the phrases to look up: longest first, each with a
        content word, none starting or ending with a function word except a whole
        phrase of two (``to read``), none cutting a block (``"beta text"`` is not
        ``beta``)."""
        out: list[tuple[int, int]] = []
        n = len(self.tokens)
        for size in range(min(MAX_WORDS, n), 0, -1):
            for i in range(n - size + 1):
                j = i + size
                span = range(i, j)
                if not any(k in self.content for k in span) or any(
                        a < j and i < b and not (i <= a and b <= j) for a, b in self.blocks):
                    continue
                edges_ok = i in self.content and j - 1 in self.content
                if not edges_ok and size != 2:
                    continue
                if size == 1 and (len(self.tokens[i]) < 3 or self.tokens[i].isdigit()):
                    continue
                out.append((i, j))
        return out[:MAX_PROBES]


def dates_in(words: Sequence[str], today: _dt.date) -> list[tuple[str, frozenset[int]]]:
    """Dates written in ``words`` (a query's words in order) as ``(lo..hi, positions)``
    (ISO days, ``hi`` exclusive): ``[day] month [year]``, ``month day [year]``, a
    lone month (its last occurrence up to ``today``; ``May`` and ``March`` only beside a
    day or year), ``YYYY MM [DD]`` (``2024-03`` as the tokenizer splits it), a year
    1900–2099 alone, and the relative forms ``yesterday``, ``today``, ``last week``,
    ``this month`` … (:mod:`cairn.search.dates`)."""
    low = [w.casefold() for w in words]
    out: list[tuple[str, frozenset[int]]] = []
    i = 0
    while i < len(low):
        got = _date_at(low, i, today)
        if got is not None:
            rng, n = got
            out.append((rng, frozenset(range(i, i + n))))
            i += n
        else:
            i += 1
    return out


def _year(w: str) -> int | None:
    return int(w) if len(w) == 4 and w.isdigit() and 1900 <= int(w) <= 2099 else None


def _day(w: str) -> int | None:
    w = re.sub(r"(st|nd|rd|th)$", "", w)
    return int(w) if w.isdigit() and 1 <= int(w) <= 31 and len(w) <= 2 else None


def _date_at(low: Sequence[str], i: int, today: _dt.date) -> tuple[str, int] | None:
    """The date starting at word ``i`` as ``(lo..hi, words it takes)``, else ``None``."""
    for words, rel in _RELATIVE.items():
        if tuple(low[i : i + len(words)]) == words:
            rng = resolve(rel, today)
            return (rng, len(words)) if rng else None
    nxt = low[i + 1] if i + 1 < len(low) else ""
    y = _year(low[i])
    if y is not None and len(nxt) == 2 and nxt.isdigit() and 1 <= int(nxt) <= 12:
        after = low[i + 2] if i + 2 < len(low) else ""
        if _day(after) is not None and len(after) == 2:
            rng = resolve(f"{y}-{nxt}-{after}", today)
            return (rng, 3) if rng else None
        rng = resolve(f"{y}-{nxt}", today)
        return (rng, 2) if rng else None
    start = i
    day = _day(low[i])
    if day is not None and nxt in _MONTHS:
        i += 1
    if low[i] not in _MONTHS:
        return (f"{y}-01-01..{y + 1}-01-01", 1) if y is not None else None
    month = _MONTHS[low[i]]
    j = i + 1
    if day is None and j < len(low) and _day(low[j]) is not None:
        day = _day(low[j])
        j += 1
    year = _year(low[j]) if j < len(low) else None
    if year is not None:
        j += 1
    if year is None and day is None and low[i] in _VERBS:
        return None
    if year is None:  # the last such month (or day) up to today
        year = today.year if (month, day or 1) <= (today.month, today.day) else today.year - 1
    try:
        if day is not None:
            first = _dt.date(year, month, day)
            return f"{first}..{first + _dt.timedelta(days=1)}", j - start
        first = _dt.date(year, month, 1)
    except ValueError:
        return None
    last = _dt.date(year + (month == 12), month % 12 + 1, 1)
    return f"{first}..{last}", j - start


Entry = tuple[str, str, str, tuple[str, ...]]
"""``(kind, key, value, carriers)`` of :class:`Recognised` (carriers: up to
``INJECT + 1`` unit ids)."""


class Vocabulary:
    """The index's tags, TODO keywords, types and property names and values, filed by
    :func:`cairn.text.fold_key` when the index stores a note and read per phrase (a few
    index entries: nothing is read ahead or kept between queries, so a search sees what
    the last index run stored)."""

    def current(self, store: Store) -> Lookup:
        """What ``store`` files, looked up as :func:`recognise` asks."""
        return Lookup(store)


class Lookup:
    """One store's vocabulary by key (:meth:`get`)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def get(self, key: str, default: Sequence[Entry] = ()) -> list[Entry]:
        """The entries filed under ``key`` (``default`` when none), in ``(kind, name,
        value)`` order: a property by its value (kind ``property``) and by its name
        (``property name``, only when few units carry it: a name most notes carry says
        little).

        Raises:
            StoreError: the backend failed.
        """
        out: list[Entry] = []
        for (kind, name, value), ids in self._store.carried_named(key, INJECT + 1):
            if kind != "prop":
                out.append((kind, "", value, tuple(ids)))
            elif value:
                out.append(("property", name, value, tuple(ids)))
            elif len(ids) <= INJECT:
                out.append(("property name", "", name, tuple(ids)))
        return out or list(default)


def recognise(store: Store, query: Query, today: _dt.date,
              vocabulary: Lookup) -> list[Recognised]:
    """The values of the index that phrases of ``query`` name (``vocabulary``:
    :meth:`Vocabulary.current`), the headings they title and the dates they write (see
    the module); longest phrases first, each value once, at most :data:`MAX_VALUES`.

    Raises:
        StoreError: the backend failed.
    """
    words = _Words.of(query)
    if not words.content:
        return []
    found: list[Recognised] = [
        Recognised("date", rng, words=pos) for rng, pos in dates_in(words.tokens, today)
    ]
    dated = {p for r in found for p in r.words}
    seen: set[tuple[str, str, str]] = set()
    probes = HEADING_PROBES
    for i, j in words.phrases():
        if set(range(i, j)) <= dated:
            continue
        want = fold_key(" ".join(words.tokens[i:j]))
        named = list(vocabulary.get(want, ()))
        if j - i >= 2 and probes > 0:
            probes -= 1
            titled: dict[str, list[str]] = {}
            for uid, title in store.headings_titled(Term(words.tokens[i:j]), PROBE):
                if fold_key(title) == want:
                    titled.setdefault(title, []).append(uid)
            named += [("heading", "", t, tuple(ids)) for t, ids in titled.items()]
        for kind, key, value, ids in named:
            if (kind, key, value) not in seen:
                seen.add((kind, key, value))
                few = tuple(ids) if len(ids) <= INJECT else ()
                found.append(Recognised(kind, value, key=key, words=frozenset(range(i, j)),
                                        carriers=few))
    return found[:MAX_VALUES]


def _others(query: Query, words: _Words, r: Recognised) -> tuple[Term, ...]:
    """The query's positive terms that hold a content word ``r`` does not cover (and
    none it covers), as :class:`_Words` numbers their words."""
    out: list[Term] = []
    pos = 0
    for t in query.positive:
        if t.group or t.cjk:
            continue
        span = frozenset(range(pos, pos + len(t.tokens)))
        pos += len(t.tokens)
        if span & words.content and not span & r.words:
            out.append(t)
    return tuple(out)


def bring_in(store: Store, query: Query, found: Sequence[Recognised], *, today: _dt.date,
             weights: Mapping[str, float]) -> list[str]:
    """Units that carry a recognised value too common for its carriers to be filed
    (a date, a common tag) and match another content word of the query, wherever they
    rank: per value, the value's filter(s) and the query's own filters over the query's
    other words (keyword match, its ``alternates`` honoured), :data:`FETCH` at most,
    best match first. A value alone (no other content word) brings in nothing: a date
    or a common tag would flood the results.

    Raises:
        StoreError: the backend failed.
    """
    words = _Words.of(query)
    tq = query.for_store()
    out: dict[str, None] = {}
    for r in found:
        others = _others(query, words, r) if not r.carriers else ()
        if not others:
            continue
        got: list[tuple[str, float]] = []
        for flt in r.filters(today):
            q = TextQuery((*others, *tq.negative), (*tq.filters, flt), tq.alternates)
            got += store.search_text(q, limit=FETCH, weights=weights)
        got.sort(key=lambda g: -g[1])
        out.update(dict.fromkeys(list(dict.fromkeys(u for u, _ in got))[:FETCH]))
    return list(out)


def boost(
    store: Store,
    query: Query,
    fused: Sequence[Fused],
    found: Sequence[Recognised],
    *,
    today: _dt.date,
    weights: Mapping[str, float] | None = None,
) -> tuple[list[Fused], list[str]]:
    """``fused`` with the units carrying what the query names raised, best first, and
    the ids of the units it brought in (see the module).

    Args:
        store: the index.
        query: the parsed query (with its ``alternates``: whether chat messages off
            the canonical branch may be brought in).
        fused: results best first (scores positive, as every mode's are).
        found: what :func:`recognise` found in the query.
        today: the day relative dates count from.
        weights: the keyword index's field weights for :func:`bring_in` (``None``:
            bring in only a value's few filed carriers).

    Raises:
        StoreError: the backend failed.
    """
    words = _Words.of(query)
    top = fused[0].score if fused else 1.0  # nothing else matched: carriers alone
    if not found or not math.isfinite(top) or top <= 0 or not words.content:
        return list(fused), []
    have = {f.key for f in fused}
    tq = query.for_store()
    missing = list(dict.fromkeys(u for r in found for u in r.carriers if u not in have))
    # the query's filters hold for what is brought in; a -word cannot be checked cheaply
    added = ([] if not missing or tq.negative else
             store.filter_units(missing, tq))
    looked = {f.key for f in fused[:DEPTH]}
    deep = ([u for u in bring_in(store, query, found, today=today, weights=weights)
             if u not in looked] if weights is not None else [])
    later = {f.key: f for f in fused[DEPTH:]}
    brought = set(deep)  # from beyond the looked-at results (few carriers: filed)
    added += [u for u in deep if u not in have and u not in added]
    pool = [*fused[:DEPTH], *(later[u] for u in deep if u in later),
            *(Fused(u, 0.0, {}, {}, {}) for u in added)]
    ids = [f.key for f in pool]
    # a unit-level value's few carriers are known; the rest are asked of the store
    carriers = [
        set(r.carriers) if r.carriers and r.kind in ("tag", "todo", "heading") else
        {u for flt in r.filters(today)
         for u in store.filter_units(ids, TextQuery((), (flt,), alternates=True))}
        for r in found
    ]
    n = len(words.content)
    out: list[Fused] = []
    for hit in pool:
        covered: set[int] = set()
        parts: dict[str, float] = {}
        for r, holding in zip(found, carriers, strict=True):
            new = (r.words & words.content) - covered if hit.key in holding else set()
            if new:
                covered |= new
                label = f"{r.label} (brought in)" if hit.key in brought else r.label
                parts[label] = BOOST * top * len(new) / n
        if parts:
            summands = {**hit.summands, **parts}
            hit = Fused(hit.key, math.fsum(summands.values()), summands, hit.ranks, hit.raw)
        out.append(hit)
    pooled = set(ids)
    out += [f for f in fused[DEPTH:] if f.key not in pooled]
    out.sort(key=lambda h: -h.score)
    return make_distinct(out, key_order=False), added
