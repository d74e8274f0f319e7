"""Snippets with highlighted terms, built from a unit's stored text.

FTS5's own ``snippet()`` cannot see the CJK bigram column's matches in the body and
returns bigram soup for them, so snippets are cut here: the window of about ``width``
characters holding the most query-term matches, each match wrapped in ``[`` and ``]``
(configurable), newlines folded to spaces.
"""

from __future__ import annotations

import re
from collections.abc import Sequence


def _pattern(words: Sequence[str]) -> re.Pattern[str] | None:
    parts: list[str] = []
    for w in sorted({w for w in words if w}, key=len, reverse=True):
        if re.fullmatch(r"\w+", w) and len(w) > 4:
            stem = w[: max(4, len(w) - 3)]  # porter-stemmed matches share a prefix
            parts.append(r"\b" + re.escape(stem) + r"\w*")
        elif re.fullmatch(r"\w+", w):
            parts.append(r"\b" + re.escape(w) + r"\w*")
        else:
            parts.append(re.escape(w))
    if not parts:
        return None
    return re.compile("|".join(parts), re.IGNORECASE)


def make_snippet(
    text: str, words: Sequence[str], *, width: int = 180, mark: tuple[str, str] = ("[", "]")
) -> str:
    """A passage of ``text`` around the densest cluster of ``words``, highlighted.

    Args:
        text: the unit's body (or title when the body is empty).
        words: lower-cased query tokens (and CJK bigrams).
        width: target length in characters.
        mark: strings put before and after each match.

    Returns:
        The passage, with ``…`` where it was cut; the start of ``text`` when nothing
        matches.
    """
    flat = re.sub(r"\s+", " ", text).strip()
    pat = _pattern(words)
    matches = list(pat.finditer(flat)) if pat else []
    if not matches:
        cut = flat[:width]
        return cut + ("…" if len(flat) > width else "")
    best_i, best_n = 0, 0
    j = 0
    for i, m in enumerate(matches):
        while j < len(matches) and matches[j].end() - m.start() <= width:
            j += 1
        if j - i > best_n:
            best_i, best_n = i, j - i
    start = max(0, matches[best_i].start() - width // 4)
    if start > 0:
        sp = flat.find(" ", start)
        start = sp + 1 if 0 <= sp < matches[best_i].start() else start
    end = min(len(flat), start + width)
    if end < len(flat):
        sp = flat.rfind(" ", start, end)
        end = sp if sp > matches[best_i].end() else end
    out: list[str] = []
    pos = start
    for m in matches:
        if m.start() < start or m.end() > end:
            continue
        out.append(flat[pos : m.start()])
        out.append(mark[0] + m.group() + mark[1])
        pos = m.end()
    out.append(flat[pos:end])
    return ("…" if start > 0 else "") + "".join(out) + ("…" if end < len(flat) else "")
