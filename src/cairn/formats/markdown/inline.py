"""Which inline text markdown-it must parse, and the text of what it need not
(big-file parsing, issue 12).

A paragraph's inline content is parsed by markdown-it only where it can hold markup any
rule reads (:data:`NOT_PLAIN`). Content without any is not parsed at all
(``meta["plain"]``; :func:`plain_inline` gives its text). Other content is cut at line
ends into :func:`segments`: runs of plain lines, which become one ``plain_run`` child
token holding their text, and the lines markdown-it parses, each part on its own. The
children are the ones markdown-it gives the whole content, with each run of text, soft
and hard break tokens of plain lines folded into one ``plain_run``, because a cut is
made only where no inline construct can cross it:

* a *closed* line — no ``[ ] \\ ` * _ ~ $ < ^``, ``==`` or ``%%`` outside complete
  ``[[wikilinks]]`` — holds only constructs that end on that line (wikilinks, tags,
  entities and autolinks, which stop at a blank) and no emphasis delimiter to pair
  with another line's; plain lines hold no construct at all. Cuts are made between
  plain runs and closed lines until the first line that is not closed;
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

``tests/formats/test_md_inline_split.py`` checks that the walker's text, links, tags
and block ids are the same as with the whole content parsed.
"""

from __future__ import annotations

import re
from collections import deque
from typing import TYPE_CHECKING

from markdown_it.token import Token

if TYPE_CHECKING:
    from markdown_it.rules_core import StateCore

NOT_PLAIN = re.compile(r"[\\\[\]*_~$^&`<@#]|==|%%|www\.|http|mailto|xmpp")
"""Inline text without any of these holds no markup any rule of ours reads: its tokens
would be text, soft and hard breaks only (see the module)."""

PLAIN_RUN = "plain_run"
"""The type of a child token holding the text of a run of plain lines."""

_TAIL_STOP = re.compile(NOT_PLAIN.pattern + r"|[)>]")
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


def _closed(line: str) -> bool:
    """Whether every construct that can start in ``line`` ends on it (see the module)."""
    if "[" in line:
        line = _WIKILINK.sub(lambda m: " " if m.group(1).strip() else m.group(), line)
    return _OPENS.search(line) is None


def _skip_blanks(content: str, pos: int) -> int:
    while pos < len(content) and content[pos] in " \t":
        pos += 1
    return pos


def segments(content: str) -> list[Segment] | None:
    """``content`` cut into plain runs and parsed parts, in order and covering it (see
    the module; a part after a cut starts past its line's blanks), or ``None`` when it
    is plain. Time linear in the length of ``content``."""
    found = NOT_PLAIN.search(content)
    if found is None:
        return None
    n = len(content)
    if content[0] in "$\\":
        return [(0, n, True)]
    out: list[Segment] = []
    pos = 0  # where the content not yet in ``out`` starts (a line start)
    while found is not None:
        start = content.rfind("\n", 0, found.start()) + 1
        brk = content.find("\n", found.end())
        end = n if brk < 0 else brk + 1
        if start > pos:
            out.append((_skip_blanks(content, pos), start, False))
        if _closed(content[start:end]):
            if out and out[-1][2] and out[-1][1] == start:
                out[-1] = (out[-1][0], end, True)
            else:
                out.append((_skip_blanks(content, start), end, True))
            pos = end
            found = NOT_PLAIN.search(content, end) if end < n else None
            continue
        first = _skip_blanks(content, start)
        if content[first] in "$\\" and out:  # no cut before it: parse it with the part
            first = out.pop()[0]  # before (that part starts with neither)
        later = deque(_TAIL_STOP.finditer(content, found.end()), maxlen=1)
        last = later[0] if later else found
        brk = content.find("\n", last.end())
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


def inline_rule(state: StateCore) -> None:
    """markdown-it's core ``inline`` rule over :func:`segments`: a plain token gets
    ``meta["plain"]`` and no children; otherwise each parsed part is inline-parsed on
    its own and each plain run becomes one :data:`PLAIN_RUN` child (its text in
    ``content``)."""
    md = state.md
    for token in state.tokens:
        if token.type != "inline":
            continue
        if token.children is None:
            token.children = []
        content = token.content
        parts = segments(content)
        if parts is None:
            token.meta["plain"] = True
            continue
        if len(parts) == 1:
            md.inline.parse(content, md, state.env, token.children)
            continue
        children = token.children
        for start, end, parsed in parts:
            if parsed:
                children.extend(md.inline.parse(content[start:end], md, state.env, []))
            else:
                run = Token(PLAIN_RUN, "", 0)
                run.content = plain_inline(content[start:end])
                children.append(run)
