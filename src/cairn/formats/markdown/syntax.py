"""The markdown-it parser cairn uses: CommonMark + GFM tables, strikethrough and autolinks,
footnotes, ``$`` math, and (for Obsidian notes) wikilinks, embeds, ``%%comments%%``,
``==highlights==`` and wikilink-aware table rows, added as markdown-it rules.
"""

from __future__ import annotations

import functools
import importlib
import re
import types
from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

from cairn.formats.markdown.blockstate import install as install_line_state
from cairn.formats.markdown.dispatch import install as install_dispatch
from cairn.formats.markdown.inline import inline_rule
from cairn.formats.markdown.inline import plain_inline as plain_inline
from cairn.formats.markdown.paragraphs import install as install_paragraph_rules

# --- markdown-it setup -----------------------------------------------------------------

_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_TAG_RE = re.compile(r"(?:(?<=\s)|^)#([^\s!\"#$%&'()*+,.:;<=>?@\[\\\]^`{|}~]+)")
_BLOCK_ID_RE = re.compile(r"(?:(?<=\s)|^)\^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*$")
_CALLOUT_RE = re.compile(r"^\[!([^\]\s]+)\]([+-]?)[ \t]*(.*)$")
_SIZE_RE = re.compile(r"^\d+(?:x\d+)?$")
_HTML_TAG = re.compile(r"<!--.*?(?:-->|\Z)|<[^>]*>", re.S)
"""An HTML comment (whole, though it holds a ``>``; unclosed: to the end) or a tag."""


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
    # the first of "]]", "[[" or a line end: a wikilink holds neither of the last two, so
    # an unclosed "[[" costs only the distance to the next one (linear on a long line)
    stop = _WIKILINK_STOP.search(src, start, state.posMax)
    if stop is None or stop.group() != "]]":
        return False
    end = stop.start()
    inner = src[start:end]
    if not inner.strip():
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
    limit = min(pmax, pos + _MAX_MARK_SPAN)  # bounded: "a ==b" prose is not quadratic
    end = src.find("==", pos + 3, limit)
    while end >= 0 and src[end - 1] in " \t\n":
        end = src.find("==", end + 1, limit)
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


_WIKILINK_STOP = re.compile(r"\]\]|\[\[|\n")
_MAX_MARK_SPAN = 20_000
"""A ``==highlight==`` closes within this many characters of its opening (else: text)."""
_URL_END = re.compile(r"[\s<]")
_AUTOLINK_TRIGGERS = {
    "gfm_autolink_www": "www.",
    "gfm_autolink_protocol": ":",
    "gfm_autolink_email": "@",
}
_PROTOCOLS = ("http", "https", "mailto", "xmpp")


def _bounded_autolink(
    rule: Callable[[StateInline, bool], bool], trigger: str
) -> Callable[..., bool]:
    """``rule`` (a GFM autolink rule) seen through a window ending at the next whitespace
    or ``<`` (where an autolink ends anyway), tried only where ``trigger`` starts.

    The stock rules copy the rest of the paragraph (``src[pos:posMax]``) or search all
    pending text at every ``:``, ``w`` or ``@``, so a long paragraph cost time in the
    square of its length (a 6 MB paragraph: minutes); in the window each try costs the
    length of one word.
    """

    def bounded(state: StateInline, silent: bool) -> bool:
        src, pos, pmax = state.src, state.pos, state.posMax
        if not src.startswith(trigger, pos, pmax):
            return False
        if trigger == ":" and not state.pending.endswith(_PROTOCOLS):
            return False
        end = _URL_END.search(src, pos, pmax)
        if end is not None:
            state.posMax = end.start()
        try:
            return bool(rule(state, silent))
        finally:
            state.posMax = pmax

    return bounded


def _bound_autolink_rules(md: MarkdownIt) -> None:
    """Replace the GFM autolink rules of ``md`` by :func:`_bounded_autolink` wrappers."""
    for rule in list(getattr(md.inline.ruler, "__rules__", [])):
        trigger = _AUTOLINK_TRIGGERS.get(getattr(rule, "name", ""))
        if trigger is not None:
            md.inline.ruler.at(rule.name, _bounded_autolink(rule.fn, trigger))


@functools.cache
def _markdown_it(obsidian: bool) -> MarkdownIt:
    return build(obsidian)


def build(obsidian: bool, *, fast: bool = True) -> MarkdownIt:
    """A new markdown-it parser as this module configures it (``obsidian``: with the
    Obsidian rules). ``fast=False`` leaves out every shortcut that gives the same tokens
    in less time (:mod:`~cairn.formats.markdown.blockstate`,
    :mod:`~cairn.formats.markdown.dispatch`, :mod:`~cairn.formats.markdown.paragraphs`,
    :mod:`~cairn.formats.markdown.inline`): the reference the tests compare with."""
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.footnote import footnote_plugin

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    md.use(footnote_plugin)
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False)
    try:
        from mdit_py_plugins.gfm_autolink import gfm_autolink_plugin

        md.use(gfm_autolink_plugin)
        _bound_autolink_rules(md)
    except ImportError:  # pragma: no cover - older mdit-py-plugins
        pass
    if fast:
        md.core.ruler.at("inline", inline_rule(obsidian))
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
    if fast:
        install_line_state(md)
        install_dispatch(md)
        install_paragraph_rules(md)  # last: it reads the terminator rules
    return md
