"""Walks markdown-it tokens into sections: body text, links, tags, block ids, callouts."""

from __future__ import annotations

import bisect
import html
import re
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote

from markdown_it.token import Token

from cairn.formats.markdown.fields import split_wikilink
from cairn.formats.markdown.inline import PLAIN_RUN, plain_inline
from cairn.formats.markdown.sections import Section
from cairn.formats.markdown.syntax import (
    _BLOCK_ID_RE,
    _CALLOUT_RE,
    _HTML_TAG,
    _SIZE_RE,
    _TAG_RE,
    _URL_SCHEME,
    _WINDOWS_DRIVE,
)
from cairn.model import (
    EMBED,
    MARKDOWN_LINK,
    URL,
    WIKILINK,
    Link,
)

BLOCK_TEXT_CHARS = 300
"""Characters of a block's text kept with its anchor (``extra["blocks"]``)."""


_INVISIBLE_BLOCKS = frozenset({"obsidian_comment_block", "front_matter"})


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
        return sections, self._leading_h1(tokens, heads)

    @staticmethod
    def _leading_h1(tokens: Sequence[Token], heads: list[tuple[int, int, str]]) -> str | None:
        """The text of a level-1 heading that is the note's first content (comments
        aside), else ``None``: Obsidian names a note by its file, and only an H1 that
        opens the note reads as its title; a later ``# Part 2`` is a section."""
        for tok in tokens:
            if tok.level != 0 or tok.type in _INVISIBLE_BLOCKS:
                continue
            if tok.type == "html_block" and tok.content.lstrip().startswith("<!--"):
                continue
            if tok.type == "heading_open" and tok.tag == "h1" and heads:
                return heads[0][2] or None
            return None
        return None

    def unit_for(self, file_line: int) -> int:
        return bisect.bisect_right(self.starts, file_line)

    # -- walking -----------------------------------------------------------------------

    def walk(self, tokens: Sequence[Token], sections: list[Section]) -> None:
        current = 0
        row: list[str] | None = None
        heading_inline = False
        callout_pending = False
        # file lines of the current top-level block and of the one before it, each with
        # how many body texts its section held when it began
        top: tuple[int, int, int] | None = None
        before: tuple[int, int, int] | None = None
        for tok in tokens:
            ttype = tok.type
            if tok.map is not None:
                current = self.unit_for(tok.map[0] + 1 + self.offset)
                if tok.level == 0 and tok.nesting >= 0:
                    lines = (tok.map[0] + 1 + self.offset, tok.map[1] + self.offset)
                    before, top = top, (*lines, len(sections[current].body))
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
                known = len(sec.blocks)
                # a table cell holds no block id (Obsidian's goes on the line after)
                text = self.render_inline(tok, sec, collect=True, line=line, callout=callout,
                                          block_ids=row is None)
                if len(sec.blocks) > known:
                    self._block_texts(sec, sec.blocks[known:], text, before)
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
                # the info string's first word (```python, ```{python}, ```.python)
                # an info string of spaces alone names no language
                words = tok.info.split(maxsplit=1)
                lang = words[0].strip("{}.").casefold() if words else ""
                if lang:
                    sec.code_languages.append(lang)
            elif ttype in ("math_block", "math_block_label", "math_block_eqno"):
                sec.body.append(tok.content.strip())
            elif ttype == "html_block":
                stripped = html.unescape(_HTML_TAG.sub(" ", tok.content)).strip()
                if stripped:
                    sec.body.append(re.sub(r"[ \t]+", " ", stripped))

    @staticmethod
    def _block_texts(
        sec: Section,
        blocks: list[dict[str, Any]],
        text: str,
        before: tuple[int, int, int] | None,
    ) -> None:
        """Give block anchors found in a paragraph their text: the paragraph's, or for
        an id on a paragraph of its own (after a table, a quote, a list) the block
        before it, as Obsidian reads it — its lines and the body text it added."""
        own = " ".join(text.split())
        for b in blocks:
            if own:
                b["text"] = own[:BLOCK_TEXT_CHARS]
            elif before is not None:
                b["line_start"], b["line_end"], first = before
                b["text"] = " ".join(" ".join(sec.body[first:]).split())[:BLOCK_TEXT_CHARS]
            else:
                b["text"] = ""

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
        block_ids: bool = True,
    ) -> str:
        """Readable text of an inline token; records links/tags/block ids (with
        ``block_ids``) in ``sec``."""
        meta = tok.meta
        if meta.get("plain"):  # nothing to record (see inline.NOT_PLAIN)
            return plain_inline(tok.content)
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
                if collect and sec is not None and self.obsidian and block_ids:
                    next_type = children[i + 1].type if i + 1 < n else "end"
                    if next_type in ("softbreak", "hardbreak", "end") and "^" in content:
                        bm = _BLOCK_ID_RE.search(content)
                        if bm:
                            sec.block_ids.append(bm.group(1))
                            first, end = (
                                (tok.map[0] + 1 + self.offset, tok.map[1] + self.offset)
                                if tok.map else (line, line)
                            )
                            sec.blocks.append(
                                {"id": bm.group(1), "line_start": first, "line_end": end}
                            )
                            content = content[: bm.start()].rstrip()
                    if tags and not link_stack and "#" in content:
                        # an inline HTML tag ends like a space does: published vaults
                        # write <span class="tags">#alpha #beta</span>
                        at_start = prev_type in (
                            "", "softbreak", "hardbreak", PLAIN_RUN, "html_inline"
                        )
                        self._scan_tags(content, at_start, sec)
                out.append(content)
            elif ctype in ("softbreak", "hardbreak"):
                out.append("\n")
                line += 1
            elif ctype == PLAIN_RUN:  # plain lines (inline.segments): text and breaks
                out.append(child.content)
                line += child.content.count("\n")
                strip_callout = False
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
            if tag not in sec.tag_set:
                sec.tag_set.add(tag)
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
