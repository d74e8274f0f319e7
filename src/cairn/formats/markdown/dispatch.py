"""markdown-it's inline tokenizer, trying at each position only the rules that can
start with its character (big-file parsing, issue 12).

markdown-it tries every inline rule, in order, at each position where the ``text``
rule stops (a *terminator* character: ``:``, ``w``, ``-``, ``!`` and a dozen more);
with this parser's 21 rules that is most of the time spent on prose. Every rule but
``text`` returns ``False`` at once unless the character at the position is one of its
:data:`STARTS`, and ``text`` matches exactly at the characters that are not
terminators, so trying only the rules listed for the character gives the same tokens.
:class:`DispatchingInline` does that in ``tokenize`` and ``skipToken``; with an enabled
rule not in :data:`STARTS` (or ``text`` not first) it runs markdown-it's own code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from markdown_it.parser_inline import ParserInline

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline

InlineRule = Callable[["StateInline", bool], bool]

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


def install(md: MarkdownIt) -> None:
    """Give ``md`` a :class:`DispatchingInline` with the rules of its inline parser."""
    old = md.inline
    new = DispatchingInline.__new__(DispatchingInline)
    new.__dict__.update(old.__dict__)
    new._compiled = None
    new._by_char = {}
    new._named = None
    md.inline = new
