"""markdown-it's ``paragraph`` and ``lheading`` block rules, in time linear in the
paragraph with a small constant.

For every line of a paragraph both rules ask each *terminator* rule (fence, blockquote,
hr, list, footnote, HTML block, heading, Obsidian comment, table) whether it starts
there: about ten Python calls a line, twice (``lheading`` scans the paragraph for a
setext underline first). On a 50 MB note of one long paragraph that is 40 million calls.
Every one of those rules returns ``False`` at once unless the line's first non-blank
character is its marker (or, for a table, the *next* line's first character is ``|``,
``-`` or ``:``), so these copies of the two rules skip the terminator loop for a line
that cannot start one. What is parsed does not change: on a line that might start a
terminator the original loop runs, and a terminator rule this module does not know
turns the shortcut off (:func:`install`).

The rule bodies follow markdown-it-py 4.x (``rules_block/paragraph.py`` and
``lheading.py``, MIT licence) line for line apart from that check.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.common.utils import mdTrim
from markdown_it.rules_block import StateBlock

from cairn.formats.markdown.blockstate import LineState

STARTERS: dict[str, str] = {
    "fence": "`~",
    "blockquote": ">",
    "hr": "*-_",
    "list": "*-+0123456789",
    "footnote_def": "[",
    "html_block": "<",
    "heading": "#",
    "obsidian_comment": "%",
    "math_block": "$",
    "table": "",  # decided by the next line (see _may_terminate)
}
"""The first characters with which each known terminator rule can start."""

_TABLE_NEXT = "|-:"

Rule = Callable[[StateBlock, int, int, bool], bool]


def _terminator_names(md: MarkdownIt) -> list[str]:
    return [r.name for r in md.block.ruler.__rules__ if r.enabled and "paragraph" in r.alt]


def install(md: MarkdownIt) -> None:
    """Replace ``md``'s ``paragraph`` and ``lheading`` rules with the copies of this
    module. Call it after every rule is added or enabled: the terminators are read
    now. With a terminator rule not in :data:`STARTERS` nothing is replaced."""
    names = _terminator_names(md)
    if any(n not in STARTERS for n in names):
        return
    starters = frozenset("".join(STARTERS[n] for n in names))
    table = "table" in names
    by_start = _ByStart()
    md.block.ruler.at("paragraph", _paragraph(starters, table, by_start))
    md.block.ruler.at("lheading", _lheading(starters, table, by_start))


def _may_terminate(state: StateBlock, line: int, starters: frozenset[str], table: bool) -> bool:
    """Whether some terminator rule could start at ``line`` (a non-empty line)."""
    if state.src[state.bMarks[line] + state.tShift[line]] in starters:
        return True
    if table and line + 1 < len(state.bMarks):
        pos = state.bMarks[line + 1] + state.tShift[line + 1]
        return pos < state.eMarks[line + 1] and state.src[pos] in _TABLE_NEXT
    return False


class _ByStart:
    """The terminator rules to try on a line: those :data:`STARTERS` lists for its first
    non-blank character (and ``table`` when the next line may be a table's delimiter
    row), in ruler order — every other one returns ``False`` there."""

    def __init__(self) -> None:
        self._rules: list[Rule] | None = None
        self._named: list[tuple[str, Rule]] = []
        self._by: dict[tuple[str, bool], list[Rule]] = {}

    def rules(self, state: StateBlock, line: int, rules: list[Rule]) -> list[Rule]:
        if rules is not self._rules:
            self._rules, self._by = rules, {}
            ruler = state.md.block.ruler
            self._named = [
                (r.name, r.fn) for r in ruler.__rules__ if r.enabled and "paragraph" in r.alt
            ]
            if [fn for _, fn in self._named] != rules:  # pragma: no cover - not expected
                self._named = []
        if not self._named:
            return rules  # pragma: no cover
        ch = state.src[state.bMarks[line] + state.tShift[line]]
        table = False
        if line + 1 < len(state.bMarks):
            pos = state.bMarks[line + 1] + state.tShift[line + 1]
            table = pos < state.eMarks[line + 1] and state.src[pos] in _TABLE_NEXT
        got = self._by.get((ch, table))
        if got is None:
            got = self._by[ch, table] = [
                fn
                for name, fn in self._named
                if ch in STARTERS[name] or (table and name == "table")
            ]
        return got


def _terminates(
    state: StateBlock, line: int, end: int, rules: list[Rule], by_start: _ByStart
) -> bool:
    return any(rule(state, line, end, True) for rule in by_start.rules(state, line, rules))


def _paragraph_end(
    state: LineState,
    nextLine: int,
    endLine: int,
    starters: frozenset[str],
    table: bool,
    rules: list[Rule],
    by_start: _ByStart,
) -> int:
    """The first line from ``nextLine`` where markdown-it's paragraph loop stops (its
    checks, on the stop lines of :meth:`LineState.stops` only: no other line is blank
    or can start a terminator), or ``endLine``."""
    stops = state.stops("".join(sorted(starters)))
    at = bisect.bisect_left(stops, nextLine)
    while at < len(stops):
        line = stops[at]
        if line >= endLine:
            break
        at += 1
        if state.isEmpty(line):
            return line
        if state.sCount[line] - state.blkIndent > 3 or state.sCount[line] < 0:
            continue
        if _may_terminate(state, line, starters, table) and _terminates(
            state, line, endLine, rules, by_start
        ):
            return line
    return endLine


def _paragraph(starters: frozenset[str], table: bool, by_start: _ByStart) -> Rule:
    def paragraph(state: StateBlock, startLine: int, endLine: int, silent: bool) -> bool:
        nextLine = startLine + 1
        terminatorRules = state.md.block.ruler.getRules("paragraph")
        endLine = state.lineMax

        oldParentType = state.parentType
        state.parentType = "paragraph"

        if isinstance(state, LineState) and not state.quotes:
            known, state.paragraph_end = state.paragraph_end, None
            if known is not None and known[:3] == (startLine, state.blkIndent, endLine):
                nextLine = known[3]  # lheading just scanned this paragraph to its end
            else:
                nextLine = _paragraph_end(
                    state, nextLine, endLine, starters, table, terminatorRules, by_start
                )
        else:
            while nextLine < endLine:
                if state.isEmpty(nextLine):
                    break
                if state.sCount[nextLine] - state.blkIndent > 3:
                    nextLine += 1
                    continue
                if state.sCount[nextLine] < 0:
                    nextLine += 1
                    continue
                if _may_terminate(state, nextLine, starters, table) and _terminates(
                    state, nextLine, endLine, terminatorRules, by_start
                ):
                    break
                nextLine += 1

        content = mdTrim(state.getLines(startLine, nextLine, state.blkIndent, False))
        state.line = nextLine

        token = state.push("paragraph_open", "p", 1)
        token.map = [startLine, state.line]
        token = state.push("inline", "", 0)
        token.content = content
        token.map = [startLine, state.line]
        token.children = []
        token = state.push("paragraph_close", "p", -1)

        state.parentType = oldParentType
        return True

    return paragraph


def _lheading(starters: frozenset[str], table: bool, by_start: _ByStart) -> Rule:
    key = "".join(sorted(starters))

    def lheading(state: StateBlock, startLine: int, endLine: int, silent: bool) -> bool:
        level = None
        marker = ""
        nextLine = startLine + 1
        terminatorRules = state.md.block.ruler.getRules("paragraph")

        if state.is_code_block(startLine):
            return False

        oldParentType = state.parentType
        state.parentType = "paragraph"

        fast = isinstance(state, LineState) and not state.quotes
        stops = state.stops(key) if isinstance(state, LineState) and fast else []
        at = bisect.bisect_left(stops, nextLine)
        while nextLine < endLine and not state.isEmpty(nextLine):
            if fast:  # only a stop line can underline, end or be blank
                if at < len(stops) and stops[at] < nextLine:
                    at = bisect.bisect_left(stops, nextLine, at)
                if at >= len(stops) or stops[at] >= endLine:
                    nextLine = endLine
                    break
                if stops[at] != nextLine:
                    nextLine = stops[at]
                    continue
            if state.sCount[nextLine] - state.blkIndent > 3:
                nextLine += 1
                continue
            if state.sCount[nextLine] >= state.blkIndent:
                pos = state.bMarks[nextLine] + state.tShift[nextLine]
                maximum = state.eMarks[nextLine]
                if pos < maximum:
                    marker = state.src[pos]
                    if marker in ("-", "="):
                        pos = state.skipCharsStr(pos, marker)
                        pos = state.skipSpaces(pos)
                        if pos >= maximum:
                            level = 1 if marker == "=" else 2
                            break
            if state.sCount[nextLine] < 0:
                nextLine += 1
                continue
            if _may_terminate(state, nextLine, starters, table) and _terminates(
                state, nextLine, endLine, terminatorRules, by_start
            ):
                break
            nextLine += 1

        if not level:
            if fast and isinstance(state, LineState):
                # the loop stopped where the paragraph rule's loop stops (the same
                # checks bar the underline): the paragraph rule, tried next, reads it
                end = min(nextLine, endLine)
                state.paragraph_end = (startLine, state.blkIndent, endLine, end)
            return False

        content = mdTrim(state.getLines(startLine, nextLine, state.blkIndent, False))
        state.line = nextLine + 1

        token = state.push("heading_open", "h" + str(level), 1)
        token.markup = marker
        token.map = [startLine, state.line]
        token = state.push("inline", "", 0)
        token.content = content
        token.map = [startLine, state.line - 1]
        token.children = []
        token = state.push("heading_close", "h" + str(level), -1)
        token.markup = marker

        state.parentType = oldParentType
        return True

    return lheading
