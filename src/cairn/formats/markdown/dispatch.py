"""markdown-it's inline and block tokenizers, trying at each position only the rules
that can start there (otherwise most of a large note's parse is spent trying rules
that cannot match).

markdown-it tries every inline rule, in order, at each position where the ``text``
rule stops (a *terminator* character: ``:``, ``w``, ``-``, ``!`` and a dozen more);
with this parser's 21 rules that is most of the time spent on prose. Every rule but
``text`` returns ``False`` at once unless the character at the position is one of its
:data:`STARTS`, and ``text`` matches exactly at the characters that are not
terminators, so trying only the rules listed for the character gives the same tokens.
:class:`DispatchingInline` does that in ``tokenize`` and ``skipToken``; with an enabled
rule not in :data:`STARTS` (or ``text`` not first) it runs markdown-it's own code.

:class:`DispatchingBlock` does the same for block rules at the start of each block:
every rule of :data:`BLOCK_STARTS` returns ``False`` unless the line's first non-blank
character is one of its characters; ``code`` needs an indent of four, ``table`` a next
line opening with ``|``, ``-`` or ``:``, and ``lheading`` and ``paragraph`` are always
tried.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from markdown_it.parser_block import ParserBlock
from markdown_it.parser_inline import ParserInline

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import StateBlock
    from markdown_it.rules_inline import StateInline

InlineRule = Callable[["StateInline", bool], bool]
BlockRule = Callable[["StateBlock", int, int, bool], bool]

STARTS: dict[str, str] = {
    "newline": "\n",
    "math_inline": "$",
    "escape": "\\",
    "backticks": "`",
    "strikethrough": "~",
    "mark": "=",
    "emphasis": "*_",
    "wikilink": "[!",
    "obsidian_comment": "%",
    "link": "[",
    "image": "!",
    "footnote_inline": "^",
    "footnote_ref": "[",
    "autolink": "<",
    "html_inline": "<",
    "entity": "&",
    "gfm_autolink_www": "w",
    "gfm_autolink_protocol": ":",
    "gfm_autolink_email": "@",
}
"""The characters each known inline rule can start at (it returns ``False`` at any
other); ``text`` starts at every character that is not a terminator."""


class DispatchingInline(ParserInline):
    """markdown-it's inline parser whose ``tokenize`` and ``skipToken`` try, at each
    position, only the rules :data:`STARTS` lists for its character, in ruler order."""

    _compiled: list[InlineRule] | None
    _by_char: dict[str, list[InlineRule]]
    _named: list[tuple[str, InlineRule]] | None

    def _table(self) -> dict[str, list[InlineRule]] | None:
        """The per-character rule lists, or ``None`` when some enabled rule is not
        known (read again whenever the ruler changed)."""
        rules = self.ruler.getRules("")
        if rules is not self._compiled:
            self._compiled = rules
            self._by_char = {}
            named = [(r.name, r.fn) for r in self.ruler.__rules__ if r.enabled]
            known = bool(named) and named[0][0] == "text"
            known = known and all(n in STARTS for n, _ in named[1:])
            self._named = named if known else None
        return None if self._named is None else self._by_char

    def _fill(self, ch: str) -> list[InlineRule]:
        """The rules to try where the text holds ``ch``: ``text`` alone at a character
        that is not a terminator (it matches there, so no later rule is tried), else
        the rules that can start at ``ch``, in ruler order."""
        assert self._named is not None
        if self.terminator_re.match(ch) is None:
            got = [self._named[0][1]]
        else:
            got = [fn for name, fn in self._named[1:] if ch in STARTS[name]]
        self._by_char[ch] = got
        return got

    def tokenize(self, state: StateInline) -> None:
        """markdown-it's ``ParserInline.tokenize``, dispatching on the character."""
        table = self._table()
        if table is None:
            return super().tokenize(state)
        end = state.posMax
        max_nesting = state.md.options["maxNesting"]
        src = state.src
        while state.pos < end:
            pos = state.pos
            ok = False
            if state.level < max_nesting:
                rules = table.get(src[pos])
                if rules is None:
                    rules = self._fill(src[pos])
                for rule in rules:
                    ok = rule(state, False)
                    if ok:
                        if state.pos <= pos:
                            raise RuntimeError("inline rule didn't increment state.pos")
                        break
            if ok:
                if state.pos >= end:
                    break
                continue
            state.append_pending(src[state.pos])
            state.pos += 1
        if state.pending:
            state.pushPending()
        return None

    def skipToken(self, state: StateInline) -> None:
        """markdown-it's ``ParserInline.skipToken``, dispatching on the character."""
        table = self._table()
        if table is None:
            return super().skipToken(state)
        ok = False
        pos = state.pos
        cache = state.cache
        if pos in cache:
            state.pos = cache[pos]
            return None
        if state.level < state.md.options["maxNesting"]:
            rules = table.get(state.src[pos])
            if rules is None:
                rules = self._fill(state.src[pos])
            for rule in rules:
                state.level += 1
                ok = rule(state, True)
                state.level -= 1
                if ok:
                    if state.pos <= pos:
                        raise RuntimeError("inline rule didn't increment state.pos")
                    break
        else:
            state.pos = state.posMax
        if not ok:
            state.pos += 1
        cache[pos] = state.pos
        return None


BLOCK_STARTS: dict[str, str] = {
    "math_block": "$",
    "obsidian_comment": "%",
    "fence": "`~",
    "blockquote": ">",
    "hr": "*-_",
    "list": "*-+0123456789",
    "footnote_def": "[",
    "reference": "[",
    "html_block": "<",
    "heading": "#",
}
"""The first characters (after blanks) at which each known block rule can match."""

_ALWAYS = ("lheading", "paragraph")
_OTHER = ("code", "table")
_TABLE_NEXT = "|-:"


class DispatchingBlock(ParserBlock):
    """markdown-it's block parser whose ``tokenize`` tries, at the start of each block,
    only the rules that can match there (see the module), in ruler order."""

    _compiled: list[BlockRule] | None
    _named: list[tuple[str, BlockRule]] | None
    _by_key: dict[tuple[str, bool, bool], list[BlockRule]]

    def _table(self) -> dict[tuple[str, bool, bool], list[BlockRule]] | None:
        rules = self.ruler.getRules("")
        if rules is not self._compiled:
            self._compiled = rules
            self._by_key = {}
            named = [(r.name, r.fn) for r in self.ruler.__rules__ if r.enabled]
            known = all(n in BLOCK_STARTS or n in _ALWAYS or n in _OTHER for n, _ in named)
            self._named = named if known else None
        return None if self._named is None else self._by_key

    def _fill(self, key: tuple[str, bool, bool]) -> list[BlockRule]:
        assert self._named is not None
        ch, code, table = key
        got = [
            fn
            for name, fn in self._named
            if name in _ALWAYS
            or ch in BLOCK_STARTS.get(name, "")
            or (code and name == "code")
            or (table and name == "table")
        ]
        self._by_key[key] = got
        return got

    def tokenize(self, state: StateBlock, startLine: int, endLine: int) -> None:
        """markdown-it's ``ParserBlock.tokenize``, dispatching on the line's start."""
        table = self._table()
        if table is None:
            return super().tokenize(state, startLine, endLine)
        line = startLine
        maxNesting = state.md.options.maxNesting
        hasEmptyLines = False
        src = state.src
        while line < endLine:
            state.line = line = state.skipEmptyLines(line)
            if line >= endLine:
                break
            if state.sCount[line] < state.blkIndent:
                break
            if state.level >= maxNesting:
                state.line = endLine
                break
            pos = state.bMarks[line] + state.tShift[line]
            nxt = line + 1
            tbl = False
            if nxt < len(state.bMarks):
                npos = state.bMarks[nxt] + state.tShift[nxt]
                tbl = npos < state.eMarks[nxt] and src[npos] in _TABLE_NEXT
            code = state.sCount[line] - state.blkIndent >= 4
            key = (src[pos] if pos < len(src) else "", code, tbl)
            rules = table.get(key)
            if rules is None:
                rules = self._fill(key)
            ok = False
            for rule in rules:
                ok = rule(state, line, endLine, False)
                if ok:
                    if state.line <= line:
                        raise RuntimeError("block rule didn't increment state.line")
                    break
            if not ok:
                raise RuntimeError("none of the block rules matched")
            state.tight = not hasEmptyLines
            line = state.line
            if (line - 1) < endLine and state.isEmpty(line - 1):
                hasEmptyLines = True
            if line < endLine and state.isEmpty(line):
                hasEmptyLines = True
                line += 1
                state.line = line
        return None


def install(md: MarkdownIt) -> None:
    """Give ``md`` a :class:`DispatchingInline` and a :class:`DispatchingBlock` with
    the rules of its own parsers."""
    inline = DispatchingInline.__new__(DispatchingInline)
    inline.__dict__.update(md.inline.__dict__)
    inline._compiled = None
    inline._by_char = {}
    inline._named = None
    md.inline = inline
    block = DispatchingBlock.__new__(DispatchingBlock)
    block.__dict__.update(md.block.__dict__)
    block._compiled = None
    block._by_key = {}
    block._named = None
    md.block = block
