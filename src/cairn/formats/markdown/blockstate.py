"""markdown-it's block state, with its line tables built in bulk and two lookups the
linear paragraph rules use (so that a large note is read in time linear in its size).

:class:`LineState` is markdown-it's :class:`StateBlock` with the same tables
(``bMarks``, ``eMarks``, ``tShift``, ``sCount``, ``bsCount``, ``lineMax``), built by
``str.split`` and ``itertools.accumulate`` instead of a Python loop per line (a 50 MB
note has two million lines), and two lookups over the file *as written* (the "pristine"
tables, before any rule rewrites them):

* :meth:`LineState.stops`: the lines where a paragraph could end or turn into a setext
  heading — blank, or first non-blank character one of a set, or followed by a line
  that opens with ``|``, ``-`` or ``:`` (a table) — so the paragraph rules of
  :mod:`cairn.formats.markdown.paragraphs` look only at those lines;
* :meth:`getLines`: a run of lines without leading whitespace is one slice of the
  source, not a join of one slice per line.

Only markdown-it's ``blockquote`` rule rewrites the tables of lines after the one it
starts on (``list`` and ``footnote_def`` rewrite only their first line and put it back).
:func:`install` wraps that rule so :attr:`LineState.quotes` counts the block quotes
being parsed; while it is non-zero both lookups step aside and markdown-it's own code
runs. What is parsed does not change (``tests/formats/test_md_fast_paths.py`` compares
the tokens with stock markdown-it's).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from itertools import accumulate
from operator import add
from typing import TYPE_CHECKING

from markdown_it.rules_block import StateBlock
from markdown_it.token import Token

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore
    from markdown_it.utils import EnvType

BlockRule = Callable[[StateBlock, int, int, bool], bool]

_INDENT = re.compile(r"\n[ \t]+")
_LEAD = re.compile(r"[ \t]+")
_TABLE_NEXT = "|-:"


class LineState(StateBlock):
    """markdown-it's block state for ``src``, its tables built in bulk (see the module)."""

    quotes: int
    """How many block quotes are being parsed (their rule rewrites line tables)."""
    paragraph_end: tuple[int, int, int, int] | None
    """Set by the ``lheading`` rule of :mod:`~cairn.formats.markdown.paragraphs` when
    it finds no underline: ``(start line, blkIndent, lineMax, end line)``, the line
    where the paragraph it scanned ends, for the ``paragraph`` rule that runs next."""

    def __init__(self, src: str, md: MarkdownIt, env: EnvType, tokens: list[Token]) -> None:
        super().__init__("", md, env, tokens)  # every other field, as markdown-it sets it
        self.src = src
        self.quotes = 0
        self.paragraph_end = None
        self._stops: dict[str, list[int]] = {}
        lines = src.split("\n")
        if src.endswith("\n"):
            lines.pop()  # no line after the last line break
        elif lines and not lines[-1].strip(" \t"):
            lines.pop()  # a last line of only blanks without a line break: no line
        lens = list(map(len, lines))
        del lines
        n = len(lens)
        length = len(src)
        begins = list(accumulate(map((1).__add__, lens), initial=0))
        begins[n] = length  # the fake last line markdown-it adds
        self.bMarks = begins
        self.eMarks = list(map(add, begins, lens))  # n ends (``lens`` is shorter)
        self.eMarks.append(length)
        t_shift = [0] * (n + 1)
        s_count = [0] * (n + 1)
        indented: list[int] = []
        bmarks = self.bMarks
        lead = _LEAD.match(src)
        found = [(0, lead.group())] if lead else []
        found += ((m.start() + 1, m.group()[1:]) for m in _INDENT.finditer(src))
        for start, blanks in found:
            line = bisect.bisect_right(bmarks, start) - 1
            if not 0 <= line < n or bmarks[line] != start:
                break  # the last line of only blanks, which is no line
            offset = len(blanks)
            if "\t" in blanks:
                offset = 0
                for ch in blanks:
                    offset += 4 - offset % 4 if ch == "\t" else 1
            t_shift[line] = len(blanks)
            s_count[line] = offset
            indented.append(line)
        self._indented = indented
        self.tShift = t_shift
        self.sCount = s_count
        self.bsCount = [0] * (n + 1)
        self.lineMax = n

    def stops(self, starters: str) -> list[int]:
        """The sorted line numbers (0-based) that are blank, open (after blanks) with a
        character of ``starters`` or ``=``, or come before a line opening with ``|``,
        ``-`` or ``:`` — in the file as written; a superset of the lines where a
        paragraph can end (computed once per ``starters``)."""
        found = self._stops.get(starters)
        if found is None:
            found = self._stops[starters] = _stop_lines(self.src, starters + "=")
        return found

    def getLines(self, begin: int, end: int, indent: int, keepLastLF: bool) -> str:
        """markdown-it's ``getLines``; lines after ``begin`` are sliced in one piece when
        none of them starts with a blank (or ``indent`` is 0) and no block quote is
        being parsed."""
        if self.quotes or end - begin < 2:
            return super().getLines(begin, end, indent, keepLastLF)
        if indent:
            i = bisect.bisect_right(self._indented, begin)
            if i < len(self._indented) and self._indented[i] < end:
                return super().getLines(begin, end, indent, keepLastLF)
        first = super().getLines(begin, begin + 1, indent, True)
        last = self.eMarks[end - 1] + 1 if keepLastLF else self.eMarks[end - 1]
        start = self.bMarks[begin]
        if first == self.src[start : self.bMarks[begin + 1]]:  # the first line as written
            return self.src[start:last]
        return first + self.src[self.bMarks[begin + 1] : last]


def _stop_lines(src: str, chars: str) -> list[int]:
    """See :meth:`LineState.stops`; ``chars`` are the first characters that count."""
    chars = "".join(sorted(set(chars + _TABLE_NEXT)))
    pattern = re.compile(r"\n[ \t]*(?=([\n" + re.escape(chars) + r"]))")
    out = [0]  # the first line: always looked at (a superset does no harm)
    line, pos = 0, 0
    count = src.count
    for m in pattern.finditer(src):
        start = m.start()
        line += count("\n", pos, start) + 1  # the line that starts after this break
        pos = start + 1
        if m.group(1) in _TABLE_NEXT and (not out or out[-1] != line - 1):
            out.append(line - 1)
        out.append(line)
    return out


def _block_rule(state: StateCore) -> None:
    """markdown-it's core ``block`` rule, parsing with a :class:`LineState`."""
    if state.inlineMode:
        token = Token("inline", "", 0)
        token.content = state.src
        token.map = [0, 1]
        token.children = []
        state.tokens.append(token)
        return
    if not state.src:
        return
    block = LineState(state.src, state.md, state.env, state.tokens)
    state.md.block.tokenize(block, block.line, block.lineMax)


def _normalize(state: StateCore) -> None:
    """markdown-it's core ``normalize`` rule (``\r\n`` and ``\r`` to ``\n``, NUL to
    U+FFFD), without rewriting a text that holds neither."""
    src = state.src
    if "\r" in src:
        src = re.sub(r"\r\n?", "\n", src)
    if "\0" in src:
        src = src.replace("\0", "\ufffd")
    state.src = src


def _counting(rule: BlockRule) -> BlockRule:
    def blockquote(state: StateBlock, startLine: int, endLine: int, silent: bool) -> bool:
        pos = state.bMarks[startLine] + state.tShift[startLine]
        if pos >= len(state.src) or state.src[pos] != ">":
            return False  # what the rule returns then (without its debug log line)
        if silent or not isinstance(state, LineState):
            return rule(state, startLine, endLine, silent)
        state.quotes += 1
        try:
            return rule(state, startLine, endLine, silent)
        finally:
            state.quotes -= 1

    return blockquote


def install(md: MarkdownIt) -> None:
    """Parse with :class:`LineState` in ``md``, count its block quotes, and normalise
    line ends only where there is something to normalise."""
    md.core.ruler.at("normalize", _normalize)
    md.core.ruler.at("block", _block_rule)
    for rule in md.block.ruler.__rules__:
        if rule.name == "blockquote":
            md.block.ruler.at("blockquote", _counting(rule.fn), {"alt": list(rule.alt)})
            break
