"""Text helpers of the chat importers: first words (fallback titles), fenced code
blocks, and message keywords."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

_WORD = re.compile(r"\S+")


def first_words(text: str, words: int = 8, limit: int = 80) -> str:
    """The first ``words`` words of ``text`` on one line, cut at ``limit`` characters."""
    found = _WORD.findall(text)
    out = " ".join(found[:words])
    if len(found) > words or len(out) > limit:
        out = out[:limit].rstrip() + "…"
    return out


_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """A fenced code block: ``language`` (``None`` when the fence names none), ``code``."""

    language: str | None
    code: str


def code_blocks(text: str) -> list[CodeBlock]:
    """Fenced code blocks (``` or ~~~, CommonMark rules: the closing fence uses the
    same character, at least as long, and an unclosed fence runs to the end) in
    ``text``, in order."""
    if "```" not in text and "~~~" not in text:
        return []
    blocks: list[CodeBlock] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2)
        body: list[str] = []
        i += 1
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped.startswith(fence[0] * len(fence)) and set(stripped) == {fence[0]}:
                break
            body.append(lines[i])
            i += 1
        i += 1
        blocks.append(CodeBlock(lang.strip().lower() or None, "\n".join(body)))
    return blocks


_STOPWORDS_TEXT = """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot com could did didn do does doesn
    doing don down during each else etc even ever every few for from further get gets got
    had has have having he her here hers herself him himself his how however html http
    https i if in into is isn it its itself just let like ll make may me might more most
    much must my myself need no nor not now of off on once one only or org other our ours
    ourselves out over own per please re really same say see she should so some such sure
    than thank thanks that the their theirs them themselves then there these they thing
    things this those though through to too under until up upon us use used using ve very
    via want was wasn way we well were weren what when where whether which while who whom
    why will with within without won would www yes yet you your yours yourself yourselves
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
"""English stop words left out of keywords."""

# Words of 3+ characters only: a shorter one never becomes a keyword, and leaving it to
# the pattern spares a Python-level length test per word (the boundaries are the same as
# matching 2+ character words and dropping the short ones: a greedy match that stops
# after two characters leaves no 3-character word inside it).
_KW_TOKEN = re.compile(r"[^\W\d_][\w+#-]+[\w+#]")


def keywords(text: str, limit: int = 5) -> list[str]:
    """A few keywords of ``text``: lower-cased words of 3+ characters (letters first;
    digits, ``-``, ``+``, ``#`` allowed inside) that are not in :data:`STOPWORDS`,
    ranked by count, ties broken by first occurrence; at most ``limit``."""
    return keywords_of_lower(text.lower(), limit)


def keywords_of_lower(lower: str, limit: int = 5) -> list[str]:
    """:func:`keywords` of a text already lower-cased (``text.lower()``), for a caller
    that lowers the text once for several rules."""
    counts = Counter(_KW_TOKEN.findall(lower))
    for word in STOPWORDS.intersection(counts):  # per distinct word, not per occurrence
        del counts[word]
    # Counter keeps first-occurrence order (deleting keys leaves the others' order) and
    # sorted() is stable, so ties keep it
    return sorted(counts, key=counts.__getitem__, reverse=True)[:limit]
