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
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from cairn.model import Filter, Term, TextQuery
from cairn.search.dates import DATE_FIELDS, WRITTEN, WRITTEN_FIELDS, resolve
from cairn.search.dates import today as _today
from cairn.text import cjk_run, fts_text, fts_tokens, has_cjk

FILTER_FIELDS = frozenset(
    {
        "tag",
        "type",
        "todo",
        "priority",
        "path",
        "source",
        "format",
        "prop",
        "before",
        "after",
        "role",
        "kind",
        "id",
        "file",
        "heading",
        "section",
        "level",
        "lang",
        *DATE_FIELDS,
    }
)

MAX_QUERY_CHARS = 1000
"""Characters of a query that are read; the rest is ignored, with a note."""
MAX_TERMS = 32
"""Words and phrases of a query that are used; the rest are ignored, with a note."""
MAX_FILTERS = 32
"""Filters of a query that are used; the rest are ignored, with a note."""
_SURROGATE = re.compile("[\ud800-\udfff]")

_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2}(T[\d:]+Z?)?)?)?$")


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
            f = _filters(key_l, raw_value, negate, st.notes, st.now)
            if f:
                st.filters.append(f)
                if _open_only(key_l, raw_value, negate):
                    st.filters.append(Filter("todo", "done", negate=True))
            return
    st.add(_term(body.replace('"', " "), negate))


def _open_only(key: str, raw: str, negate: bool) -> bool:
    """Whether ``deadline:`` / ``scheduled:`` asks for what is still to do: ``soon`` or
    ``overdue`` (every alternative), so a task in a done state (``DONE``, or a keyword
    after ``|`` in the file's ``#+TODO:``) is left out, as Org's agenda leaves it out."""
    parts = _split(raw)
    return (key in ("deadline", "scheduled") and not negate and bool(parts)
            and all(p.strip().casefold() in ("soon", "overdue") for p in parts))


def _valid_date(value: str) -> bool:
    """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` (optionally with a time) naming a real date."""
    if not _DATE.match(value):
        return False
    parts = value[:10].split("-")
    try:
        year = int(parts[0])
        month = int(parts[1]) if len(parts) > 1 else 1
        day = int(parts[2]) if len(parts) > 2 else 1
        _dt.date(year, month, day)
    except ValueError:
        return False
    return True


def _safe_today() -> _dt.date:
    try:
        return _today()
    except ValueError:
        return _dt.date.today()


_COMMA = re.compile(r',(?=(?:[^"]*"[^"]*")*[^"]*$)')
_LEVEL = re.compile(r"^(<=|>=|<|>)?(\d{1,2})(?:\.\.(\d{1,2})?)?$")


def _split(value: str) -> list[str]:
    """A filter value's comma-separated alternatives (quotes kept out), without empties."""
    return [p.replace('"', "") for p in _COMMA.split(value) if p.replace('"', "")]


def _filters(key: str, raw: str, negate: bool, notes: list[str], now: _dt.date) -> Filter | None:
    """One filter of ``key`` with every comma-separated alternative of ``raw``."""
    prefix = ""
    if key == "prop":
        k, sep, v = raw.partition("=")
        if not sep:
            return _filter(key, raw.replace('"', ""), negate, notes, now)
        prefix = k.replace('"', "") + "="
        raw = v
    parts = _split(raw) or [""]
    if key == "type":  # a type is written as a name or as a link to its note: find both
        names = dict.fromkeys(n for p in parts for n in _type_name(p))
        parts = [f for n in names for f in (n, f"[[{n}]]")] or parts
    made = [_filter(key, prefix + p, negate, notes, now) for p in parts]
    kept = [f for f in made if f is not None]
    if not kept:
        return None
    return replace(kept[0], any_of=tuple(f.value for f in kept[1:]))


_LINKED = re.compile(r"^!?\[\[([^\]|#]*)(?:[#|][^\]]*)?\]\]$")


def _type_name(value: str) -> list[str]:
    """A ``type:`` value as the type's name: ``[[Authors]]`` (or ``[[Types/Authors|a]]``)
    is ``Authors``, as the Markdown parser reads a ``type`` front matter value."""
    m = _LINKED.match(value.strip())
    name = m.group(1).strip().rsplit("/", 1)[-1].removesuffix(".md") if m else value.strip()
    return [name] if name else []


def _filter(key: str, value: str, negate: bool, notes: list[str], now: _dt.date) -> Filter | None:
    if key in DATE_FIELDS:
        # "=" first: the date as written, a repeating timestamp not expanded
        written = value.startswith("=") and key in WRITTEN_FIELDS
        value = value[1:] if written else value
        rng = resolve(value, now)
        if rng is None:
            notes.append(
                f"ignored {key}: filter, not a date, range, comparison or relative date: {value!r}"
            )
            return None
        start, _, end = rng.partition("..")
        if start and end and start >= end:  # written backwards (2024-05..2024-03): read forwards
            first, _, last = value.partition("..")
            rng = resolve(f"{last}..{first}", now) or rng
            notes.append(f"{key}:{value} runs backwards; read as {key}:{last}..{first}")
        if written and rng == "soon":
            notes.append(f"{key}:=soon reads as {key}:soon (a due date is always expanded)")
            written = False
        return Filter(key, WRITTEN + rng if written else rng, key=now.isoformat(), negate=negate)
    if key == "level":
        m = _LEVEL.match(value)
        if not m:
            notes.append(f"ignored level: filter, not a heading depth (2, <=2, 1..3): {value!r}")
            return None
        op, a, b = m.group(1), int(m.group(2)), m.group(3)
        lo, hi = {
            None: (a, int(b) if b else (99 if ".." in value else a)),
            "<": (0, a - 1),
            "<=": (0, a),
            ">": (a + 1, 99),
            ">=": (a, 99),
        }[op]
        if lo > hi and op is None:  # level:9..1: read forwards
            lo, hi = hi, lo
            notes.append(f"level:{value} runs backwards; read as level:{lo}..{hi}")
        elif lo > hi:
            notes.append(f"level:{value} matches no heading depth (they run from 0 to 99)")
        return Filter("level", f"{lo}..{hi}", negate=negate)
    if key == "prop":
        k, sep, v = value.partition("=")
        if not k:
            notes.append(f"ignored prop filter without a key: {value!r}")
            return None
        return Filter("prop", v if sep else "", key=k, negate=negate)
    if key == "source":
        value = resolve_source(value)
    if key in ("before", "after") and not _valid_date(value):
        notes.append(f"ignored {key}: filter, not a valid date (YYYY[-MM[-DD]]): {value!r}")
        return None
    return Filter(key, value, negate=negate)


def resolve_source(value: str) -> str:
    """A ``source:`` value naming a folder as the absolute, symlink-free path a root is
    registered under (``~/notes``, ``./notes``, ``/link/to/notes``); other values (a
    format, a provider, a folder name) as given."""
    if not (value.startswith(("~", "/", "./", "../")) or value in (".", "..")):
        return value
    p = Path(value).expanduser()
    try:
        return p.resolve().as_posix() if p.exists() else p.absolute().as_posix()
    except (OSError, RuntimeError):
        return value


STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "do",
        "does",
        "did",
        "for",
        "from",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "so",
        "than",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    }
)
"""English function words dropped from OR-ed queries that also hold a content word."""


def _is_stopword(t: Term) -> bool:
    return not t.cjk and len(t.tokens) == 1 and t.tokens[0].casefold() in STOPWORDS


def content_terms(terms: Sequence[Term]) -> tuple[Term, ...]:
    """``terms`` without single-word English function words (:data:`STOPWORDS`) when
    another term is not one: OR-ing ``the`` or ``to`` matches nearly every unit, costs
    time in proportion, and adds almost nothing to BM25 (their IDF is near zero), nor
    should it be highlighted. Phrases keep every word (``"state of the art"``)."""
    if any(not _is_stopword(t) for t in terms):
        return tuple(t for t in terms if not _is_stopword(t))
    return tuple(terms)
