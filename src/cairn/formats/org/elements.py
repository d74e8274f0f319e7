"""Element scanner: one section's lines → a flat list of Org elements.

Follows the Org syntax document, section *Elements*: planning (*Planning*), property
drawers (*Property Drawers*, *Node Properties*), drawers (*Drawers and Property
Drawers*), greater and lesser blocks (*Greater Blocks*, *Blocks*, *Dynamic Blocks*),
keywords and babel calls (*Keywords*, *Babel Call*, *Affiliated Keywords*), comments
(*Comments*), fixed-width areas (*Fixed Width Areas*), tables (*Tables*), clocks
(*Clock*), diary sexps (*Diary Sexp*), horizontal rules (*Horizontal Rules*); everything
else is paragraph text (*Paragraphs*), including plain-list items (*Items*) and footnote
definitions, which the indexer only needs as text.

A block or drawer without its closing line is not a block or drawer: its lines are
paragraph text (org-element does the same). Closing lines are found with one pass per
section and a binary search, so a section full of unclosed ``#+begin_x`` lines stays
linear.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from cairn.formats.org.tree import property_drawer_span

# Element kinds.
TEXT = "text"
BLANK = "blank"
PLANNING = "planning"
PROPERTY_DRAWER = "property-drawer"
DRAWER = "drawer"
BLOCK = "block"
KEYWORD = "keyword"
COMMENT = "comment"
FIXED = "fixed-width"
TABLE = "table"
CLOCK = "clock"
DIARY = "diary-sexp"
RULE = "horizontal-rule"

_KEYWORD_RE = re.compile(r"#\+(\S+?):[ \t]*+(.*)$")
_DRAWER_RE = re.compile(r":([\w-]+):[ \t]*$")
_CHECKBOX_RE = re.compile(r"(?:[-+*]|\d+[.)]|[A-Za-z][.)])[ \t]+(?:\[@\w+\][ \t]+)?\[([ Xx-])\]")
_PLANNING_RE = re.compile(r"[ \t]*(?:SCHEDULED|DEADLINE|CLOSED):")
_FOOTNOTE_RE = re.compile(r"\[fn:([\w-]+)\]")


@dataclass(slots=True)
class Element:
    """One element: ``kind``, line index span ``[start, end)`` in its section, and data.

    ``name`` is the block type (lower-case, e.g. ``src``; ``""`` for a dynamic block), the
    drawer name as written, or the keyword key as written; ``value`` the block parameters
    or keyword value.
    """

    kind: str
    start: int
    end: int
    name: str = ""
    value: str = ""


@dataclass(slots=True)
class SectionScan:
    """Elements of one section plus counts the indexer reports in ``Unit.extra``."""

    elements: list[Element]
    checkboxes: dict[str, int]
    footnotes: list[str]
    keywords: list[Element]


class _Ends:
    """Lazily built index of closing lines (``#+end_x``, ``#+end:``, ``:end:``)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.blocks: dict[str, list[int]] | None = None
        self.drawers: list[int] | None = None

    def _build(self) -> None:
        self.blocks = {}
        self.drawers = []
        for i, ln in enumerate(self.lines):
            s = ln.lstrip(" \t")
            if s[:1] == "#" and s[1:5].lower() == "+end":
                head = s.split(None, 1)[0].lower() if s.strip() else ""
                if head == "#+end:":
                    self.blocks.setdefault("", []).append(i)
                elif head.startswith("#+end_"):
                    self.blocks.setdefault(head[6:], []).append(i)
            elif s[:1] == ":" and s.rstrip(" \t").lower() == ":end:":
                self.drawers.append(i)

    def block_end(self, name: str, after: int) -> int | None:
        if self.blocks is None:
            self._build()
        assert self.blocks is not None
        idx = self.blocks.get(name)
        if not idx:
            return None
        k = bisect_right(idx, after)
        return idx[k] if k < len(idx) else None

    def drawer_end(self, after: int) -> int | None:
        if self.drawers is None:
            self._build()
        assert self.drawers is not None
        k = bisect_right(self.drawers, after)
        return self.drawers[k] if k < len(self.drawers) else None


def _run_end(lines: list[str], j: int, mark: str) -> int:
    """The index after a run of lines, from ``j``, that are ``mark`` alone or ``mark``
    and a blank (comment lines ``#``, fixed-width lines ``:``)."""
    after = (mark + " ", mark + "\t")
    while j < len(lines):
        t = lines[j].lstrip(" \t")
        if t != mark and not t.startswith(after):
            break
        j += 1
    return j


def scan_section(lines: list[str], zeroth: bool) -> SectionScan:
    """Scan one section's line contents into elements.

    Args:
        lines: the section's lines without terminators or ``\\r`` (see
            :meth:`cairn.formats.org.tree.Section.contents`).
        zeroth: ``True`` for the zeroth section (no planning; the property drawer may
            follow blank lines and comments).

    Returns:
        A :class:`SectionScan`; consecutive paragraph lines form one ``text`` element.
    """
    els: list[Element] = []
    boxes = {"checked": 0, "unchecked": 0, "partial": 0}
    footnotes: list[str] = []
    keywords: list[Element] = []
    n = len(lines)
    i = 0
    if not zeroth and n and _PLANNING_RE.match(lines[0]):
        els.append(Element(PLANNING, 0, 1))
        i = 1
    span = property_drawer_span(lines, zeroth)
    ends = _Ends(lines)
    text_start = -1

    def flush(upto: int) -> None:
        nonlocal text_start
        if text_start >= 0:
            els.append(Element(TEXT, text_start, upto))
            text_start = -1

    while i < n:
        if span is not None and i == span[0]:
            flush(i)
            els.append(Element(PROPERTY_DRAWER, span[0], span[1] + 1))
            i = span[1] + 1
            continue
        line = lines[i]
        s = line.lstrip(" \t")
        if not s:
            flush(i)
            els.append(Element(BLANK, i, i + 1))
            i += 1
            continue
        c = s[0]
        if c == "#":
            if s.startswith("#+"):
                low = s[2:8].lower()
                if low == "begin_":
                    words = s[8:].split(None, 1)
                    name = words[0].lower() if words else ""
                    params = words[1] if len(words) > 1 else ""
                    j = ends.block_end(name, i) if name else None
                    if j is not None:
                        flush(i)
                        els.append(Element(BLOCK, i, j + 1, name, params.strip()))
                        i = j + 1
                        continue
                elif low[:6] == "begin:":
                    j = ends.block_end("", i)
                    if j is not None:
                        flush(i)
                        els.append(Element(BLOCK, i, j + 1, "", s[8:].strip()))
                        i = j + 1
                        continue
                else:
                    m = _KEYWORD_RE.match(s)
                    if m is not None:
                        flush(i)
                        kw_el = Element(KEYWORD, i, i + 1, m.group(1), (m.group(2) or ""))
                        els.append(kw_el)
                        keywords.append(kw_el)
                        i += 1
                        continue
            elif len(s) == 1 or s[1] in " \t":
                flush(i)
                j = _run_end(lines, i + 1, "#")
                els.append(Element(COMMENT, i, j))
                i = j
                continue
        elif c == ":":
            if len(s) == 1 or s[1] in " \t":
                flush(i)
                j = _run_end(lines, i + 1, ":")
                els.append(Element(FIXED, i, j))
                i = j
                continue
            m = _DRAWER_RE.match(s)
            if m is not None and m.group(1).lower() != "end":
                j = ends.drawer_end(i)
                if j is not None:
                    flush(i)
                    els.append(Element(DRAWER, i, j + 1, m.group(1)))
                    i = j + 1
                    continue
        elif c == "|":
            flush(i)
            j = i + 1
            while j < n and lines[j].lstrip(" \t")[:1] == "|":
                j += 1
            els.append(Element(TABLE, i, j))
            i = j
            continue
        elif c == "+" and s.startswith("+-") and s.rstrip(" \t").strip("+-") == "":
            flush(i)
            j = i + 1
            while j < n and lines[j].lstrip(" \t")[:1] in ("|", "+"):
                j += 1
            els.append(Element(TABLE, i, j, "table.el"))
            i = j
            continue
        elif c in "Cc" and s[:6].upper() == "CLOCK:":
            flush(i)
            els.append(Element(CLOCK, i, i + 1))
            i += 1
            continue
        elif c == "%" and s.startswith("%%(") and line is s:
            flush(i)
            els.append(Element(DIARY, i, i + 1))
            i += 1
            continue
        elif c == "-" and s.startswith("-----") and s.rstrip(" \t").strip("-") == "":
            flush(i)
            els.append(Element(RULE, i, i + 1))
            i += 1
            continue
        if "[" in s and c in "-+*0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ":
            m = _CHECKBOX_RE.match(s)
            if m is not None:
                box = m.group(1)
                key = "checked" if box in "Xx" else ("partial" if box == "-" else "unchecked")
                boxes[key] += 1
        elif c == "[" and line is s and s.startswith("[fn:"):
            fm = _FOOTNOTE_RE.match(s)
            if fm is not None:
                footnotes.append(fm.group(1))
        if text_start < 0:
            text_start = i
        i += 1
    flush(n)
    return SectionScan(els, boxes, footnotes, keywords)


def scan_block(lines: list[str]) -> SectionScan:
    """Scan the contents of a greater or dynamic block (the lines between its
    ``#+begin``/``#+end`` lines) into elements: as a section's, but with no planning
    line and no property drawer, which Org reads only right after a headline (a
    ``:PROPERTIES:`` drawer here is an ordinary drawer)."""
    scan = scan_section(lines, True)
    scan.elements = [
        Element(DRAWER, e.start, e.end, lines[e.start].strip(" \t")[1:-1])
        if e.kind == PROPERTY_DRAWER else e
        for e in scan.elements
    ]
    return scan
