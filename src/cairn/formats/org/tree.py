"""The lossless Org parse tree: headings and sections over the file's raw lines.

An Org document is a zeroth section followed by headings, each heading owning the
section up to the next heading (org-syntax: *General structure of Org document*,
*Headings and Sections*, *The zeroth section*). Heading recognition is context free: a
heading is an unindented line of one or more ``*`` followed by a space (org-syntax
*Headings*: "Space character after asterisks is mandatory"), which is why Org escapes
``,*`` inside blocks. A line holding only ``*`` is not a heading (checked against
org-element in case 001).

The tree keeps every line exactly as written, line terminator included, so
:func:`serialize` gives back the input for *any* string: CRLF, a BOM, NULs, tabs, lone
``\\r``, no final newline. Lines are split on ``\\n`` only (as Emacs does), so line numbers
are the file's. Analysis (heading parts, drawers, …) looks at each line without its
terminator and without one trailing ``\\r``.

Edits (:func:`set_todo`, :func:`set_tags`, :func:`set_property`) rewrite only the lines
they must and return a new tree; every other byte stays as it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from cairn.errors import ParseError


@dataclass(slots=True)
class Section:
    """A run of raw lines (terminators included) and the 1-based number of its first line.

    For an empty section ``first_line`` is the line where it would start.
    """

    lines: list[str]
    first_line: int

    def contents(self) -> list[str]:
        """The lines without terminators and without one trailing ``\\r``."""
        return [content(x) for x in self.lines]


@dataclass(slots=True)
class HeadingNode:
    """One heading: its raw line, level, 1-based line number, section and parent index.

    ``parent`` is the index in :attr:`OrgTree.headings` of the nearest preceding heading
    with a lower level, or ``None`` for a top-level heading.
    """

    line: str
    line_no: int
    level: int
    section: Section
    parent: int | None = None


@dataclass(slots=True)
class OrgTree:
    """A parsed Org buffer: the zeroth section and the headings in document order."""

    zeroth: Section
    headings: list[HeadingNode] = field(default_factory=list)

    def line_count(self) -> int:
        """Number of lines of the buffer (at least 1; a final newline ends a line)."""
        if self.headings:
            last = self.headings[-1]
            return max(1, last.line_no + len(last.section.lines))
        return max(1, len(self.zeroth.lines))


def content(raw: str) -> str:
    """A raw line without its ``\\n`` and one trailing ``\\r``."""
    if raw.endswith("\n"):
        raw = raw[:-1]
    if raw.endswith("\r"):
        raw = raw[:-1]
    return raw


def split_lines(text: str) -> list[str]:
    """Split ``text`` on ``\\n`` keeping terminators; ``"".join`` gives ``text`` back."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def heading_level(line: str) -> int:
    """The level of ``line`` if it is a heading line (stars then a space), else 0."""
    if not line.startswith("*"):
        return 0
    n = len(line) - len(line.lstrip("*"))
    return n if line[n : n + 1] == " " else 0


_HEADING_LINE_RE = re.compile(r"^(\*+) ", re.MULTILINE)


def parse_tree(text: str) -> OrgTree:
    """Split ``text`` into the zeroth section and headings, losslessly.

    Heading lines are found with one multiline regex pass (``^\\*+ ``), so the cost is
    a C-speed scan plus one slice per heading.

    Args:
        text: any string (a leading BOM is kept in the tree and ignored for analysis).

    Returns:
        An :class:`OrgTree` with ``serialize(tree) == text``.
    """
    lines = split_lines(text)
    starts = heading_starts(text)
    headings: list[HeadingNode] = []
    first = starts[0][0] if starts else len(lines)
    for k, (i, level, parent) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(lines)
        node = HeadingNode(lines[i], i + 1, level, Section(lines[i + 1 : end], i + 2), parent)
        headings.append(node)
    return OrgTree(Section(lines[:first], 1), headings)


def heading_starts(text: str) -> list[tuple[int, int, int | None]]:
    """``(0-based line, level, parent)`` of every heading line of ``text``, as
    :func:`parse_tree` finds them (``parent``: the index of the nearest preceding
    heading of a lower level, or ``None``), without splitting the text into lines."""
    starts: list[tuple[int, int, int | None]] = []
    stack: list[tuple[int, int]] = []  # (level, index)

    def add(line: int, level: int) -> None:
        while stack and stack[-1][0] >= level:
            stack.pop()
        starts.append((line, level, stack[-1][1] if stack else None))
        stack.append((level, len(starts) - 1))

    if text.startswith("\ufeff*"):
        level = heading_level(text[1 : text.find("\n") if "\n" in text else len(text)])
        if level:
            add(0, level)
    line = 0
    counted = 0
    for m in _HEADING_LINE_RE.finditer(text):
        pos = m.start()
        line += text.count("\n", counted, pos)
        counted = pos
        add(line, len(m.group(1)))
    return starts


def serialize(tree: OrgTree) -> str:
    """The exact text of ``tree`` (the inverse of :func:`parse_tree`)."""
    parts: list[str] = list(tree.zeroth.lines)
    for h in tree.headings:
        parts.append(h.line)
        parts.extend(h.section.lines)
    return "".join(parts)


def heading_at(tree: OrgTree, line: int) -> int | None:
    """Index in ``tree.headings`` of the heading whose line is ``line`` (1-based), or None.

    A heading unit's ``line_start`` is its heading line, so this maps a parsed unit back
    to the tree node an edit needs.
    """
    lo, hi = 0, len(tree.headings)
    while lo < hi:
        mid = (lo + hi) // 2
        if tree.headings[mid].line_no < line:
            lo = mid + 1
        else:
            hi = mid
    if lo < len(tree.headings) and tree.headings[lo].line_no == line:
        return lo
    return None


# --- headline parts (org-syntax: Headings) -------------------------------------------

_TAGS_RE = re.compile(r":[\w@#%:]+:")


@dataclass(frozen=True, slots=True)
class Headline:
    """The parts of a heading line (org-syntax *Headings*: STARS KEYWORD PRIORITY COMMENT
    TITLE TAGS), with offsets into the line's content for lossless edits.

    Attributes:
        level: number of stars.
        todo: the TODO keyword or ``None``; ``todo_span`` its ``(start, end)``.
        priority: the priority character or ``None``.
        commented: ``True`` when the ``COMMENT`` keyword is present.
        title: the title as written, stripped (statistics cookies included).
        tags: the tags, in order; ``tags_span`` is the ``(start, end)`` of the ``:a:b:``
            group or ``None``.
        title_start: offset where the title (after keyword/priority/COMMENT) starts.
    """

    level: int
    todo: str | None
    todo_span: tuple[int, int] | None
    priority: str | None
    commented: bool
    title: str
    tags: tuple[str, ...]
    tags_span: tuple[int, int] | None
    title_start: int


def parse_headline(line: str, todo_keywords: Iterable[str]) -> Headline:
    """Parse one heading line (without terminator) into its parts.

    Mirrors org-element's headline parser: the keyword must be a member of the file's
    TODO keywords (case-sensitive) followed by a space or the end of the line; a priority
    cookie is ``[#X]`` with one character; ``COMMENT`` (case-sensitive) must be followed by
    whitespace or the end of the line; tags are a trailing ``:a:b:`` group of letters,
    digits, ``_@#%``, preceded by whitespace. When none of keyword, priority and COMMENT
    is present, the whitespace right after the stars counts as the tags' separator, so
    ``* :tag:`` has tags ``("tag",)`` and an empty title.

    Raises:
        ParseError: if ``line`` is not a heading line.
    """
    if line.startswith("\ufeff"):
        line = line[1:]
    level = heading_level(line)
    if not level:
        raise ParseError("not a heading line")
    kws = todo_keywords if isinstance(todo_keywords, (set, frozenset, dict)) else set(
        todo_keywords
    )
    pos = level
    n = len(line)
    while pos < n and line[pos] in " \t":
        pos += 1
    todo = None
    todo_span = None
    if pos < n:
        end = pos
        while end < n and line[end] not in " \t":
            end += 1
        word = line[pos:end]
        if word in kws and (end == n or line[end] == " "):
            todo = word
            todo_span = (pos, end)
            pos = end
            while pos < n and line[pos] in " \t":
                pos += 1
    priority = None
    if line.startswith("[#", pos) and pos + 3 < n + 1 and line[pos + 3 : pos + 4] == "]":
        priority = line[pos + 2]
        pos += 4
        while pos < n and line[pos] in " \t":
            pos += 1
    commented = False
    if line.startswith("COMMENT", pos) and (pos + 7 == n or line[pos + 7] in " \t"):
        commented = True
        pos += 7
        while pos < n and line[pos] in " \t":
            pos += 1
    search_from = pos if (todo or priority or commented) else level
    tags: tuple[str, ...] = ()
    tags_span = None
    title_end = n
    stripped = line.rstrip(" \t")
    if stripped.endswith(":"):
        # the tags group is the last whitespace-free token, preceded by whitespace that
        # starts at or after ``search_from`` (found without a regex search: linear)
        k = max(stripped.rfind(" "), stripped.rfind("\t"))
        if k >= search_from and _TAGS_RE.fullmatch(stripped, k + 1):
            tags = tuple(t for t in stripped[k + 1 :].split(":") if t)
            tags_span = (k + 1, len(stripped))
            title_end = len(stripped[:k].rstrip(" \t"))
    title = line[pos:title_end].strip() if title_end > pos else ""
    return Headline(level, todo, todo_span, priority, commented, title, tags, tags_span, pos)


# --- edits ---------------------------------------------------------------------------


def _eol(raw: str) -> str:
    if raw.endswith("\r\n"):
        return "\r\n"
    if raw.endswith("\n"):
        return "\n"
    return ""


def _tree_eol(tree: OrgTree) -> str:
    """The buffer's line end: that of its first terminated line, else ``\\n``."""
    for raw in tree.zeroth.lines:
        return _eol(raw) or "\n"
    for h in tree.headings:
        if h.line.endswith("\n"):
            return _eol(h.line)
        for raw in h.section.lines:
            return _eol(raw) or "\n"
    return "\n"


def _replace_heading_line(tree: OrgTree, index: int, new_content: str) -> OrgTree:
    h = tree.headings[index]
    bom = "\ufeff" if h.line.startswith("\ufeff") else ""
    new_raw = bom + new_content + _eol(h.line)
    return _rebuild(tree, {("h", index): [new_raw]})


def _rebuild(tree: OrgTree, replace: dict[tuple[str, int], list[str]]) -> OrgTree:
    parts: list[str] = []
    parts.extend(replace.get(("z", 0), tree.zeroth.lines))
    for i, h in enumerate(tree.headings):
        parts.extend(replace.get(("h", i), [h.line]))
        parts.extend(replace.get(("s", i), h.section.lines))
    return parse_tree("".join(parts))


def set_todo(
    tree: OrgTree, index: int, keyword: str | None, todo_keywords: Iterable[str]
) -> OrgTree:
    """Set (or with ``None`` remove) the TODO keyword of heading ``index``.

    Only the heading line changes; its stars, priority, title, tags and spacing stay.
    ``todo_keywords`` is the file's keyword set (to recognise the current keyword).

    Raises:
        IndexError: when ``index`` is not a heading index.
    """
    h = tree.headings[index]
    line = content(h.line).removeprefix("\ufeff")
    hl = parse_headline(line, todo_keywords)
    if hl.todo_span is not None:
        s, e = hl.todo_span
        if keyword is None:
            while e < len(line) and line[e] == " ":
                e += 1
            new = line[:s] + line[e:]
        else:
            new = line[:s] + keyword + line[e:]
    else:
        if keyword is None:
            return tree
        s = hl.level + 1
        rest = line[s:]
        new = line[:s] + keyword + (" " + rest if rest else "")
    return _replace_heading_line(tree, index, new)


def set_tags(tree: OrgTree, index: int, tags: Sequence[str]) -> OrgTree:
    """Replace the tags of heading ``index`` (an empty sequence removes them).

    The ``:a:b:`` group is rewritten in place when present, else appended after one space.
    """
    h = tree.headings[index]
    line = content(h.line).removeprefix("\ufeff")
    hl = parse_headline(line, ())
    group = (":" + ":".join(tags) + ":") if tags else ""
    if hl.tags_span is not None:
        s, e = hl.tags_span
        if group:
            new = line[:s] + group + line[e:]
        else:
            new = line[:s].rstrip(" \t") + line[e:].strip(" \t")
    else:
        if not group:
            return tree
        new = line.rstrip(" \t") + " " + group
    return _replace_heading_line(tree, index, new)


_PLANNING_RE = re.compile(r"[ \t]*(?:SCHEDULED|DEADLINE|CLOSED):")
_PROP_LINE_RE = re.compile(r"([ \t]*):(\S+):(?:([ \t]+)(.*))?$")


def _leading_comments(lines: Sequence[str], *, blank_after: bool = True) -> int:
    """How many of ``lines`` (contents) are leading blank lines and comments (with
    ``blank_after`` false: blank lines, then only comments)."""
    i = 0
    comments = False
    while i < len(lines):
        s = lines[i].lstrip(" \t")
        if not s and (blank_after or not comments):
            i += 1
            continue
        if s == "#" or s.startswith(("# ", "#\t")):
            comments = True
            i += 1
            continue
        break
    return i


def property_drawer_span(lines: Sequence[str], zeroth: bool) -> tuple[int, int] | None:
    """Where the property drawer of a section is, as ``(begin, end)`` line indices.

    ``lines`` are the section's line contents. For a heading's section the drawer must
    start on the first line or right after a planning line; for the zeroth section after
    optional blank lines and comments (org-syntax *Property Drawers*). Every line inside
    must be a node property (``:NAME: VALUE``, org-syntax *Node Properties*) and the
    drawer must be closed by ``:END:``; otherwise there is no property drawer. ``end`` is
    the index of the ``:END:`` line.
    """
    i = 0
    n = len(lines)
    if zeroth:
        i = _leading_comments(lines)
    elif n and _PLANNING_RE.match(lines[0]):
        i = 1
    if i >= n or lines[i].strip(" \t").upper() != ":PROPERTIES:":
        return None
    j = i + 1
    while j < n:
        s = lines[j].strip(" \t")
        if s.upper() == ":END:":
            return (i, j)
        if not _PROP_LINE_RE.match(lines[j]):
            return None
        j += 1
    return None


def set_property(tree: OrgTree, index: int | None, key: str, value: str | None) -> OrgTree:
    """Set (or with ``None`` delete) property ``key`` of heading ``index``.

    ``index=None`` edits the file-level property drawer. An existing ``:KEY:`` line
    (matched case-insensitively) keeps its indentation and spelling; a new key goes just
    before ``:END:``; a missing drawer is created right after the heading (and planning
    line), or for the file after its leading blank lines and comments. Line ends follow
    the heading line's (CRLF stays CRLF). Nothing else changes.
    """
    sec = tree.zeroth if index is None else tree.headings[index].section
    eol = _tree_eol(tree)
    contents = sec.contents()
    span = property_drawer_span(contents, index is None)
    lines = list(sec.lines)
    if span is None:
        if value is None:
            return tree
        at = 0
        if index is not None and contents and _PLANNING_RE.match(contents[0]):
            at = 1
        if index is None:
            # a file-level drawer comes after the file's leading blank lines, then
            # comments (org-syntax *Property Drawers*; Emacs allows no blank line
            # between those comments and the drawer); a first-line ``# -*- … -*-``
            # must stay first for Emacs to read it
            at = _leading_comments(contents, blank_after=False)
            if at and not lines[at - 1].endswith("\n"):
                lines[at - 1] = lines[at - 1] + eol
        if index is not None and not tree.headings[index].line.endswith("\n"):
            # heading is the last line without newline: give it one first
            h = tree.headings[index]
            new_lines = [":PROPERTIES:" + eol, f":{key}: {value}" + eol, ":END:"]
            return _rebuild(tree, {("h", index): [h.line + eol], ("s", index): new_lines})
        block = [":PROPERTIES:" + eol, f":{key}: {value}" + eol, ":END:" + eol]
        if at == 1 and not lines[0].endswith("\n"):
            lines[0] = lines[0] + eol
            block[-1] = ":END:"
        lines[at:at] = block
    else:
        b, e = span
        hit = None
        for j in range(b + 1, e):
            m = _PROP_LINE_RE.match(contents[j])
            if m and m.group(2).upper() == key.upper():
                hit = (j, m)
                break
        if hit is not None:
            j, m = hit
            if value is None:
                del lines[j]
            else:
                sep = m.group(3) or " "
                lines[j] = f"{m.group(1)}:{m.group(2)}:{sep}{value}" + _eol(lines[j])
        else:
            if value is None:
                return tree
            indent = contents[e][: len(contents[e]) - len(contents[e].lstrip(" \t"))]
            lines.insert(e, f"{indent}:{key}: {value}" + eol)
    key_ = ("z", 0) if index is None else ("s", index)
    return _rebuild(tree, {key_: lines})
