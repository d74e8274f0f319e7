"""Which inline text markdown-it must parse, and the text of what it need not
(so that a large note's plain prose is not tried rule by rule).

A paragraph's inline content is parsed by markdown-it only where it can hold markup any
rule reads (:data:`NOT_PLAIN`). Content without any is not parsed at all
(``meta["plain"]``; :func:`plain_inline` gives its text). Other content is cut at line
ends into :func:`segments`: runs of plain lines, which become one ``plain_run`` child
token holding their text, and the lines markdown-it parses, each part on its own. The
children are the ones markdown-it gives the whole content, with each run of text, soft
and hard break tokens of plain lines folded into one ``plain_run``, because a cut is
made only where no inline construct can cross it:

* a *closed* line — no ``[ ] \\ ` * _ ~ $ < ^``, ``==`` or ``%%`` outside complete
  ``[[wikilinks]]`` (outside nothing, for a parser without the wikilink rule) — holds
  only constructs that end on that line (wikilinks, tags, entities and autolinks, which
  stop at a blank) and no emphasis delimiter to pair with another line's; plain lines
  hold no construct at all. Cuts are made between plain runs and closed lines until
  the first line that is not closed;
* from that line on, one part runs to the last line holding markup or one of ``)`` and
  ``>``; the plain lines after it (the *tail*) are cut off: no construct starting in
  the part can end in them (links and images end with ``)``, inline HTML with ``>``,
  everything else with a character of :data:`NOT_PLAIN`), except a link or image whose
  ``(`` ends the part — then there is no tail;
* each parsed part keeps the line break after its last line, so hard breaks (two
  spaces or ``\\``) and delimiters at the line end read the same characters; the blanks
  at the start of its first line are left out, as markdown-it's ``newline`` rule skips
  them; the rules that look back (emphasis flanking, autolinks) treat the start of the
  text and a line break alike. Only the dollar-math rule reads ``src[pos - 1]``, which
  at position 0 is the text's *last* character, so no part starts with ``$`` or ``\\``
  after a cut (the line is parsed with the part before it).

A part holding only text, ``#`` and complete wikilinks gets its tokens from
:func:`simple_tokens`, without the inline tokenizer. ``tests/formats/test_md_fast_paths.py``
checks that :func:`~cairn.formats.markdown.parse` gives the same document as with stock
markdown-it parsing the whole content.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from markdown_it.token import Token

if TYPE_CHECKING:
    from markdown_it.rules_core import StateCore

NOT_PLAIN = re.compile(r"[\\\[\]*_~$^&`<@#]|==|%%|www\.|http|mailto|xmpp")
"""Inline text without any of these holds no markup any rule of ours reads: its tokens
would be text, soft and hard breaks only (see the module)."""

PLAIN_RUN = "plain_run"
"""The type of a child token holding the text of a run of plain lines."""

_OPENS = re.compile(r"[\[\]\\`*_~$<^]|==|%%")
_WIKILINK = re.compile(r"\[\[([^\[\]\n]+)\]\]")
_BREAK_BLANKS = re.compile(r" *\n[ \t]*")

Segment = tuple[int, int, bool]
"""``(start, end, parsed)``: offsets into the content; ``parsed`` is ``False`` for a
run of plain lines."""


def plain_inline(content: str) -> str:
    """The text markdown-it's inline rules would give for plain ``content`` (see
    :data:`NOT_PLAIN`): spaces before a line break and blanks after it are dropped."""
    if "\n" not in content:
        return content
    if " \n" not in content and "\n " not in content and "\n\t" not in content:
        return content
    return _BREAK_BLANKS.sub("\n", content)


def _closed(line: str, wikilinks: bool) -> bool:
    """Whether every construct that can start in ``line`` ends on it (see the module;
    ``[[…]]`` counts as a wikilink only when the parser has the wikilink rule)."""
    if wikilinks and "[" in line:
        line = _WIKILINK.sub(lambda m: " " if m.group(1).strip() else m.group(), line)
    return _OPENS.search(line) is None


def _skip_blanks(content: str, pos: int) -> int:
    while pos < len(content) and content[pos] in " \t":
        pos += 1
    return pos


_MARK_CHARS = re.compile(r"[\\\[\]*_~$^&`<@#=%x]")
_MARK_WORDS = ("www.", "http", "mailto")
_CHECKED = {"=": "==", "%": "%%", "x": "xmpp"}
_TAIL_REVERSED = re.compile(r"[\\\[\]*_~$^&`<@#)>]|==|%%|\.www|ptth|otliam|ppmx")
""":data:`NOT_PLAIN`, ``)`` and ``>`` (what a tail may not hold), written backwards."""
_WINDOW = 1 << 16


class _Markup:
    """Where :data:`NOT_PLAIN` matches in one text, as ``NOT_PLAIN.search`` finds them
    but about twice as fast: a character class, plus ``str.find`` for the words (each
    word's next place is kept, so every search costs time linear in what it skips)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.words = [text.find(w) for w in _MARK_WORDS]

    def search(self, pos: int) -> int:
        """The start of the first match at or after ``pos``, or -1."""
        text = self.text
        best = -1
        at = pos
        while True:
            m = _MARK_CHARS.search(text, at)
            if m is None:
                break
            at = m.start()
            word = _CHECKED.get(text[at])
            if word is None or text.startswith(word, at):
                best = at
                break
            at += 1
        for i, w in enumerate(_MARK_WORDS):
            q = self.words[i]
            if 0 <= q < pos:
                q = self.words[i] = text.find(w, pos)
            if q >= 0 and (best < 0 or q < best):
                best = q
        return best


def _last_tail_stop(text: str, lo: int) -> int:
    """The start of a match of :data:`NOT_PLAIN`, ``)`` or ``>`` at or after ``lo`` on
    the last line that holds one, or -1 (searched backwards from the end, a window at a
    time)."""
    hi = len(text)
    while hi > lo:
        a = max(lo, hi - _WINDOW)
        m = _TAIL_REVERSED.search(text[a:hi][::-1])
        if m is not None:
            return hi - m.end()
        if a == lo:
            break
        hi = a + 5  # a word across the window's start is seen whole in the next one
    return -1


def segments(content: str, wikilinks: bool = True) -> list[Segment] | None:
    """``content`` cut into plain runs and parsed parts, in order and covering it (see
    the module; a part after a cut starts past its line's blanks), or ``None`` when it
    is plain. Time linear in the length of ``content``."""
    markup = _Markup(content)
    found = markup.search(0)
    if found < 0:
        return None
    n = len(content)
    if content[0] in "$\\":
        return [(0, n, True)]
    out: list[Segment] = []
    pos = 0  # where the content not yet in ``out`` starts (a line start)
    while found >= 0:
        start = content.rfind("\n", 0, found) + 1
        brk = content.find("\n", found)
        end = n if brk < 0 else brk + 1
        if start > pos:
            out.append((_skip_blanks(content, pos), start, False))
        if _closed(content[start:end], wikilinks):
            if out and out[-1][2] and out[-1][1] == start:
                out[-1] = (out[-1][0], end, True)
            else:
                out.append((_skip_blanks(content, start), end, True))
            pos = end
            found = markup.search(end) if end < n else -1
            continue
        first = _skip_blanks(content, start)
        if content[first] in "$\\" and out:  # no cut before it: parse it with the part
            first = out.pop()[0]  # before (that part starts with neither)
        last = max(found, _last_tail_stop(content, end))
        brk = content.find("\n", last)
        end = n if brk < 0 else brk + 1
        if end < n and content[content.rfind("\n", 0, brk) + 1 : brk].rstrip().endswith("("):
            end = n  # ``[text](`` then the destination on the next line: no tail
        out.append((first, end, True))
        if end < n:
            out.append((_skip_blanks(content, end), n, False))
        return out
    if pos < n:
        out.append((_skip_blanks(content, pos), n, False))
    return out


_NOT_SIMPLE = re.compile(r"[\\\[\]*_~$^&`<@]|==|%%|www\.|http|mailto|xmpp")
_WIKILINK_TOKEN = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")


def _simple(part: str, wikilinks: bool) -> bool:
    """Whether ``part`` holds no markup but ``#`` and (with the wikilink rule) complete
    ``[[wikilinks]]``: then :func:`simple_tokens` gives its tokens."""
    if wikilinks and "[" in part:
        part = _WIKILINK.sub(lambda m: " " if m.group(1).strip() else m.group(), part)
    return _NOT_SIMPLE.search(part) is None


def simple_tokens(part: str) -> list[Token]:
    """The tokens markdown-it's inline rules give for a :func:`_simple` part: text,
    ``wikilink`` (as the wikilink rule pushes it) and soft or hard breaks (as the
    ``newline`` rule pushes them, taking trailing spaces off the text before)."""
    out: list[Token] = []
    pending: list[str] = []

    def flush() -> None:
        text = "".join(pending)
        pending.clear()
        if text:
            tok = Token("text", "", 0)
            tok.content = text
            out.append(tok)

    lines = part.split("\n")
    last = len(lines) - 1
    for i, line in enumerate(lines):
        if i:
            line = line.lstrip(" \t")  # the newline rule skips them
        pos = 0
        for m in _WIKILINK_TOKEN.finditer(line):
            pending.append(line[pos : m.start()])
            flush()
            tok = Token("wikilink", "", 0)
            tok.content = m.group(2)
            tok.markup = m.group()
            tok.meta = {"embed": bool(m.group(1))}
            out.append(tok)
            pos = m.end()
        pending.append(line[pos:])
        if i == last:
            break
        text = "".join(pending)
        pending.clear()
        kind = "softbreak"
        if text.endswith(" "):
            if text.endswith("  "):
                kind, text = "hardbreak", text.rstrip(" ")
            else:
                text = text[:-1]
        pending.append(text)
        flush()
        out.append(Token(kind, "br", 0))
    flush()
    return out


def inline_rule(wikilinks: bool) -> Callable[[StateCore], None]:
    """markdown-it's core ``inline`` rule over :func:`segments` (``wikilinks``: the
    parser has the wikilink rule): a plain token gets ``meta["plain"]`` and no children;
    otherwise each parsed part is inline-parsed on its own (or by :func:`simple_tokens`)
    and each plain run becomes one :data:`PLAIN_RUN` child (its text in ``content``)."""

    def inline(state: StateCore) -> None:
        md = state.md
        for token in state.tokens:
            if token.type != "inline":
                continue
            if token.children is None:
                token.children = []
            content = token.content
            parts = segments(content, wikilinks)
            if parts is None:
                token.meta["plain"] = True
                continue
            if len(parts) == 1:
                if _simple(content, wikilinks):
                    token.children.extend(simple_tokens(content))
                else:
                    md.inline.parse(content, md, state.env, token.children)
                continue
            children = token.children
            for start, end, parsed in parts:
                if not parsed:
                    run = Token(PLAIN_RUN, "", 0)
                    run.content = plain_inline(content[start:end])
                    children.append(run)
                    continue
                part = content[start:end]
                if _simple(part, wikilinks):
                    children.extend(simple_tokens(part))
                else:
                    children.extend(md.inline.parse(part, md, state.env, []))

    return inline
