"""An Org file written as Markdown, element by element (org-syntax *Elements*), so that
the Markdown parser reads back the units, links and tasks the Org parser read.

The file is read with the Org parser's own tree and element scanner
(:func:`cairn.formats.org.parse_tree`, :func:`cairn.formats.org.elements.scan_section`),
so both agree on what is a heading, a block or a drawer:

* headings → ``#`` headings (at most six levels: a deeper Org heading is written at level
  six), with the task keyword, priority and ``#tags`` in the text and the planning and
  properties as inline fields (:mod:`cairn.export.tasks`); a tag Obsidian cannot hold
  (``:#11:``, ``:@home:``) goes to the ``org-tags::`` field (:data:`ORG_TAGS`); the
  file's property drawer and keywords such as ``#+TITLE`` go to front matter (the
  caller's); a ``KEY+`` property is one more ``key::`` line;
* paragraphs, plain and checkbox lists (a partial ``[-]`` → ``[ ]``,
  :data:`PARTIAL_BOX`), description lists and footnote definitions → the same lines
  with their objects converted (:mod:`cairn.export.org_inline`), list indentation
  kept relative to the element, paragraph indentation dropped (Org ignores it,
  Markdown would read four spaces as code); an ordered item that opens a list after
  a paragraph line gets a blank line before it (CommonMark lets only ``1.`` interrupt);
  an item's text that opens like a bullet (``- 2. text``) and a line that opens with
  ``>`` are escaped; a LaTeX environment (``\\begin{equation}``…) → a ``$$`` block;
* ``src`` blocks → fenced code with the language and header arguments as the info
  string and the code as the Org parser reads it (comma quoting removed, bytes kept);
  ``example``/``export`` blocks and fixed-width lines → fenced code; ``quote`` → a block
  quote; ``verse`` → lines with hard breaks, a blank line between stanzas and each
  line's indent (past the block's own) as ``&nbsp;``; ``center``, special and dynamic blocks →
  their contents, the block lines kept as HTML comments;
* tables → GFM tables (the first row is the header; rule rows dropped; ``\\vert{}`` →
  ``\\|``), ``table.el``
  tables → fenced code;
* keywords, comments, comment blocks, drawers, clocks and diary sexps → HTML comments
  (kept in the file, no text of the note, as in Org), byte for byte but for a
  reversible escape (:func:`uncomment` reads them back); horizontal rules → ``---``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from cairn.export.org_inline import Render, escape, inline
from cairn.export.tasks import heading_text, planning_lines
from cairn.formats.org import elements as E
from cairn.formats.org import parse_headline, parse_tree
from cairn.formats.org.objects import LinkSpan, link_spans, verbatim_spans
from cairn.model import StoredUnit

_ITEM = re.compile(r"^([ \t]*)([-+*]|(\d+)[.)])([ \t]+|$)(\[[ Xx-]\](?=[ \t]|$))?")
_FOOTDEF = re.compile(r"^\[fn:([\w-]+)\][ \t]*")
_COMMA = re.compile(r"^([ \t]*),(\*|#\+)", re.M)
_FRONT_KEYWORDS = frozenset({"title", "filetags"})
_PROPERTY = re.compile(r"^[ \t]*:([^:\s]+):(?:[ \t]+(.*))?$")
_FIELD_KEY = re.compile(r"[A-Za-z][\w-]*")
_FIELD_LINE = re.compile(r"[a-z][\w-]*:: ")
_OBSIDIAN_TAG = re.compile(r"(?!\d+$)[^\W]+")
"""An Org tag Obsidian reads as a ``#tag`` (letters, digits and ``_``, not only
digits); Org also allows ``@``, ``#`` and ``%``, and a tag of digits alone."""
ORG_TAGS = "org-tags"
"""The inline field that keeps a heading's tags Obsidian cannot hold (``org-tags::
:#11:@home:``), in Org's own tag syntax so no Markdown reader takes them for text."""
_LATEX_BEGIN = re.compile(r"[ \t]*\\begin\{([A-Za-z0-9*]+)\}")
"""A LaTeX environment's first line (org-syntax *LaTeX Environments*)."""
_LEADING_MARK = re.compile(r"(?:\d+[.)]|[-+])(?=[ \t]|$)")
"""An item's text that opens as a list bullet would (Org's ``- 2. text`` is one item
whose text is ``2. text``; Markdown would read a nested list numbered 2)."""
_MARK_KEEP = {".": "\ue00c", ")": "\ue00d", "-": "\ue00e", "+": "\ue00f"}

Fields = Callable[[StoredUnit], str]
"""A heading's unit → its inline-field lines (planning, properties)."""


_VERT = re.compile(r"\\vert(?:\{\}|(?![A-Za-z]))")
"""Org's ``\\vert`` entity, the way to write a ``|`` in a table cell: a ``\\|`` there."""
_VERSE_INDENT = "&nbsp;"
"""One column of a verse line's indent (Markdown drops leading spaces, or reads four
as code); a tab is four."""
_AMBIGUOUS_AMP = re.compile(r"&(?=amp;|#45;|gt;)")
_SECOND_DASH = re.compile(r"(?<=-)-")
_COMMENT_ESCAPE = re.compile(r"&(amp|#45|gt);")
_UNESCAPED = {"amp": "&", "#45": "-", "gt": ">"}
_COMMENT = re.compile(r"<!-- (.*?) -->", re.S)


def html_comment(text: str) -> str:
    """``text`` in an HTML comment, reversibly (:func:`uncomment`): every ``-`` that
    follows a ``-`` as ``&#45;`` (so no ``--``, and no ``-->`` ends the comment early),
    ``>`` as ``&gt;`` (cairn's Markdown reader ends a comment at one) and an ``&`` that
    opens ``amp;``, ``#45;`` or ``gt;`` as ``&amp;``; every other byte as written."""
    text = _SECOND_DASH.sub("&#45;", _AMBIGUOUS_AMP.sub("&amp;", text))
    return "<!-- " + text.replace(">", "&gt;") + " -->"


def uncomment(markdown: str) -> list[str]:
    """The texts an export kept in the HTML comments of ``markdown``
    (:func:`html_comment`), byte for byte as the Org file has them."""
    def one(m: re.Match[str]) -> str:
        return _UNESCAPED[m.group(1)]

    return [_COMMENT_ESCAPE.sub(one, m.group(1)) for m in _COMMENT.finditer(markdown)]


def _fence(code: str, info: str = "") -> str:
    ticks = max((len(t) for t in re.findall(r"^[ \t]*(`{3,}|~{3,})", code, re.M)), default=2)
    fence = "`" * max(3, ticks + 1)
    body = code if code.endswith("\n") or not code else code + "\n"
    return f"{fence}{info}\n{body}{fence}"


def _plain_url(value: str, spans: Sequence[LinkSpan]) -> bool:
    """Whether a property ``value`` is one plain ``http(s)`` link, nothing else (an
    inline field holds it as written, and a Markdown reader's autolink reads the same
    link; it reads no ``git://`` one)."""
    if (len(spans) != 1 or not value.startswith(("http://", "https://"))
            or any(c.isspace() for c in value)):
        return False
    s, e, _, lk = spans[0]
    return s == 0 and e == len(value) and lk is not None and lk.kind == "url"


class _Section:
    """One section's elements as Markdown blocks."""

    def __init__(
        self, lines: list[str], first_line: int, render: Render, labels: frozenset[str]
    ) -> None:
        self.lines = lines
        self.first = first_line
        self.render = render
        self.labels = labels

    def text(self, start: int, end: int) -> str:
        """A paragraph/list element: lines dedented as one, objects converted."""
        rows = self.lines[start:end]
        indent = min((len(r) - len(r.lstrip(" \t")) for r in rows if r.strip()), default=0)
        out: list[str] = []
        in_list = False
        for row in rows:
            fn = _FOOTDEF.match(row)  # at column 0 of the file only, as in Org
            row = row[indent:]
            m = _ITEM.match(row)
            if fn is not None and fn.group(1) not in self.labels:
                fn = None  # a definition Markdown would drop: its text, as written
                in_list = False
            if fn is not None:
                row = f"\ue007{fn.group(1)}\ue008" + row[fn.end() :]
                in_list = False
            elif m is not None:
                if m.group(3) and m.group(3) != "1" and not in_list and out and out[-1]:
                    out.append("")
                in_list = True
                lead = _LEADING_MARK.match(row, m.end())
                if lead is not None:  # an item's text, not a nested list's bullet
                    row = (row[: lead.end() - 1] + _MARK_KEEP[row[lead.end() - 1]]
                           + row[lead.end() :])
                if m.group(5):  # a checkbox: Markdown's task syntax, not escaped text
                    box = " " if m.group(5)[1] == "-" else m.group(5)[1]  # PARTIAL_BOX
                    row = row[: m.start(5)] + f"\ue009{box}\ue00a" + row[m.end(5) :]
            elif not in_list:
                row = row.lstrip(" \t")
            out.append(row)
        notes: list[str] = []
        md = inline("\n".join(out), self.first + start, self.render, notes, self.labels)
        if notes:  # inline footnotes: defined right here, so they stay in the section
            md += "\n\n" + "\n".join(notes)
        md = md.replace("\ue00c", "\\.").replace("\ue00d", "\\)")
        md = md.replace("\ue00e", "\\-").replace("\ue00f", "\\+")
        md = re.sub("\ue009(.)\ue00a", r"[\1]", md)
        return re.sub("\ue007([\\w-]+)\ue008", r"[^\1]: ", md)

    def latex(self, start: int, end: int) -> list[str]:
        """Lines ``[start, end)`` of paragraph text as Markdown blocks, each LaTeX
        environment among them a ``$$`` math block (what Obsidian renders; no object is
        read inside one, as in Org)."""
        return self.latex_split(start, end)[0]

    def latex_split(self, start: int, end: int) -> tuple[list[str], int]:
        """:meth:`latex` and the line after the last environment, which may end past
        ``end`` (an environment may hold blank lines, which end a paragraph)."""
        out: list[str] = []
        k = start
        after = 0
        while k < end:
            r = next((j for j in range(k, end) if _LATEX_BEGIN.match(self.lines[j])), None)
            if r is None:
                out.append(self.text(k, end))
                break
            name = _LATEX_BEGIN.match(self.lines[r])
            assert name is not None
            closing = re.compile(r"[ \t]*\\end\{" + re.escape(name.group(1)) + r"\}[ \t]*$")
            q = next((j for j in range(r, len(self.lines)) if closing.match(self.lines[j])),
                     None)
            if q is None:
                out.append(self.text(k, end))
                break
            if r > k:
                out.append(self.text(k, r))
            rows = [x.strip(" \t") for x in self.lines[r : q + 1]]
            out.append("$$\n" + "\n".join(rows).replace("$$", "$ $") + "\n$$")
            k = after = q + 1
        return [b for b in out if b], after

    def table(self, el: E.Element) -> str:
        rows = [r.strip(" \t") for r in self.lines[el.start : el.end]]
        if el.name == "table.el":
            return _fence("\n".join(rows))
        cells: list[list[str]] = []
        for k, r in enumerate(rows):
            if r.startswith("|-"):
                continue
            raw = r.strip("|").split("|") if r.endswith("|") else r[1:].split("|")
            line = self.first + el.start + k
            cells.append([inline(_VERT.sub("\ue010", c.strip()), line, self.render,
                                 labels=self.labels)
                          .replace("|", "\\|").replace("\ue010", "\\|")
                          for c in raw])
        if not cells:
            return ""
        width = max(len(c) for c in cells)
        fill = [c + [""] * (width - len(c)) for c in cells]
        head = "| " + " | ".join(fill[0]) + " |"
        rule = "|" + "|".join(" --- " for _ in range(width)) + "|"
        return "\n".join([head, rule, *("| " + " | ".join(c) + " |" for c in fill[1:])])

    def block(self, el: E.Element) -> str:
        name = el.name
        inner = self.lines[el.start + 1 : el.end - 1]
        text = "\n".join(inner)
        begin, end = self.lines[el.start].strip(), self.lines[el.end - 1].strip()
        if name == "comment":
            return html_comment("\n".join(self.lines[el.start : el.end]))
        if name in ("src", "example", "export"):
            code = _COMMA.sub(r"\1\2", text) if "," in text else text
            info = el.value.split(None, 1)[0] if name == "src" and el.value else ""
            rest = el.value[len(info):].strip() if name == "src" else el.value
            return _fence(code, f"{info} {rest}".rstrip() if info else "")
        body = self.sub(el.start + 1, el.end - 1)
        if name == "quote":
            return "\n".join(("> " + x) if x else ">" for x in body.split("\n"))
        if name == "verse":  # Org keeps a verse's line breaks, blank lines and indents
            cut = min((len(x) - len(x.lstrip(" \t")) for x in inner if x.strip()), default=0)
            stanzas: list[list[str]] = [[]]
            for k, x in enumerate(inner):
                if not x.strip():
                    if stanzas[-1]:
                        stanzas.append([])
                    continue
                x = x[cut:].rstrip(" \t")
                lead = x[: len(x) - len(x.lstrip(" \t"))]
                stanzas[-1].append(_VERSE_INDENT * (len(lead) + 3 * lead.count("\t")) + inline(
                    x.lstrip(" \t"), self.first + el.start + 1 + k, self.render,
                    labels=self.labels))
            return "\n\n".join("\\\n".join(rows) for rows in stanzas if rows)
        return f"{html_comment(begin)}\n\n{body}\n\n{html_comment(end)}"

    def properties(self, el: E.Element, *, linked_only: bool) -> str:
        """A property drawer as ``key:: value`` lines (Dataview's inline fields, which
        the round trip leaves out of a unit's text), each value's objects converted so
        its links stay links; a key no inline field can hold stays an HTML comment.
        ``linked_only``: only the properties whose value holds a link (the file's
        drawer, whose properties are the front matter already)."""
        out: list[str] = []
        for k in range(el.start + 1, el.end - 1):
            m = _PROPERTY.match(self.lines[k])
            if m is None:
                continue
            key, value = m.group(1), (m.group(2) or "").strip()
            if key.endswith("+") and len(key) > 1:  # ``KEY+`` adds to ``KEY``: one more
                key = key[:-1]  # field line of that key (Dataview reads them as a list)
            spans = link_spans(value)
            linked = bool(spans)
            if linked_only and not linked:
                continue
            if not _FIELD_KEY.fullmatch(key):
                out.append(html_comment(self.lines[k].strip()))
                continue
            if _plain_url(value, spans):  # as written: Markdown reads the same link
                shown = value
            else:
                shown = inline(value, self.first + k, self.render) if linked else escape(value)
            out.append(f"{key.lower()}:: {shown}".rstrip())
        return "\n".join(out)

    def sub(self, start: int, end: int) -> str:
        """The elements of lines ``[start, end)`` (a greater block's contents)."""
        part = _Section(self.lines[start:end], self.first + start, self.render, self.labels)
        return part.convert(E.scan_block(part.lines).elements, planning=False)

    def convert(
        self, elements: Sequence[E.Element], *, planning: bool = True, zeroth: bool = False
    ) -> str:
        blocks: list[str] = []
        skip = 0  # the line after the last LaTeX environment written
        for el in elements:
            kind = el.kind
            if el.start < skip and kind != E.TEXT:
                continue
            raw = "\n".join(self.lines[el.start : el.end])
            if kind == E.PROPERTY_DRAWER and planning:
                blocks.append(self.properties(el, linked_only=zeroth))
            elif kind == E.TEXT:
                if el.start < skip:  # inside a LaTeX environment already written
                    if el.end > skip:
                        blocks.extend(self.latex(skip, el.end))
                    continue
                parts, skip = self.latex_split(el.start, el.end)
                blocks.extend(parts)
            elif kind == E.TABLE:
                blocks.append(self.table(el))
            elif kind == E.BLOCK:
                blocks.append(self.block(el))
            elif kind == E.FIXED:
                rows = [r.lstrip(" \t")[2:] for r in self.lines[el.start : el.end]]
                blocks.append(_fence("\n".join(rows)))
            elif kind == E.RULE:
                blocks.append("---")
            elif kind == E.KEYWORD:
                if el.name.lower() not in _FRONT_KEYWORDS:
                    blocks.append(html_comment(raw.strip()))
            elif kind == E.DIARY:
                blocks.append(html_comment(raw.strip()))
            elif kind in (E.COMMENT, E.DRAWER, E.CLOCK) or (
                kind in (E.PLANNING, E.PROPERTY_DRAWER) and not planning
            ):
                blocks.append(html_comment(raw))
        return "\n\n".join(b for b in blocks if b)


def org_to_markdown(
    text: str,
    units: Sequence[StoredUnit],
    render: Render,
    fields: Fields,
) -> str:
    """The Markdown body (no front matter) of an Org file's ``text`` (module docstring).

    Args:
        units: the file's indexed units (a heading's keyword, priority, tags and title
            are taken from the unit at its line; a heading the index does not hold is
            read from its line).
        render: writes one link (:data:`cairn.export.org_inline.Render`).
        fields: a heading's unit → its inline-field lines.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    tree = parse_tree(text)
    at: Mapping[int, StoredUnit] = {u.line_start: u for u in units if u.level > 0
                                    and u.kind == "heading"}
    keywords = {u.todo for u in units if u.todo}
    zlen = len(tree.zeroth.lines)
    labels = org_footnotes(text)[1]
    zero = _Section(lines[:zlen], 1, render, labels)
    parts = [zero.convert(E.scan_section(zero.lines, True).elements, zeroth=True)]
    for h in tree.headings:
        sec = lines[h.line_no : h.line_no + len(h.section.lines)]
        u = at.get(h.line_no)
        hl = parse_headline(lines[h.line_no - 1], keywords)
        title_raw = str(u.extra.get("title_raw", u.title)) if u is not None else hl.title
        todo, prio = (u.todo, u.priority) if u is not None else (hl.todo, hl.priority)
        tags = u.tags if u is not None else hl.tags
        title = inline(title_raw, h.line_no, render, labels=labels) if title_raw else ""
        if hl.commented:
            title = f"COMMENT {title}".strip()
        shown = [t for t in tags if _OBSIDIAN_TAG.fullmatch(t)]
        kept = [t for t in tags if not _OBSIDIAN_TAG.fullmatch(t)]
        head = heading_text(todo, prio, title) + "".join(f" #{t}" for t in shown)
        parts.append(("#" * max(1, min(h.level, 6)) + " " + head.strip()).rstrip())
        extra = fields(u) if u is not None else planning_lines(())
        if kept:  # tags Obsidian cannot hold, as Org writes them
            extra += f"{ORG_TAGS}:: :{':'.join(kept)}:\n"
        body = _Section(sec, h.line_no + 1, render, labels).convert(
            E.scan_section(sec, False).elements)
        if extra and _FIELD_LINE.match(body):  # planning and properties: one block
            body = extra + body
        elif extra:
            parts.append(extra.rstrip("\n"))
        parts.append(body)
    return "\n\n".join(p for p in parts if p).rstrip() + "\n"


DRAWER_LINK = "link in an Org drawer (exported in the drawer's HTML comment)"
"""The one difference a round trip of Org may show by design: Org reads the links of a
drawer (``:LOGBOOK:``, ``:REFERENCES:``, a misplaced ``:PROPERTIES:``) as links, the
export keeps the drawer, as Org shows it folded, as an HTML comment, where Markdown reads
no link; the link's text is kept in the comment, byte for byte as :func:`uncomment`
reads it back."""


def drawer_lines(text: str) -> frozenset[int]:
    """The 1-based lines of an Org ``text`` inside its drawers (not property drawers),
    which the export writes as HTML comments (:data:`DRAWER_LINK`)."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    tree = parse_tree(text)
    spans = [(1, lines[: len(tree.zeroth.lines)], True)]
    spans += [(h.line_no + 1, lines[h.line_no : h.line_no + len(h.section.lines)], False)
              for h in tree.headings]
    out: set[int] = set()
    for first, sec, zeroth in spans:
        for el in E.scan_section(sec, zeroth).elements:
            if el.kind == E.DRAWER:
                out.update(range(first + el.start, first + el.end))
    return frozenset(out)


_NOTE_REF = re.compile(r"(?<!^)\[fn:([\w-]+)\]|\[fn:([\w-]*):", re.M)
"""An Org footnote reference: ``[fn:L]`` not at a line start (there it defines ``L``),
or an inline one ``[fn:L:def]``/``[fn::def]`` (label ``""``)."""
_NOTE_DEF = re.compile(r"^\[fn:([\w-]+)\]", re.M)
_VERBATIM_BLOCKS = frozenset({"src", "example", "export", "comment"})


SEARCH_OPTION = "search option of a file link (exported as a link to the note)"
"""A difference a round trip of Org shows by design: a ``file:`` link's search option
that names no heading or custom id (``[[file:b.org::Some text]]``, ``::/regexp/``,
``::12``) leaves a link to the note, as a Markdown or Obsidian link can only point at
a heading or a block."""

PARTIAL_BOX = "partly done checkbox [-] (exported as not done: [ ])"
"""A difference a round trip of Org shows by design: Org's ``[-]``, which it derives
from an item's sub-items (some done, not all), is written ``[ ]``, because Obsidian
shows every other mark (``[-]``, ``[/]``) as done; the sub-items keep their boxes."""

HEADING_NOTE = "inline footnote in a heading (exported as the heading's text)"
"""A difference a round trip of Org shows by design: an inline footnote of a headline
(``* Title [fn::note]``) is written as the heading's text, its words kept, for a
Markdown heading holds no footnote definition."""


def org_footnotes(text: str) -> tuple[list[tuple[int, str]], frozenset[str], int]:
    """An Org ``text``'s footnotes: the references an export keeps as Markdown
    footnotes, ``(line, label)`` (label ``""`` for an anonymous inline one), the
    labels of the others kept: referenced and defined exactly once (Markdown shows no
    unused definition and one of two; an inline one defines itself), and how many
    inline footnotes of headlines are not kept (:data:`HEADING_NOTE`). Read in
    headlines, paragraphs, lists, tables and greater blocks, not in verbatim blocks,
    drawers or verbatim and code objects, as Org does (the element scanner of
    :func:`cairn.formats.org.elements.scan_section`)."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    tree = parse_tree(text)
    refs: list[tuple[int, str, bool]] = []
    headed: list[int] = []
    defs: dict[str, int] = {}

    def read(first: int, rows: list[str], els: Sequence[E.Element]) -> None:
        for el in els:
            if el.kind == E.BLOCK and el.name.lower() not in _VERBATIM_BLOCKS:
                inner = rows[el.start + 1 : el.end - 1]
                read(first + el.start + 1, inner, E.scan_block(inner).elements)
            elif el.kind in (E.TEXT, E.TABLE):
                scan(first + el.start, "\n".join(rows[el.start : el.end]), True)

    def scan(line: int, run: str, body: bool) -> None:
        if "[fn:" not in run:
            return
        for a, b in reversed(verbatim_spans(run)):
            run = run[:a] + "\n" * run.count("\n", a, b) + " " + run[b:]
        if body:
            for m in _NOTE_DEF.finditer(run):
                defs[m.group(1)] = defs.get(m.group(1), 0) + 1
        for m in _NOTE_REF.finditer(run if body else " " + run):
            at = line + run.count("\n", 0, m.start() - (0 if body else 1))
            named = m.group(1) is not None
            if not body and not named:  # kept as the heading's text (HEADING_NOTE)
                headed.append(at)
                continue
            refs.append((at, m.group(1) if named else m.group(2), not named))

    zeroth = lines[: len(tree.zeroth.lines)]
    read(1, zeroth, E.scan_section(zeroth, True).elements)
    for h in tree.headings:
        scan(h.line_no, parse_headline(lines[h.line_no - 1], ()).title, False)
        sec = lines[h.line_no : h.line_no + len(h.section.lines)]
        read(h.line_no + 1, sec, E.scan_section(sec, False).elements)
    used = {x for _, x, inline_ in refs if not inline_}
    labels = frozenset(x for x, n in defs.items() if n == 1 and x in used)
    kept = [(at, x) for at, x, inline_ in refs if inline_ or x in labels]
    return kept, labels, len(headed)
