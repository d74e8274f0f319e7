"""Org objects of one run of text written as Markdown (org-syntax *Objects*).

* *Text markup* (``PRE MARKER CONTENTS MARKER POST``): ``*b*`` → ``**b**``, ``/i/`` →
  ``*i*``, ``_u_`` → ``<u>u</u>``, ``+s+`` → ``~~s~~``, ``=v=`` and ``~c~`` → code
  spans (their contents as written); contents may hold other markup, not a blank line
  and not more than one line end. Pairs are found in one pass over sorted opener and
  closer positions, so the time is about linear whatever the text (nesting is read to a
  fixed depth; deeper markers stay text).
* *Links* (regular, angle, plain) are found by the Org parser's own scanner
  (:func:`cairn.formats.org.objects.link_spans`) and written by the caller's
  ``render`` (it knows where each one resolved).
* *Footnote references* ``[fn:L]`` → ``[^L]``; inline ones ``[fn:L:def]``/``[fn::def]``
  → ``^[def]``. *Line breaks* ``\\\\`` at a line end → a Markdown hard break.
* Everything else is plain text, escaped so CommonMark (and Obsidian's ``==``, ``%%``,
  ``~~``, ``#tag``, GFM's e-mail autolinks) shows it as written: entities, macros,
  targets, timestamps and statistics cookies stay visible as they are.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable

from cairn.formats.org.objects import link_spans, verbatim_spans
from cairn.model import Link

Render = Callable[[Link, str, str], str]
"""A link (``line`` set to its file line), its label as Markdown and the text Org shows
for it → its Markdown."""

_MARKERS = {"*": ("**", "**"), "/": ("*", "*"), "_": ("<u>", "</u>"), "+": ("~~", "~~")}
_OPEN = re.compile(r"(?:^|(?<=[\s\-({'\"\ue00b]))([*/_=~+])(?=\S)", re.M)
_CLOSE = re.compile(  # a link (slot) or footnote (marks) after the marker: Org's "["
    r"(?<=\S)([*/_=~+])(?=[\s\-.,;:!?')}\[\"\\\ue000\ue003\ue005]|$)", re.M)
_FOOTNOTE = re.compile(r"\[fn:([\w-]*)(:?)")
_BREAK = re.compile(r"(?<!\\)\\\\[ \t]*$", re.M)
_SPECIAL = re.compile(
    r"^[ \t]*(?=(?:=+|-+)[ \t]*$)"  # a line a setext heading or a rule would take
    r"|^[ \t]*(?=>)"  # a line a block quote would take
    r"|\\(?=[!-/:-@\[-`{-~]|$)|[*`\[\]<]|(?<![^\W_])_|_(?![^\W_])|&(?=#?\w+;)"
    r"|~~|==|%%|\$|@|(?:^|(?<=\s))[#^](?=[^\s#])|www\.",
    re.M,
)
_MATH = re.compile(
    r"(?<!\$)\$\$[^$]+?\$\$|(?<!\$)\$(?:[^\s.,;$]|[^\s.,;$][^$]*?[^\s.,$])\$(?=[\s!-/:-@\[-`{-~]|$)"
    r"|\\\((.+?)\\\)|\\\[(.+?)\\\]",
    re.S,
)
"""LaTeX fragments (org-syntax *LaTeX Fragments*): ``$$…$$``, ``$…$`` with Org's
borders, ``\\(…\\)`` and ``\\[…\\]`` (written as ``$…$`` and ``$$…$$``, as
Obsidian reads math); any other ``$`` is text."""
_MAX_DEPTH = 6
_SLOT = "\ue000{}\ue001"
_SLOT_RE = re.compile("\ue000(\\d+)\ue001")


def escape(text: str) -> str:
    """Plain Org text as Markdown that shows it as written."""
    def one(m: re.Match[str]) -> str:
        s = m.group(0)
        if s == "www.":  # not a link in Org: keep GFM's autolinker off it
            return "www\\."
        return s + "\\" if not s.strip(" \t") else "\\" + s

    return _SPECIAL.sub(one, text)


def _code(text: str) -> str:
    ticks = max((len(t) for t in re.findall(r"`+", text)), default=0)
    fence = "`" * (ticks + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _footnotes(text: str, labels: frozenset[str]) -> str:
    """``[fn:…]`` references as Markdown footnotes (balanced brackets for inline ones);
    a labelled one not in ``labels`` stays text."""
    if "[fn:" not in text:
        return text
    out: list[str] = []
    pos = 0
    for m in _FOOTNOTE.finditer(text):
        if m.start() < pos:
            continue
        label, inline = m.group(1), m.group(2)
        if not inline:
            if not label or not text.startswith("]", m.end()) or label not in labels:
                continue
            out.append(text[pos : m.start()] + f"\ue003{label}\ue004")
            pos = m.end() + 1
            continue
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"[": 1, "]": -1}.get(text[i], 0)
            i += 1
        if depth:
            continue
        out.append(text[pos : m.start()] + "\ue005" + label + "\ue00b"
                   + text[m.end() : i - 1] + "\ue006")
        pos = i
    out.append(text[pos:])
    return "".join(out)


def _raw(text: str) -> str:
    """Verbatim text as written: the footnote and line-break marks put back."""
    text = text.replace("\ue002", "\\\\").replace("\ue003", "[fn:").replace("\ue004", "]")
    return text.replace("\ue005", "[fn:").replace("\ue00b", ":").replace("\ue006", "]")


def _markup(text: str, slots: list[str], depth: int) -> str:
    """``text`` (links already in slots) with Org markup as Markdown, the rest escaped."""
    closers: dict[str, list[int]] = {}
    for m in _CLOSE.finditer(text):
        closers.setdefault(m.group(1), []).append(m.start())
    out: list[str] = []
    pos = 0
    if depth < _MAX_DEPTH and closers:
        for m in _OPEN.finditer(text):
            i = m.start(1)
            if i < pos:
                continue
            mark = m.group(1)
            ends = closers.get(mark, [])
            k = bisect_right(ends, i + 1)
            if k >= len(ends):
                continue
            j = ends[k]
            inner = text[i + 1 : j]
            if inner.count("\n") > 1:
                continue
            if mark in "=~":
                if "\ue000" in inner:
                    continue  # a link inside: the parser reads it as a link, so shall we
                out.append(escape(text[pos:i]) + _code(_raw(inner)))
            else:
                a, b = _MARKERS[mark]
                out.append(escape(text[pos:i]) + a + _markup(inner, slots, depth + 1) + b)
            pos = j + 1
    out.append(escape(text[pos:]))
    return "".join(out)


def _math(m: re.Match[str]) -> str:
    if m.group(1) is not None:
        return f"${m.group(1)}$"
    if m.group(2) is not None:
        return f"$${m.group(2)}$$"
    return m.group(0)


def _keep_math(text: str, slots: list[str]) -> str:
    """``text`` with its LaTeX fragments in ``slots``. A ``$`` of verbatim (``=$=``)
    opens none (Org reads the verbatim first), nor does a run holding a link."""
    out: list[str] = []
    pos = start = 0
    held = verbatim_spans(text) if "=" in text or "~" in text else []
    k = 0
    while (m := _MATH.search(text, start)) is not None:
        s = m.start()
        while k < len(held) and held[k][1] <= s:
            k += 1
        inside = k < len(held) and held[k][0] < s  # Org reads the verbatim first
        verbatim = s > 0 and text[s - 1] in "=~" and text[s + 1 : s + 2] == text[s - 1]
        if inside or verbatim or "\ue000" in m.group(0):
            start = s + 1
            continue
        slots.append(_math(m))
        out.append(text[pos:s] + _SLOT.format(len(slots) - 1))
        pos = start = m.end()
    out.append(text[pos:])
    return "".join(out)


def inline(
    text: str,
    first_line: int,
    render: Render,
    notes: list[str] | None = None,
    labels: frozenset[str] = frozenset(),
    *,
    links: bool = True,
) -> str:
    """One run of Org text (lines joined by ``\\n``, the first at file line
    ``first_line``) as Markdown; ``render`` writes each link. ``notes``: where the
    definitions of inline footnotes go (``[^L]: text`` lines the caller writes after
    its block, so the text stays in its section); ``None`` keeps an inline footnote
    as text, as in a heading. ``labels``: the footnotes written as Markdown
    footnotes (defined once and referenced,
    :func:`cairn.export.org_markdown.org_footnotes`); a reference to
    another stays text. ``links``: false in a link's own description (Org reads no
    link there)."""
    slots: list[str] = []
    parts: list[str] = []
    pos = 0
    line = first_line
    counted = 0
    for s, e, shown, lk in link_spans(text) if links else ():
        parts.append(text[pos:s])
        if lk is None:  # a coderef: what Org shows of it (no Markdown target is a line)
            parts.append(shown if shown is not None else text[s:e])
        else:
            line += text.count("\n", counted, s)
            counted = s
            label = inline(shown, line, render, links=False) if shown and lk.alias \
                else escape(shown if shown is not None else text[s:e])
            link = Link(lk.kind, lk.target, lk.alias, lk.anchor, line, lk.raw)
            slots.append(render(link, label, shown if shown is not None else text[s:e]))
            parts.append(_SLOT.format(len(slots) - 1))
        pos = e
    parts.append(text[pos:])
    joined = "".join(parts)
    if "$" in joined or "\\(" in joined or "\\[" in joined:
        joined = _keep_math(joined, slots)
    body = _footnotes(_BREAK.sub("\ue002", joined), labels)
    md = _markup(body, slots, 0)
    md = md.replace("\ue002", "\\").replace("\ue003", "[^").replace("\ue004", "]")
    start = len(notes) if notes is not None else 0
    if "\ue005" in md:
        md = _INLINE_NOTE.sub(lambda m: _note(m, notes, first_line), md)
    if "\ue005" in md or "\ue006" in md:  # an inline footnote markup split: as written
        md = md.replace("\ue005", "\\[fn:").replace("\ue00b", ":").replace("\ue006", "\\]")

    def fill(m: re.Match[str]) -> str:
        return slots[int(m.group(1))]

    if notes is not None:  # an inline definition's links and math are in the slots too
        notes[start:] = [_SLOT_RE.sub(fill, n) for n in notes[start:]]
    return _SLOT_RE.sub(fill, md)


_INLINE_NOTE = re.compile("\ue005([^\ue006]*)\ue006")


def _note(m: re.Match[str], notes: list[str] | None, line: int) -> str:
    """An inline footnote: a reference whose definition goes to ``notes``, or (no
    ``notes``) its text as Org shows it."""
    label, _, text = m.group(1).partition("\ue00b")
    if notes is None:
        return f"\\[fn:{label}:{text}\\]"
    name = label or f"fn-{line}-{len(notes) + 1}"
    notes.append(f"[^{name}]: {' '.join(text.split())}")
    return f"[^{name}]"


_EMPHASIS = re.compile(
    r"(?:^|(?<=[\s\-({'\"]))([*/_=~+])(?=\S)(.+?)(?<=\S)\1(?=[\s\-.,;:!?'\")}\[]|$)"
)
_FOOTNOTE_REF = re.compile(r"\[fn:[\w-]*\]")


def plain_text(text: str) -> str:
    """One line of Org text as a reader sees it, without markup: a link as what Org
    shows of it (its description, else its target), emphasis and verbatim markers
    (``*b*``, ``/i/``, ``=v=``, ``~c~``, ``+s+``, ``_u_``) dropped, footnote
    references ``[fn:L]`` left out; any other byte as written."""
    parts: list[str] = []
    pos = 0
    for s, e, shown, _lk in link_spans(text):
        parts.append(text[pos:s])
        parts.append(shown if shown is not None else text[s:e])
        pos = e
    parts.append(text[pos:])
    out = _FOOTNOTE_REF.sub("", "".join(parts))
    for _ in range(3):  # nested markup: /*both*/
        new = _EMPHASIS.sub(r"\2", out)
        if new == out:
            break
        out = new
    return " ".join(out.split())
