"""Org objects found inside text: links, timestamps, targets, statistics cookies.

Follows the Org syntax document (``org-syntax.org``), section *Objects*:

* *Links* — regular ``[[PATHREG]]`` / ``[[PATHREG][DESCRIPTION]]``, angle
  ``<LINKTYPE:PATHANGLE>`` and plain ``LINKTYPE:PATHPLAIN`` links (radio links are not
  extracted: they need the whole buffer's radio targets and carry no target of their own).
* *Timestamps* — the seven patterns (diary, active, inactive, ranges), with repeaters and
  warning delays.
* *Targets and Radio Targets*, *Statistics Cookies*.

Every pattern is written with possessive quantifiers (Python >= 3.11) or bounded classes
so that scanning is linear in the input: no input can make a regex backtrack
catastrophically (a 5 MB paragraph is scanned in well under a second).
"""

from __future__ import annotations

import re
import string
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from cairn.model import ORG_FILE, ORG_HEADING, ORG_ID, URL, Link, Timestamp

# Link types of a vanilla Org (``org-link-parameters``) plus the ones commonly
# registered by bundled libraries (org-id, ol-doi, ol-info, org-attach, ol-bibtex …).
# Plain and angle links are only recognised for these types, or for ``TYPE://``.
KNOWN_LINK_TYPES = frozenset(
    {
        "http", "https", "ftp", "mailto", "file", "id", "doi", "news", "shell", "elisp",
        "help", "info", "attachment", "bibtex", "docview", "gnus", "irc", "rmail", "mhe",
        "eww", "man", "woman", "bbdb", "w3m", "ssh", "file+sys", "file+emacs", "cite",
    }
)  # fmt: skip

# --- regular links (org-syntax: Links > Regular links) -------------------------------
# PATHREG: any character but unescaped square brackets; DESCRIPTION: anything but "]]".
# A description cannot hold "[[" (only plain or angle links may nest in it), which also
# keeps the scan linear: an unclosed "[[a][" stops at the next "[[".
_BRACKET_RE = re.compile(
    r"\[\[((?:[^\[\]\\]++|\\.)++)\]"
    r"(?:\[((?:[^\[\]]++|\[(?!\[)|\](?!\]))*+)\])?\]",
    re.DOTALL,
)
# --- angle links (org-syntax: Links > Angle links) -----------------------------------
_ANGLE_RE = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]*+):([^<>\n]++)>")
# --- plain links (org-syntax: Links > Plain links) -----------------------------------
_PLAIN_CHARS = r"[^\s\[\]<>()]"
_PLAIN_RE = re.compile(
    r"(?<![\w+.-])([A-Za-z][A-Za-z0-9+.-]*+):("
    rf"(?:{_PLAIN_CHARS}++|\((?:{_PLAIN_CHARS}++|\({_PLAIN_CHARS}*+\))*+\))++"
    r")"
)
# cheap pre-check for plain/angle links: a scheme character, ":", a non-space (written
# to start with the ":", so the regex engine skips to each colon instead of trying
# every position); every plain link's colon is one of these
_LINK_HINT_RE = re.compile(r":(?<=[A-Za-z0-9+.-]:)(?=\S)")
_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")
_SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*+):")
_WS_RE = re.compile(r"\s+")
_UNESCAPE_RE = re.compile(r"\\([\[\]\\])")
_TRAILING_PUNCT = frozenset(string.punctuation) - {"/", ")"}

# --- timestamps (org-syntax: Timestamps) ---------------------------------------------
# Like org-element, a timestamp is a date followed by anything up to the closing bracket
# (``org-ts-regexp-both``); day name, time(s), repeater and delay are then read from it.
_TS_RE = re.compile(r"([<\[])(\d{4}-\d{2}-\d{2})((?:[ \t][^\]>\[<\n]*+)?)([>\]])")
_TIME_RE = re.compile(r"(?<![\d:])(\d{1,2}:\d{2})(?:-{1,2}(\d{1,2}:\d{2}))?")
_REPEATER_RE = re.compile(r"(?<!\S)((?:\+\+|\.\+|\+)\d+[hdwmy](?:/\d+[hdwmy])?)(?!\S)")
_WARNING_RE = re.compile(r"(?<!\S)(--?\d+[hdwmy])(?!\S)")
_DIARY_RE = re.compile(r"<%%(\([^>\n]*?\))(?:[ \t]+(\d{1,2}:\d{2})(?:-(\d{1,2}:\d{2}))?)?>")
_DATE_RE = re.compile(
    r"(?<!\d)(\d{4})([-/.])(\d{1,2})\2(\d{1,2})(?!\d)(?:[^\d\n]{0,20}?(\d{1,2}:\d{2}))?"
)

# --- targets, cookies (org-syntax: Targets and Radio Targets, Statistics Cookies) ----
_TARGET_RE = re.compile(r"(?<!<)<<([^<>\n\s](?:[^<>\n]*+(?<=[^<>\n\s]))?)>>(?!>)")
_RADIO_RE = re.compile(r"<<<([^<>\n\s](?:[^<>\n]*+(?<=[^<>\n\s]))?)>>>")
_COOKIE_RE = re.compile(r"\[(\d*+%|\d*+/\d*+)\]")


@dataclass(slots=True)
class TextScan:
    """Result of :func:`scan_text`: the text with link markup reduced, links, timestamps."""

    text: str
    links: list[Link]
    timestamps: list[Timestamp]


def classify_link(path: str, desc: str | None, raw: str, line: int) -> Link | None:
    """Turn the PATH of an Org link into a :class:`cairn.model.Link`.

    ``path`` is the link path as written (whitespace runs are collapsed to one space and
    ``\\]`` ``\\[`` ``\\\\`` unescaped, as org-syntax *Regular links* says). Kinds:

    * ``id:X`` → ``org-id`` with target ``X`` (an ``::option`` becomes the anchor);
    * ``file:P::OPT``, ``file+sys:``/``file+emacs:``, and paths starting ``/``, ``./``,
      ``../``, ``~`` → ``org-file``, target = ``P`` as written, anchor = ``OPT``;
    * ``*Heading``, ``#custom-id`` and fuzzy text → ``org-heading``, target as written;
    * any other ``scheme:…`` → ``url`` with the whole link as target.

    Coderefs ``(ref)`` point inside a source block and are not returned (``None``).
    """
    p = _WS_RE.sub(" ", path.strip())
    if "\\" in p:
        p = _UNESCAPE_RE.sub(r"\1", p)
    alias = desc if desc else None
    if not p:
        return None
    low = p[:12].lower()
    if low.startswith("id:"):
        target, anchor = _split_option(p[3:])
        return Link(ORG_ID, target.strip(), alias, anchor, line, raw)
    if low.startswith(("file:", "file+sys:", "file+emacs:")):
        rest = p[p.index(":") + 1 :]
        target, anchor = _split_option(rest)
        return Link(ORG_FILE, target, alias, anchor, line, raw)
    if p.startswith(("/", "./", "../", "~")):
        target, anchor = _split_option(p)
        return Link(ORG_FILE, target, alias, anchor, line, raw)
    if p.startswith(("*", "#")):
        return Link(ORG_HEADING, p, alias, None, line, raw)
    if p.startswith("(") and p.endswith(")"):
        return None  # coderef
    m = _SCHEME_RE.match(p)
    if m is not None:
        if len(m.group(1)) == 1 and p[2:3] in ("/", "\\"):  # C:/path on Windows
            target, anchor = _split_option(p)
            return Link(ORG_FILE, target, alias, anchor, line, raw)
        return Link(URL, p, alias, None, line, raw)
    return Link(ORG_HEADING, p, alias, None, line, raw)


def _split_option(s: str) -> tuple[str, str | None]:
    """Split ``path::option`` into ``(path, option)``; the option is kept as written."""
    i = s.find("::")
    if i < 0:
        return s, None
    return s[:i], s[i + 2 :]


def _display(path: str) -> str:
    """What a link without description shows in the searchable body text."""
    p = _WS_RE.sub(" ", path.strip())
    if p.startswith("*"):
        return p[1:]
    if p[:5].lower() == "file:":
        return p[5:]
    return p


def _trim_plain(path: str) -> str:
    """Drop trailing punctuation a plain link cannot end with (org-syntax: Plain links)."""
    end = len(path)
    while end > 0:
        ch = path[end - 1]
        unbalanced = ch == ")" and path.count("(", 0, end) < path.count(")", 0, end)
        if ch in _TRAILING_PUNCT or unbalanced:
            end -= 1
        else:
            break
    return path[:end]


def _link_type_ok(scheme: str, path: str) -> bool:
    return scheme.lower() in KNOWN_LINK_TYPES or path.startswith("//")


LinkSpan = tuple[int, int, str | None, Link | None]
"""``(start, end, shown, link)`` of one link in a text: ``shown`` is what Org displays
for a bracket or angle link (``None`` for a plain link, shown as written), ``link`` its
:class:`cairn.model.Link` with ``line`` 0 (``None`` for a coderef)."""


def _plain_matches(text: str, start: int, end: int) -> Iterator[re.Match[str]]:
    """``_PLAIN_RE.finditer(text, start, end)``, found from the colons that can be a
    plain link's (:data:`_LINK_HINT_RE`) rather than tried at every position: a match
    starts where the run of scheme characters before its colon starts (the lookbehind
    refuses any later start), and the next search starts where a match ended."""
    done = start
    for hint in _LINK_HINT_RE.finditer(text, start, end):
        colon = hint.start()
        if colon < done:
            continue
        at = colon
        while at > start and text[at - 1] in _SCHEME_CHARS:
            at -= 1
        m = _PLAIN_RE.match(text, at, end)
        if m is not None:
            done = m.end()
            yield m


def link_spans(text: str) -> list[LinkSpan]:
    """Every regular, angle and plain link of ``text`` in text order (org-syntax
    *Links*), as :data:`LinkSpan` values; linear in the text."""
    if not ("[[" in text or (":" in text and _LINK_HINT_RE.search(text))):
        return []
    items: list[LinkSpan] = []
    if "[[" in text:
        for m in _BRACKET_RE.finditer(text):
            desc = m.group(2)
            lk = classify_link(m.group(1), desc, m.group(0), 0)
            items.append((m.start(), m.end(), desc or _display(m.group(1)), lk))
    gaps: list[tuple[int, int]] = []
    prev = 0
    for s, e, _, _ in items:
        gaps.append((prev, s))
        prev = e
    gaps.append((prev, len(text)))
    for gs, ge in gaps:
        if ge - gs < 4 or _LINK_HINT_RE.search(text, gs, ge) is None:
            continue
        angle_spans: list[tuple[int, int]] = []
        if text.find("<", gs, ge) >= 0:
            for m in _ANGLE_RE.finditer(text, gs, ge):
                if not _link_type_ok(m.group(1), m.group(2)):
                    continue
                inner = m.group(1) + ":" + m.group(2)
                lk = classify_link(inner, None, m.group(0), 0)
                items.append((m.start(), m.end(), inner, lk))
                angle_spans.append((m.start(), m.end()))
        ai = 0
        for m in _plain_matches(text, gs, ge):
            if not _link_type_ok(m.group(1), m.group(2)):
                continue
            while ai < len(angle_spans) and angle_spans[ai][1] <= m.start():
                ai += 1
            if ai < len(angle_spans) and angle_spans[ai][0] <= m.start():
                continue
            path = _trim_plain(m.group(2))
            if not path:
                continue
            inner = m.group(1) + ":" + path
            lk = classify_link(inner, None, inner, 0)
            items.append((m.start(), m.start() + len(inner), None, lk))
    items.sort(key=lambda t: t[0])
    if items and ("=" in text or "~" in text):
        items = _outside_verbatim(text, items)
    return items


# --- verbatim and code (org-syntax: Emphasis Markers) --------------------------------
# ``=v=``/``~c~``: PRE, the marker, contents that neither start nor end with whitespace
# (at most two lines), the marker, POST. Nothing inside is an object, so a link there is
# text; a link that starts first wins over a marker inside it.
# Both start with the marker, so the regex engine skips from marker to marker instead
# of trying every position; PRE is checked apart (at the text's start, after a blank,
# or after one of -({'").
_VERB_OPEN = re.compile(r"([=~])(?=\S)")
_VERB_PRE = "-({'\""
_VERB_CLOSE = re.compile(r"([=~])(?<=\S[=~])(?=[\s\-.,;:!?')}\[\"\\]|$)", re.M)


def verbatim_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every verbatim or code object of ``text``, left to right;
    each opener takes the first closer of its marker (as Org does), so the time is
    about linear (one bisection per opener)."""
    closers: dict[str, list[int]] = {}
    for m in _VERB_CLOSE.finditer(text):
        closers.setdefault(m.group(1), []).append(m.start())
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _VERB_OPEN.finditer(text):
        i = m.start(1)
        if i < pos:
            continue
        if i and not (text[i - 1].isspace() or text[i - 1] in _VERB_PRE):
            continue
        ends = closers.get(m.group(1), [])
        k = bisect_right(ends, i + 1)
        if k < len(ends) and text.count("\n", i, ends[k]) <= 1:
            pos = ends[k] + 1
            spans.append((i, pos))
    return spans


def _outside_verbatim(text: str, items: list[LinkSpan]) -> list[LinkSpan]:
    """``items`` without the links that stand inside verbatim or code (whichever
    object starts first holds the other's characters)."""
    spans = verbatim_spans(text)
    if not spans:
        return items
    out: list[LinkSpan] = []
    held = 0  # end of the last object kept
    j = 0
    for item in items:
        s = item[0]
        while j < len(spans) and spans[j][0] < s:
            if spans[j][0] >= held:
                held = spans[j][1]
            j += 1
        if s < held:
            continue
        out.append(item)
        held = item[1]
    return out


def scan_text(text: str, first_line: int, *, links: bool = True, reduce: bool = True) -> TextScan:
    """Find links and timestamps in a run of Org text and reduce link markup.

    Args:
        text: one paragraph-like run of lines joined with ``\\n`` (no ``\\r``).
        first_line: the 1-based line number of the run's first line.
        links: whether to extract links (``False`` still finds timestamps).
        reduce: whether to replace ``[[t][d]]`` by ``d`` (``[[t]]`` by ``t``) and
            ``<scheme:x>`` by ``scheme:x`` in the returned text.

    Returns:
        A :class:`TextScan`; links are in text order and their ``line`` values are 1-based
        file lines. Timestamps get role ``body``.
    """
    found: list[Link] = []
    reduced = text
    items = link_spans(text) if links else []
    if items:
        line = first_line
        counted = 0
        out: list[str] = []
        pos = 0
        for s, e, shown, lk in items:
            if lk is not None:
                line += text.count("\n", counted, s)
                counted = s
                found.append(Link(lk.kind, lk.target, lk.alias, lk.anchor, line, lk.raw))
            if reduce and shown is not None:
                out.append(text[pos:s])
                out.append(shown)
                pos = e
        if reduce and pos:
            out.append(text[pos:])
            reduced = "".join(out)
    stamps = find_timestamps(text, "body") if ("<" in text or "[" in text) else []
    return TextScan(reduced, found, stamps)


def _iso(date: str, time: str | None) -> str:
    if not time:
        return date
    h, m = time.split(":")
    return f"{date}T{int(h):02d}:{m}"


def find_timestamps(text: str, role: str) -> list[Timestamp]:
    """Every timestamp object in ``text`` (org-syntax: *Timestamps*), with ``role``.

    Date ranges ``<a>--<b>`` become one timestamp with ``end``; ``<d 10:00-11:00>`` gets
    ``end`` on the same day. Diary sexps ``<%%(…)>`` are kept raw with ``diary=True`` and
    the sexp in ``start``. Bracket types must match (``<…]`` is not a timestamp).
    """
    out: list[Timestamp] = []
    starts: list[int] = []
    pos = 0
    n = len(text)
    while pos < n:
        m = _TS_RE.search(text, pos)
        if m is None:
            break
        opener, closer = m.group(1), m.group(4)
        if (opener == "<") != (closer == ">"):
            pos = m.start() + 1
            continue
        active = opener == "<"
        date, rest = m.group(2), m.group(3)
        t1 = t2 = repeater = warning = None
        if rest:
            tm = _TIME_RE.search(rest)
            if tm is not None:
                t1, t2 = tm.group(1), tm.group(2)
            if "+" in rest:
                rm = _REPEATER_RE.search(rest)
                repeater = rm.group(1) if rm else None
            if "-" in rest:
                wm = _WARNING_RE.search(rest)
                warning = wm.group(1) if wm else None
        start = _iso(date, t1)
        end = _iso(date, t2) if t2 and t1 else None
        raw_end = m.end()
        if text.startswith("--", raw_end):
            m2 = _TS_RE.match(text, raw_end + 2)
            if m2 is not None and m2.group(1) == opener and (m2.group(4) == ">") == active:
                tm2 = _TIME_RE.search(m2.group(3)) if m2.group(3) else None
                end = _iso(m2.group(2), tm2.group(1) if tm2 else None)
                raw_end = m2.end()
        out.append(
            Timestamp(text[m.start() : raw_end], active, start, end, repeater, warning, role)
        )
        starts.append(m.start())
        pos = raw_end
    if "<%%(" in text:
        pairs = list(zip(starts, out, strict=True))
        for d in _DIARY_RE.finditer(text):
            ts = Timestamp(d.group(0), True, d.group(1), None, None, None, role, True)
            pairs.append((d.start(), ts))
        pairs.sort(key=lambda p: p[0])
        out = [t for _, t in pairs]
    return out


def find_targets(text: str) -> tuple[list[str], list[str]]:
    """Dedicated targets ``<<t>>`` and radio targets ``<<<t>>>`` in ``text``."""
    if "<<" not in text:
        return [], []
    radios = [m.group(1) for m in _RADIO_RE.finditer(text)]
    targets = [m.group(1) for m in _TARGET_RE.finditer(text)]
    return targets, radios


def strip_targets(text: str) -> str:
    """``text`` with each radio target ``<<<t>>>`` and dedicated target ``<<t>>``
    reduced to its text ``t``, as a heading title shows it."""
    if "<<" not in text:
        return text
    text = _RADIO_RE.sub(r"\1", text)
    return _TARGET_RE.sub(r"\1", text)


def statistics_cookies(title: str) -> list[str]:
    """Statistics cookies ``[2/5]`` / ``[40%]`` in a heading title, as written."""
    if "[" not in title:
        return []
    return [m.group(0) for m in _COOKIE_RE.finditer(title)]


def date_of(value: str) -> str | None:
    """The first date in ``value`` as ISO ``YYYY-MM-DD[THH:MM]``, or ``None``.

    Accepts ``YYYY-MM-DD`` (a timestamp), ``YYYY/MM/DD`` and ``YYYY.MM.DD``, with a time
    when one follows within a few characters; impossible months or days give ``None``.
    """
    m = _DATE_RE.search(value)
    if m is None:
        return None
    month, day = int(m.group(3)), int(m.group(4))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return _iso(f"{m.group(1)}-{month:02d}-{day:02d}", m.group(5))
