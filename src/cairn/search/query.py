"""The query language: user text → :class:`Query` → the :class:`cairn.model.TextQuery`
the store ranks.

Syntax (any text is a valid query; nothing raises):

* words — match any of them (OR), ranked by BM25; ``"a phrase"`` matches the words in
  order; ``-word`` / ``-"a phrase"`` excludes units containing it; ``+word`` /
  ``+"a phrase"`` must match (a ``match`` filter, so in every mode, and a term);
* groups ``(a b OR "c d" -e)`` — one term: words side by side inside parentheses must
  all match, ``OR`` separates alternatives, ``-`` excludes within an alternative;
  ``+( … )`` must match, ``-( … )`` excludes (see :func:`parse_query`);
* filters ``key:value`` — ``tag:``, ``type:``, ``todo:`` (a keyword, or ``open`` /
  ``done``), ``priority:``, ``path:`` (substring, or a glob with ``*``), ``source:``
  (a format/provider or a root folder), ``format:``, ``prop:KEY=VALUE`` (or
  ``prop:KEY`` for presence), ``before:`` / ``after:`` (``YYYY[-MM[-DD]]``), ``role:``,
  ``kind:``, ``id:``, ``file:`` (file name), ``heading:`` (heading title), ``section:``
  (outline path), ``level:`` (``2``, ``<=2``, ``1..3``), ``lang:`` (a code unit in
  that language, or a unit holding a fenced code block or an Org ``#+begin_src`` in
  it), and the date filters of
  :mod:`cairn.search.dates`; ``-tag:x`` negates a filter; ``tag:a,b`` is an OR of
  values, repeated filters are AND-ed. An unknown ``key:value`` is searched as text.
  ``deadline:`` / ``scheduled:`` ``soon`` or ``overdue`` leave out tasks in a done
  state (they mean "still to do"; ``past`` keeps them).

Each word is split into the tokens the index makes of text (:mod:`cairn.text`), so
``C++``, ``state-of-the-art``, ``NEAR``, ``*`` and ``"unbalanced`` are plain words. A
word that splits into several tokens (``BENCH-100821``, ``path/to/file.toml``) is a
phrase: it matches the same tokens in the same order as the indexed text. CJK runs
become character bigrams. Turning a :class:`TextQuery` into backend syntax (FTS5
MATCH) is the store's job (:mod:`cairn.store.sqlite.fts`).

Bounds: a query is cut to :data:`MAX_QUERY_CHARS` characters, and only its first
:data:`MAX_TERMS` words or phrases and :data:`MAX_FILTERS` filters are used (a note
says so); lone surrogates (``\ud800``, or a byte that is not UTF-8 in a command-line
argument) become U+FFFD. So every text is a query that answers in bounded time.

``source:`` values that name a folder (``~/notes``, ``./notes``, a path through a
symlink) are expanded and resolved here, so they match the registered root's path.
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from dataclasses import dataclass, field, replace

from cairn.model import Filter, Term, TextQuery
from cairn.search.dates import today as _today
from cairn.search.filters import FILTER_FIELDS, open_only, parse_filter
from cairn.search.stopwords import content_terms
from cairn.text import cjk_run, fts_text, fts_tokens, has_cjk

MAX_QUERY_CHARS = 1000
"""Characters of a query that are read; the rest is ignored, with a note."""
MAX_TERMS = 32
"""Words and phrases of a query that are used; the rest are ignored, with a note."""
MAX_FILTERS = 32
"""Filters of a query that are used; the rest are ignored, with a note."""
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed query: terms, filters, and the original text; ``alternates``: also
    chat messages off a conversation's canonical branch (the request's
    :attr:`~cairn.model.SearchRequest.alternates`, carried to the store by
    :meth:`for_store`)."""

    text: str
    terms: tuple[Term, ...] = ()
    filters: tuple[Filter, ...] = ()
    notes: tuple[str, ...] = field(default=())
    alternates: bool = False

    @property
    def positive(self) -> tuple[Term, ...]:
        """Terms that must (any of them) match."""
        return tuple(t for t in self.terms if not t.negate)

    @property
    def words(self) -> list[str]:
        """Lower-cased tokens of the positive terms, in groups too (for highlighting)."""
        out: list[str] = []
        for t in (leaf for term in self.positive for leaf in term.leaves()):
            out.extend(x.casefold() for x in t.tokens)
            out.extend(t.cjk)
        return out

    @property
    def is_empty(self) -> bool:
        """Nothing to search for and nothing to filter on."""
        return not self.positive and not self.filters

    def for_store(self) -> TextQuery:
        """The query the store ranks: filters, negative terms, and the positive terms
        without English function words when a content word is among them
        (:func:`content_terms`)."""
        neg = tuple(t for t in self.terms if t.negate)
        return TextQuery((*content_terms(self.positive), *neg), self.filters, self.alternates)


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def _term(text: str, negate: bool, phrase: bool = False) -> Term | None:
    text = fts_text(text)
    cjk: list[str] = []
    rest = text
    if has_cjk(text):  # the pattern compiles only for CJK text (start-up)
        for m in cjk_run().finditer(text):
            cjk.extend(_bigrams(m.group()))
        rest = cjk_run().sub(" ", text)
    tokens = tuple(fts_tokens(rest))
    if not tokens and not cjk:
        return None
    return Term(tokens, tuple(cjk), negate, text, phrase)


_LEX = re.compile(r'([-+]?)(\()|([-+]?)"([^"]*)"?|((?:[^\s"]+|"[^"]*"?)+)')
_KNOWN_PREFIX = re.compile(r"^[A-Za-z_][A-Za-z_-]*:")

MAX_DEPTH = 8
"""How deep ``( … )`` groups nest; a ``(`` deeper than that is read as text, with a note."""


@dataclass(slots=True)
class _Frame:
    """An open ``(`` while parsing: its sign (``""``, ``-``, ``+``), its 1-based
    character, and its alternatives so far (each a list of terms)."""

    sign: str
    at: int
    alts: list[list[Term]] = field(default_factory=lambda: [[]])


@dataclass(slots=True)
class _Parse:
    """The state of one :func:`parse_query` run."""

    now: _dt.date
    terms: list[Term] = field(default_factory=list)
    filters: list[Filter] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stack: list[_Frame] = field(default_factory=list)
    too_deep: int = 0
    leaves: int = 0

    def add(self, t: Term | None, must: bool = False, *, new: bool = True) -> None:
        """A word, phrase or group: into the open group's current alternative, else
        the query's terms (``must``: also a ``match`` filter, ``+word``); ``new``: a
        word or phrase just read (counted against :data:`MAX_TERMS`)."""
        if t is None:
            return
        if new:
            self.leaves += 1
            if self.leaves > MAX_TERMS:
                return
        if self.stack:
            self.stack[-1].alts[-1].append(t)
            return
        self.terms.append(t)
        if must:
            leaves = t.leaves()
            self.filters.append(
                Filter(
                    "match",
                    " ".join(x for leaf in leaves for x in leaf.tokens),
                    key=" ".join(x for leaf in leaves for x in leaf.cjk),
                    term=t if t.group else None,
                )
            )

    def open(self, sign: str, at: int) -> None:
        if len(self.stack) >= MAX_DEPTH:
            if not self.too_deep:
                self.notes.append(f"groups nest at most {MAX_DEPTH} deep; deeper '(' read as text")
            self.too_deep += 1
            return
        self.stack.append(_Frame(sign, at))

    def close(self, at: int) -> None:
        if self.too_deep:
            self.too_deep -= 1
            return
        if not self.stack:
            self.notes.append(f"the ')' at character {at} closes no '('; ignored")
            return
        frame = self.stack.pop()
        self.add(_group(frame, self.notes), must=frame.sign == "+", new=False)

    def finish(self) -> None:
        """Close what is still open at the end of the query (one note names them)."""
        self.too_deep = 0
        if self.stack:
            where = ", ".join(str(f.at) for f in self.stack)
            many = len(self.stack) > 1
            self.notes.append(
                f"the '(' at character{'s' if many else ''} {where} {'are' if many else 'is'}"
                " not closed; closed at the end of the query"
            )
        while self.stack:
            self.close(0)


def _group(frame: _Frame, notes: list[str]) -> Term | None:
    """The term of a closed group: its alternatives without empty ones (and without
    English function words beside content words), ``None`` when nothing is left; a
    group of one term is that term."""
    alts: list[tuple[Term, ...]] = []
    for alt in frame.alts:
        pos = [t for t in alt if not t.negate]
        if not pos:
            if alt:
                notes.append(
                    f"an alternative of the group at character {frame.at} only excludes"
                    " words; ignored (a group needs a word to match)"
                )
            continue
        alts.append((*content_terms(pos), *(t for t in alt if t.negate)))
    if not alts:
        if frame.alts == [[]]:
            notes.append(f"the empty group at character {frame.at} is ignored")
        return None
    if len(alts) == 1 and len(alts[0]) == 1:
        return replace(alts[0][0], negate=frame.sign == "-")
    words = " ".join(leaf.text for alt in alts for t in alt if not t.negate for leaf in t.leaves())
    return Term((), (), frame.sign == "-", words, False, tuple(alts))


def parse_query(text: str, *, today: _dt.date | None = None) -> Query:
    """Parse user text into a :class:`Query`. Never raises (for the text).

    A filter value may be quoted to hold spaces: ``type:"BigQuery Table"``,
    ``prop:OWNER="Sam Lee"``, ``path:"Obsidian の拡張"``. A comma-separated list of
    values is an OR (``tag:work,home``, ``prop:status=open,wip``; a comma inside
    quotes is part of the value); repeated filters are AND-ed. Date filters
    (:mod:`cairn.search.dates`) count relative forms from ``today`` (default
    :func:`cairn.search.dates.today`: ``$CAIRN_TODAY`` or the local date).

    Groups: ``(a b OR "c d" -e)`` is one term that matches a unit holding ``a`` and
    ``b``, or the phrase ``c d`` without ``e``: inside parentheses, words side by
    side must all match, ``OR`` (upper case) separates alternatives, ``-`` excludes
    within an alternative, groups nest (at most :data:`MAX_DEPTH` deep). ``+( … )``
    must match, ``-( … )`` excludes. Filters inside a group are ignored (a note
    says so); an unclosed ``(`` is closed at the end and a ``)`` that closes none
    is ignored, each with a note naming its character.
    """
    st = _Parse(today or _safe_today())
    text = _SURROGATE.sub("\ufffd", text or "")
    if len(text) > MAX_QUERY_CHARS:
        text = text[:MAX_QUERY_CHARS]
        st.notes.append(f"query cut to its first {MAX_QUERY_CHARS} characters")
    text = unicodedata.normalize("NFKC", text)
    for m in _LEX.finditer(text):
        if m.group(2) is not None:
            st.open(m.group(1), m.start(2) + 1)
        elif m.group(4) is not None:
            sign = m.group(3)
            st.add(_term(m.group(4), sign == "-", phrase=True), must=sign == "+")
        else:
            _word(st, m.group(5), m.start(5))
    st.finish()
    if st.leaves > MAX_TERMS:
        st.notes.append(f"only the first {MAX_TERMS} of {st.leaves} words and phrases are used")
    filters = st.filters
    if len(filters) > MAX_FILTERS:
        st.notes.append(f"only the first {MAX_FILTERS} of {len(filters)} filters are used")
        filters = filters[:MAX_FILTERS]
    return Query(text, tuple(st.terms), tuple(filters), tuple(st.notes))


def _word(st: _Parse, word: str, start: int) -> None:
    """One whitespace-separated word: ``)`` before or after it closing groups, ``OR``
    and ``AND`` inside a group, a filter, ``+word``/``-word``, or a plain word."""
    lead = len(word) - len(word.lstrip(")")) if st.stack or st.too_deep else 0  # (a )b
    for i in range(lead):
        st.close(start + i + 1)
    word = word[lead:]
    trail = 0
    while word.endswith(")") and word.count(")") > word.count("("):
        word = word[:-1]
        trail += 1
    if word:
        _one_word(st, word)
    for i in range(trail):
        st.close(start + lead + len(word) + i + 1)


def _one_word(st: _Parse, word: str) -> None:
    if st.stack and word in ("OR", "AND"):
        if word == "OR":
            st.stack[-1].alts.append([])
        return
    negate = word.startswith("-") and len(word) > 1
    must = word.startswith("+") and len(word) > 1 and not _KNOWN_PREFIX.match(word[1:])
    body = word[1:] if negate or must else word
    if must:  # +word: a filter that the word matches, and a term that ranks
        st.add(_term(body.replace('"', " "), False), must=True)
        return
    if _KNOWN_PREFIX.match(body):
        key, _, value = body.partition(":")
        key_l = key.casefold()
        raw_value = value
        value = value.replace('"', "")
        if key_l not in FILTER_FIELDS and value and not value.startswith("/"):
            st.notes.append(f"{key}: is not a filter; searched as words")
            if not negate:  # as words, not as the phrase "key value" (title:Login)
                st.add(_term(key, False))
                st.add(_term(value, False))
                return
        if key_l in FILTER_FIELDS:
            if st.stack:
                st.notes.append(
                    f"ignored {key_l}: inside ( … ): filters apply to the whole query"
                    f" ({key_l}:a,b is either value)"
                )
                return
            if not value:
                st.notes.append(f"ignored empty {key_l}: filter")
                return
            f = parse_filter(key_l, raw_value, negate, st.notes, st.now)
            if f:
                st.filters.append(f)
                if open_only(key_l, raw_value, negate):
                    st.filters.append(Filter("todo", "done", negate=True))
            return
    st.add(_term(body.replace('"', " "), negate))


def _safe_today() -> _dt.date:
    try:
        return _today()
    except ValueError:
        return _dt.date.today()
