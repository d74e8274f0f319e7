"""Obsidian-flavoured Markdown → :class:`cairn.model.Document`.

Block structure comes from markdown-it-py (CommonMark + GFM tables and strikethrough,
footnotes, ``$``/``$$`` math, GFM autolinks), never from regular expressions over the
raw file. Obsidian syntax is added as markdown-it rules, so code spans, fenced and
indented code never yield links, tags or comments:

* ``[[Note]]``, ``[[Note|alias]]``, ``[[Note#Heading]]``, ``[[Note#^block]]``,
  ``[[#Heading]]`` (same note: ``target == ""``) → :data:`cairn.model.WIKILINK`; inside a
  table the alias pipe may be escaped (``\\|``) or not — a table row is not split inside
  ``[[…]]``;
* ``![[…]]`` → :data:`cairn.model.EMBED`; for an attachment (a target with a non-``.md``
  extension) ``|300`` / ``|300x200`` is a display size, not an alias (it is dropped);
* ``[text](other%20note.md#Part)`` → :data:`cairn.model.MARKDOWN_LINK` with the target
  URL-decoded (``other note.md``) and anchor ``Part``; ``http(s):``, ``mailto:`` and other
  schemes → :data:`cairn.model.URL`; a local image ``![alt](pic.png)`` → ``EMBED``;
* ``%%comments%%`` (inline or as a block of lines) are dropped from the body;
* ``==highlight==`` keeps its text; ``> [!type]± title`` callouts are recorded in the
  unit's ``extra["callouts"]`` (``{"type", "title", "fold", "line"}``) and their text stays
  searchable;
* inline tags ``#tag`` / ``#area/topic`` are read from text tokens only (not code, links,
  URLs or headings); a tag must follow whitespace or a line start and contain a
  non-digit (``#123`` is not a tag);
* block ids `` ^id`` at the end of a line are recorded in ``extra["block_ids"]`` and
  removed from the body.

``Link.target`` is the note reference as written, without ``#anchor``; ``.md`` is only
present when the source wrote it. ``Link.anchor`` is ``Heading``, ``H1#H2`` or
``^block``. ``Link.line`` is the 1-based file line.

Units: ordinal 0 is the preamble (kind ``preamble``, level 0, title = document title,
empty outline path, text before the first heading, front matter excluded); then one unit
per top-level ATX or setext heading holding only its own section. Headings nested in
block quotes or lists stay body text. Front matter (see :mod:`cairn.formats.frontmatter`)
becomes ``Document.metadata``; it is also exposed as string ``properties`` of the preamble
unit, and front matter tags are every unit's ``inherited_tags``. When a closed front
matter block cannot be read, a warning is recorded, metadata is empty and the block's
text is kept (rendered as plain text) at the start of the preamble body. Wikilinks in
front matter string values (``up: "[[Parent]]"``) are links of the preamble unit, on the
line of their key, as Obsidian counts them.

Fields: ``title`` (front matter ``title``, else the first level-1 heading, else the file
stem), ``tags``/``tag`` (list or string; a string is split on commas and whitespace as
Obsidian does; leading ``#`` stripped), ``aliases``/``alias`` (list, or a string split
on commas), ``id`` → ``declared_id``, ``type``, ``created`` (or ``date``),
``modified``/``updated``, ``visibility``; keys are matched case-insensitively.
"""

from __future__ import annotations

import bisect
import functools
import html
import importlib
import json
import re
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from cairn.formats import frontmatter as fm_mod
from cairn.model import (
    EMBED,
    HEADING,
    MARKDOWN_LINK,
    PREAMBLE,
    URL,
    WIKILINK,
    Diagnostic,
    Document,
    Link,
    Unit,
)

__all__ = [
    "Analysis",
    "Section",
    "analyse",
    "normalise_aliases",
    "normalise_tags",
    "parse",
    "split_wikilink",
]

# --- markdown-it setup -----------------------------------------------------------------

_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_TAG_RE = re.compile(r"(?:(?<=\s)|^)#([^\s!\"#$%&'()*+,.:;<=>?@\[\\\]^`{|}~]+)")
_BLOCK_ID_RE = re.compile(r"(?:(?<=\s)|^)\^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*$")
_CALLOUT_RE = re.compile(r"^\[!([^\]\s]+)\]([+-]?)[ \t]*(.*)$")
_SIZE_RE = re.compile(r"^\d+(?:x\d+)?$")
_HTML_TAG = re.compile(r"<[^>]*>")


def _split_table_row(string: str) -> list[str]:
    """markdown-it's table-row splitter, except that ``|`` inside ``[[…]]`` is not a cell
    separator (Obsidian reads wikilinks before table cells). ``\\|`` becomes ``|``."""
    result: list[str] = []
    current: list[str] = []
    i, n = 0, len(string)
    depth = 0
    while i < n:
        ch = string[i]
        if ch == "\\" and i + 1 < n and string[i + 1] == "|":
            current.append("|")
            i += 2
            continue
        if ch == "[" and string.startswith("[[", i):
            depth += 1
            current.append("[[")
            i += 2
            continue
        if ch == "]" and depth and string.startswith("]]", i):
            depth -= 1
            current.append("]]")
            i += 2
            continue
        if ch == "|" and not depth:
            result.append("".join(current))
            current = []
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            current.append(string[i : i + 2])
            i += 2
            continue
        current.append(ch)
        i += 1
    result.append("".join(current))
    return result


def _wikilink_aware_table() -> Callable[..., bool] | None:
    """A copy of markdown-it's table rule whose row splitter knows wikilinks.

    The rule's code object is reused with a private globals mapping, so nothing in
    markdown-it is patched. Returns ``None`` if markdown-it's layout is not the expected
    one (the stock rule is kept then).
    """
    try:
        table_mod = importlib.import_module("markdown_it.rules_block.table")
    except ImportError:  # pragma: no cover - markdown-it layout changed
        return None
    rule = getattr(table_mod, "table", None)
    if not isinstance(rule, types.FunctionType) or not hasattr(table_mod, "escapedSplit"):
        return None  # pragma: no cover
    glb = dict(rule.__globals__)
    glb["escapedSplit"] = _split_table_row
    clone = types.FunctionType(
        rule.__code__, glb, rule.__name__, rule.__defaults__, rule.__closure__
    )
    clone.__kwdefaults__ = rule.__kwdefaults__
    return clone


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    if src.startswith("![[", pos):
        embed, start = True, pos + 3
    elif src.startswith("[[", pos):
        embed, start = False, pos + 2
    else:
        return False
    end = src.find("]]", start, state.posMax)
    if end < 0:
        return False
    inner = src[start:end]
    if not inner.strip() or "\n" in inner or "[[" in inner:
        return False
    if not silent:
        tok = state.push("wikilink", "", 0)
        tok.content = inner
        tok.markup = src[pos : end + 2]
        tok.meta = {"embed": embed}
    state.pos = end + 2
    return True


def _comment_inline_rule(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    if not src.startswith("%%", pos):
        return False
    end = src.find("%%", pos + 2, state.posMax)
    if end < 0:
        return False
    if not silent:
        tok = state.push("obsidian_comment", "", 0)
        tok.content = src[pos + 2 : end]
    state.pos = end + 2
    return True


def _comment_block_rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    if state.sCount[start] - state.blkIndent >= 4:
        return False
    pos = state.bMarks[start] + state.tShift[start]
    line = state.src[pos : state.eMarks[start]]
    if not line.startswith("%%"):
        return False
    rest = line[2:]
    close = rest.find("%%")
    if close >= 0:
        if rest[close + 2 :].strip():
            return False  # an inline comment followed by text: a paragraph
        nxt = start + 1
    else:
        nxt = start + 1
        while nxt < end:
            lpos = state.bMarks[nxt] + state.tShift[nxt]
            if "%%" in state.src[lpos : state.eMarks[nxt]]:
                break
            nxt += 1
        else:
            return False  # never closed: read it as text
        nxt += 1
    if silent:
        return True
    state.line = nxt
    tok = state.push("obsidian_comment_block", "", 0)
    tok.map = [start, nxt]
    tok.block = True
    return True


def _mark_rule(state: StateInline, silent: bool) -> bool:
    src, pos, pmax = state.src, state.pos, state.posMax
    if not src.startswith("==", pos) or pos + 2 >= pmax or src[pos + 2] in " \t\n=":
        return False
    end = src.find("==", pos + 3, pmax)
    while end >= 0 and src[end - 1] in " \t\n":
        end = src.find("==", end + 1, pmax)
    if end < 0:
        return False
    if silent:
        state.pos = end + 2
        return True
    state.push("mark_open", "mark", 1)
    old_max = state.posMax
    state.pos, state.posMax = pos + 2, end
    state.md.inline.tokenize(state)
    state.pos, state.posMax = end + 2, old_max
    state.push("mark_close", "mark", -1)
    return True


@functools.cache
def _markdown_it(obsidian: bool) -> MarkdownIt:
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.footnote import footnote_plugin

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    md.use(footnote_plugin)
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False)
    try:
        from mdit_py_plugins.gfm_autolink import gfm_autolink_plugin

        md.use(gfm_autolink_plugin)
    except ImportError:  # pragma: no cover - older mdit-py-plugins
        pass
    if obsidian:
        table = _wikilink_aware_table()
        if table is not None:
            md.block.ruler.at("table", table)
        md.block.ruler.before(
            "fence",
            "obsidian_comment",
            _comment_block_rule,
            {"alt": ["paragraph", "reference", "blockquote", "list"]},
        )
        md.inline.ruler.before("link", "wikilink", _wikilink_rule)
        md.inline.ruler.before("link", "obsidian_comment", _comment_inline_rule)
        md.inline.ruler.after("strikethrough", "mark", _mark_rule)
        add = getattr(md.inline, "add_terminator_char", None)
        if add is not None:
            for ch in "%=":
                add(ch)
    return md


# --- public helpers --------------------------------------------------------------------


def split_wikilink(inner: str) -> tuple[str, str | None, str | None]:
    """Split the text between ``[[`` and ``]]`` into ``(target, anchor, alias)``.

    The alias follows the first unescaped ``|`` (``\\|`` counts as the pipe, as in an
    Obsidian table); the anchor follows the first ``#``. Whitespace is trimmed. A target
    of ``""`` means the note itself (``[[#Heading]]``).
    """
    alias: str | None = None
    m = re.search(r"\\?\|", inner)
    if m:
        alias = inner[m.end() :].strip()
        inner = inner[: m.start()]
    target, sep, anchor = inner.partition("#")
    return target.strip(), (anchor.strip() if sep else None) or None, alias


def normalise_tags(value: Any) -> list[str]:
    """Front matter ``tags`` as Obsidian reads them: always a list of strings.

    A string is split on commas and whitespace; list items are taken whole (nested
    lists flattened); a leading ``#`` is stripped; empty items and ``None`` dropped;
    order kept, duplicates removed.
    """
    items: list[str] = []
    if value is None:
        return items
    if isinstance(value, str):
        items = re.split(r"[,\s]+", value)
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, list):
                items.extend(normalise_tags(v))
            elif isinstance(v, str):
                items.extend(re.split(r"\s*,\s*", v.strip()))
            elif v is not None and not isinstance(v, dict):
                items.append(str(v).lower() if isinstance(v, bool) else str(v))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        items = [str(value)]
    out: dict[str, None] = {}
    for item in items:
        tag = item.strip().lstrip("#").strip()
        if tag:
            out[tag] = None
    return list(out)


def normalise_aliases(value: Any) -> list[str]:
    """Front matter ``aliases``: a list of strings (a string is split on commas)."""
    items: list[str] = []
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list):
        items = [str(v) for v in value if v is not None and not isinstance(v, dict | list)]
    elif isinstance(value, int | float) and not isinstance(value, bool):
        items = [str(value)]
    out: dict[str, None] = {}
    for item in items:
        item = item.strip()
        if item:
            out[item] = None
    return list(out)


# --- analysis --------------------------------------------------------------------------


@dataclass(slots=True)
class Section:
    """A unit being built (mutable); see :class:`cairn.model.Unit` for the fields."""

    level: int
    title: str
    line_start: int
    line_end: int = 0
    parent: int | None = None
    outline_path: tuple[str, ...] = ()
    body: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    block_ids: list[str] = field(default_factory=list)
    callouts: list[dict[str, Any]] = field(default_factory=list)
    footnotes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Analysis:
    """What :func:`analyse` found in one Markdown file (shared by Markdown and OKF).

    Attributes:
        front: the front matter result.
        sections: ``sections[0]`` is the preamble, then one per top-level heading.
        first_h1: the title of the first level-1 heading, if any.
        inline_tags: every inline tag of the note in order, without duplicates.
        warnings: diagnostics (front matter problems first).
        total_lines: number of lines of the file.
    """

    front: fm_mod.FrontMatter
    sections: list[Section]
    first_h1: str | None
    inline_tags: list[str]
    warnings: list[Diagnostic]
    total_lines: int


def _normalise_text(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\ufeff" in text:
        text = text.replace("\ufeff", "")
    return text


def analyse(text: str, relpath: str, *, obsidian: bool = True, allow_toml: bool = True) -> Analysis:
    """Parse ``text`` into front matter and sections.

    Args:
        text: the file's text (BOM and ``\\r`` tolerated).
        relpath: the file's path relative to its root (for diagnostics).
        obsidian: read Obsidian syntax (wikilinks, embeds, tags, block ids, comments,
            highlights); ``False`` gives plain CommonMark + GFM (used for OKF).
        allow_toml: accept ``+++`` TOML front matter.
    """
    text = _normalise_text(text)
    front = fm_mod.split(text, relpath, allow_toml=allow_toml)
    warnings = list(front.diagnostics)
    total_lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    total_lines = max(total_lines, 1)
    offset = front.body_line - 1
    md = _markdown_it(obsidian)
    tokens = md.parse(front.body)
    walker = _Walker(obsidian, offset, relpath)
    sections, first_h1 = walker.build_sections(tokens, total_lines, front.body_line)
    if front.failed and front.raw.strip():
        # The block was not front matter we can read: keep its text searchable at the
        # top of the preamble (no structure, links or tags taken from it).
        plain = _Walker(False, 1, relpath)
        raw_tokens = _markdown_it(False).parse(front.raw)
        sections[0].body.insert(0, plain.plain_text(raw_tokens))
        sections[0].line_start = 1
    walker.walk(tokens, sections)
    return Analysis(front, sections, first_h1, list(walker.all_tags), warnings, total_lines)


class _Walker:
    """Walks markdown-it tokens and fills sections."""

    def __init__(self, obsidian: bool, offset: int, relpath: str) -> None:
        self.obsidian = obsidian
        self.offset = offset  # file line of body line 0, minus one
        self.relpath = relpath
        self.all_tags: dict[str, None] = {}
        self.starts: list[int] = []

    # -- sections ----------------------------------------------------------------------

    def build_sections(
        self, tokens: Sequence[Token], total_lines: int, body_line: int
    ) -> tuple[list[Section], str | None]:
        heads: list[tuple[int, int, str]] = []  # (file line, level, title)
        for i, tok in enumerate(tokens):
            if tok.type == "heading_open" and tok.level == 0 and tok.map is not None:
                inline = tokens[i + 1] if i + 1 < len(tokens) else None
                title = ""
                if inline is not None and inline.type == "inline":
                    title = " ".join(self.render_inline(inline, None, collect=False).split())
                heads.append((tok.map[0] + 1 + self.offset, int(tok.tag[1:]), title))
        first_line = heads[0][0] if heads else total_lines + 1
        pre = Section(level=0, title="", line_start=1, line_end=max(1, first_line - 1))
        sections = [pre]
        stack: list[int] = []  # ordinals of open ancestors
        for idx, (line, level, title) in enumerate(heads):
            while stack and sections[stack[-1]].level >= level:
                stack.pop()
            parent = stack[-1] if stack else None
            path = (*sections[parent].outline_path, title) if parent is not None else (title,)
            end = heads[idx + 1][0] - 1 if idx + 1 < len(heads) else total_lines
            sections.append(
                Section(
                    level=level,
                    title=title,
                    line_start=line,
                    line_end=max(line, end),
                    parent=parent,
                    outline_path=path,
                )
            )
            stack.append(len(sections) - 1)
        self.starts = [s.line_start for s in sections[1:]]
        first_h1 = next((t for _, lvl, t in heads if lvl == 1), None)
        return sections, first_h1

    def unit_for(self, file_line: int) -> int:
        return bisect.bisect_right(self.starts, file_line)

    # -- walking -----------------------------------------------------------------------

    def walk(self, tokens: Sequence[Token], sections: list[Section]) -> None:
        current = 0
        row: list[str] | None = None
        heading_inline = False
        callout_pending = False
        for tok in tokens:
            ttype = tok.type
            if tok.map is not None:
                current = self.unit_for(tok.map[0] + 1 + self.offset)
            sec = sections[current]
            if ttype == "heading_open":
                heading_inline = tok.level == 0
                continue
            if ttype == "inline":
                line = (tok.map[0] if tok.map else 0) + 1 + self.offset
                callout: dict[str, Any] | None = None
                if callout_pending:
                    callout_pending = False
                    callout = self._callout(tok, line)
                    if callout is not None:
                        sec.callouts.append(callout)
                if heading_inline:
                    heading_inline = False
                    # links in a heading count; tags in a heading do not; title is not body
                    self.render_inline(tok, sec, collect=True, line=line, tags=False)
                    continue
                text = self.render_inline(tok, sec, collect=True, line=line, callout=callout)
                if row is not None:
                    row.append(text.strip())
                elif text.strip():
                    sec.body.append(text)
                continue
            if ttype == "blockquote_open":
                callout_pending = self.obsidian
                continue
            if ttype == "paragraph_open":
                continue
            callout_pending = False
            if ttype == "tr_open":
                row = []
            elif ttype == "tr_close":
                if row is not None and any(row):
                    sec.body.append(" | ".join(row))
                row = None
            elif ttype in ("fence", "code_block"):
                sec.body.append(tok.content.rstrip("\n"))
            elif ttype in ("math_block", "math_block_label", "math_block_eqno"):
                sec.body.append(tok.content.strip())
            elif ttype == "html_block":
                stripped = html.unescape(_HTML_TAG.sub(" ", tok.content)).strip()
                if stripped:
                    sec.body.append(re.sub(r"[ \t]+", " ", stripped))

    def plain_text(self, tokens: Sequence[Token]) -> str:
        parts: list[str] = []
        for tok in tokens:
            if tok.type == "inline":
                parts.append(self.render_inline(tok, None, collect=False))
            elif tok.type in ("fence", "code_block", "html_block", "math_block"):
                parts.append(tok.content.rstrip("\n"))
        return "\n".join(p for p in parts if p.strip())

    def _callout(self, tok: Token, line: int) -> dict[str, Any] | None:
        first = tok.content.split("\n", 1)[0]
        m = _CALLOUT_RE.match(first)
        if not m:
            return None
        title_text = m.group(3).strip()
        return {
            "type": m.group(1).lower(),
            "title": title_text,
            "fold": m.group(2) or None,
            "line": line,
        }

    def render_inline(
        self,
        tok: Token,
        sec: Section | None,
        *,
        collect: bool,
        line: int = 0,
        tags: bool = True,
        callout: dict[str, Any] | None = None,
    ) -> str:
        """Readable text of an inline token; records links/tags/block ids in ``sec``."""
        children = tok.children or []
        out: list[str] = []
        link_stack: list[tuple[int, Token, int]] = []  # (out index, link_open, line)
        prev_type = ""
        strip_callout = callout is not None
        n = len(children)
        for i, child in enumerate(children):
            ctype = child.type
            if ctype == "text":
                content = child.content
                if strip_callout:
                    strip_callout = False
                    m = re.match(r"^\[![^\]\s]+\][+-]?[ \t]*", content)
                    if m:
                        content = content[m.end() :]
                if collect and sec is not None and self.obsidian:
                    next_type = children[i + 1].type if i + 1 < n else "end"
                    if next_type in ("softbreak", "hardbreak", "end") and "^" in content:
                        bm = _BLOCK_ID_RE.search(content)
                        if bm:
                            sec.block_ids.append(bm.group(1))
                            content = content[: bm.start()].rstrip()
                    if tags and not link_stack and "#" in content:
                        at_start = prev_type in ("", "softbreak", "hardbreak")
                        self._scan_tags(content, at_start, sec)
                out.append(content)
            elif ctype in ("softbreak", "hardbreak"):
                out.append("\n")
                line += 1
            elif ctype in ("code_inline", "math_inline", "math_inline_double", "text_special"):
                out.append(child.content)
            elif ctype == "link_open":
                link_stack.append((len(out), child, line))
            elif ctype == "link_close":
                if link_stack:
                    start, opener, lline = link_stack.pop()
                    label = "".join(out[start:])
                    if collect and sec is not None:
                        self._markdown_link(opener, label, lline, sec, embed=False)
            elif ctype == "image":
                alt = child.content
                out.append(alt)
                if collect and sec is not None:
                    self._markdown_link(child, alt, line, sec, embed=True)
            elif ctype == "wikilink":
                out.append(self._wikilink(child, sec if collect else None, line))
            elif ctype == "footnote_ref" and sec is not None and collect:
                fn_label = (child.meta or {}).get("label")
                if fn_label:
                    sec.footnotes.append(str(fn_label))
            # other tokens (emphasis, mark, comments, html_inline) add no text
            prev_type = ctype
        return "".join(out)

    def _scan_tags(self, content: str, at_start: bool, sec: Section) -> None:
        probe = content if at_start else "\x00" + content
        for m in _TAG_RE.finditer(probe):
            tag = m.group(1)
            if not re.search(r"[^0-9]", tag):
                continue
            if tag not in sec.tags:
                sec.tags.append(tag)
            self.all_tags[tag] = None

    def _wikilink(self, child: Token, sec: Section | None, line: int) -> str:
        inner = child.content
        embed = bool((child.meta or {}).get("embed"))
        target, anchor, alias = split_wikilink(inner)
        if target.endswith("\\"):
            target = target.rstrip("\\").strip()
        if embed and alias is not None and _is_attachment(target) and _SIZE_RE.match(alias):
            alias = None  # ![[img.png|300]]: a display size
        if sec is not None:
            sec.links.append(
                Link(
                    kind=EMBED if embed else WIKILINK,
                    target=target,
                    alias=alias or None,
                    anchor=anchor,
                    line=line,
                    raw=child.markup,
                )
            )
        if alias:
            return alias
        shown = target
        if anchor:
            shown = f"{target} > {anchor.lstrip('^')}" if target else anchor.lstrip("^")
        return shown

    def _markdown_link(
        self, tok: Token, label: str, line: int, sec: Section, *, embed: bool
    ) -> None:
        href = str(tok.attrGet("src" if embed else "href") or "")
        if not href:
            return
        external = tok.markup in ("autolink", "linkify")
        if external or (_URL_SCHEME.match(href) and not _WINDOWS_DRIVE.match(href)):
            raw = _raw_md(label, href, embed)
            sec.links.append(Link(kind=URL, target=href, alias=label or None, line=line, raw=raw))
            return
        decoded = unquote(href)
        target, sep, anchor = decoded.partition("#")
        target = target.strip()
        sec.links.append(
            Link(
                kind=EMBED if embed else MARKDOWN_LINK,
                target=target,
                alias=label or None,
                anchor=(anchor.strip() if sep else None) or None,
                line=line,
                raw=_raw_md(label, href, embed),
            )
        )


def _raw_md(label: str, href: str, embed: bool) -> str:
    return f"{'!' if embed else ''}[{label}]({href})"


def _is_attachment(target: str) -> bool:
    suffix = PurePosixPath(target).suffix.lower()
    return bool(suffix) and suffix != ".md" and len(suffix) <= 6 and " " not in suffix


# --- documents -------------------------------------------------------------------------


def _lookup(meta: Mapping[str, Any], *names: str) -> Any:
    lower = {k.lower(): k for k in meta}
    for name in names:
        key = lower.get(name)
        if key is not None:
            return meta[key]
    return None


def _scalar_text(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value).strip()
    return text or None


def property_text(value: Any) -> str:
    """A front matter value as the string stored in ``Unit.properties``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    if isinstance(value, list) and all(
        isinstance(v, str | int | float) and not isinstance(v, bool) for v in value
    ):
        return ", ".join(str(v) for v in value)
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


def date_field(front: fm_mod.FrontMatter, *names: str) -> str | None:
    """The normalised ISO date of the first present key among ``names`` (case-insensitive)."""
    lower = {k.lower(): k for k in front.data}
    for name in names:
        key = lower.get(name)
        if key is None:
            continue
        if key in front.dates:
            return front.dates[key]
        return fm_mod.normalise_date(_scalar_text(front.data[key]) or "")
    return None


def stem(relpath: str) -> str:
    """The file name without its extension."""
    return PurePosixPath(relpath).stem or relpath


def build_units(
    analysis: Analysis,
    title: str,
    first_kind: str,
    inherited: Sequence[str],
    properties: Mapping[str, str],
    first_extra: Mapping[str, Any] | None = None,
    first_body_prefix: str = "",
) -> tuple[Unit, ...]:
    """Turn :attr:`Analysis.sections` into frozen units (ordinal 0 is ``first_kind``)."""
    units: list[Unit] = []
    inherited_t = tuple(inherited)
    for ordinal, sec in enumerate(analysis.sections):
        extra: dict[str, Any] = {}
        if sec.block_ids:
            extra["block_ids"] = list(dict.fromkeys(sec.block_ids))
        if sec.callouts:
            extra["callouts"] = sec.callouts
        if sec.footnotes:
            extra["footnotes"] = list(dict.fromkeys(sec.footnotes))
        body = "\n".join(sec.body).strip()
        if ordinal == 0:
            if first_extra:
                extra.update(first_extra)
            if first_body_prefix:
                body = (first_body_prefix + "\n\n" + body).strip()
            units.append(
                Unit(
                    ordinal=0,
                    level=0,
                    kind=first_kind,
                    title=title,
                    outline_path=(),
                    body=body,
                    tags=tuple(sec.tags),
                    inherited_tags=inherited_t,
                    properties=dict(properties),
                    line_start=sec.line_start,
                    line_end=max(sec.line_start, sec.line_end),
                    links=tuple(sec.links),
                    extra=extra,
                )
            )
            continue
        own = tuple(sec.tags)
        units.append(
            Unit(
                ordinal=ordinal,
                level=sec.level,
                kind=HEADING,
                title=sec.title,
                outline_path=sec.outline_path,
                body=body,
                parent=sec.parent,
                tags=own,
                inherited_tags=tuple(t for t in inherited_t if t not in own),
                line_start=sec.line_start,
                line_end=sec.line_end,
                links=tuple(sec.links),
                extra=extra,
            )
        )
    return tuple(units)


_FM_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")


def frontmatter_links(front: fm_mod.FrontMatter) -> list[Link]:
    """Wikilinks written in front matter string values (``up: "[[Parent]]"``).

    Obsidian counts these as links of the note (its "frontmatter links"). Each is a
    :data:`cairn.model.WIKILINK` on the line of its top-level key.
    """
    links: list[Link] = []

    def visit(value: Any, line: int | None) -> None:
        if isinstance(value, str):
            if "[[" in value:
                for m in _FM_WIKILINK.finditer(value):
                    target, anchor, alias = split_wikilink(m.group(2))
                    links.append(
                        Link(
                            kind=EMBED if m.group(1) else WIKILINK,
                            target=target,
                            alias=alias or None,
                            anchor=anchor,
                            line=line,
                            raw=m.group(0),
                        )
                    )
        elif isinstance(value, list):
            for v in value:
                visit(v, line)
        elif isinstance(value, dict):
            for v in value.values():
                visit(v, line)

    for key, value in front.data.items():
        visit(value, front.key_lines.get(key, front.start_line))
    return links


def parse(text: str, relpath: str) -> Document:
    """Parse one Obsidian-style Markdown note.

    Args:
        text: the file's text, decoded (BOM and ``\\r`` tolerated).
        relpath: path relative to the source root, POSIX separators.

    Returns:
        A :class:`Document` with ``format == "markdown"``; problems (front matter that
        is unclosed, invalid or not a mapping; unparseable dates) are in ``warnings``.

    Raises:
        cairn.errors.ParseError: only if markdown-it itself fails on the text.
    """
    from cairn.errors import ParseError

    try:
        analysis = analyse(text, relpath, obsidian=True, allow_toml=True)
    except RecursionError as exc:  # pragma: no cover - pathological nesting
        raise ParseError("nesting too deep to parse", path=relpath) from exc
    front = analysis.front
    meta = front.data
    warnings = list(analysis.warnings)
    title = _scalar_text(_lookup(meta, "title")) or analysis.first_h1 or stem(relpath)
    fm_tags = normalise_tags(_lookup(meta, "tags", "tag"))
    tags = list(dict.fromkeys([*fm_tags, *analysis.inline_tags]))
    aliases = normalise_aliases(_lookup(meta, "aliases", "alias"))
    created = date_field(front, "created", "date")
    modified = date_field(front, "modified", "updated", "last_modified", "lastmod")
    for names, value in ((("created", "date"), created), (("modified", "updated"), modified)):
        raw = next((v for v in (_lookup(meta, n) for n in names) if v is not None), None)
        if raw is not None and value is None and _scalar_text(raw):
            warnings.append(
                Diagnostic(
                    relpath,
                    f"front matter {names[0]!r} value {_scalar_text(raw)!r} is not a date",
                    front.start_line,
                    severity="info",
                )
            )
    properties = {k: property_text(v) for k, v in meta.items()}
    fm_links = frontmatter_links(front)
    if fm_links:
        analysis.sections[0].links[:0] = fm_links
    units = build_units(analysis, title, PREAMBLE, fm_tags, properties)
    return Document(
        path=relpath,
        format="markdown",
        title=title,
        units=units,
        metadata=meta,
        tags=tuple(tags),
        aliases=tuple(aliases),
        created=created,
        modified=modified,
        visibility=_scalar_text(_lookup(meta, "visibility")),
        type=_scalar_text(_lookup(meta, "type")),
        declared_id=_scalar_text(_lookup(meta, "id")),
        warnings=tuple(warnings),
    )
