"""Snippets: a passage of a unit's text around its best match, with match offsets.

FTS5's own ``snippet()`` cannot see the CJK bigram column's matches in the body and
returns bigram soup for them, so snippets are cut here. The snippet is plain text (no
markup that could be confused with the note's own brackets); ``highlights`` holds the
``(start, end)`` character offsets of the matches inside it, for a renderer to style.

Matching follows the query: a phrase or a hyphenated word matches its words in order
with any punctuation between them; a word longer than four letters also matches its
porter-stemmed variants by sharing all but its last three letters (at least four);
shorter words match whole; English function words are not highlighted when the query
has other words; a CJK run matches as written, and its character bigrams as a fallback.
The window is the one holding the most matched characters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from cairn.model import Term
from cairn.search.stopwords import content_terms

_LATIN_TAIL = r"[A-Za-z0-9\u00C0-\u024F]*"
_FLAT = re.compile(r"\s+")


def _token_pattern(token: str, last: bool) -> str:
    if last and len(token) > 4 and token.isalpha():
        return re.escape(token[: max(4, len(token) - 3)]) + _LATIN_TAIL
    return re.escape(token) + r"(?![A-Za-z0-9\u00C0-\u024F])"


def term_patterns(terms: Sequence[Term]) -> list[str]:
    """Regular expressions (case-insensitive) for the positive terms of a query."""
    use = [leaf for t in content_terms(terms) for leaf in t.leaves()]
    pats: list[str] = []
    for t in use:
        if t.tokens:
            toks = list(t.tokens)
            body = r"[\W_]+".join(
                _token_pattern(tok, i == len(toks) - 1) for i, tok in enumerate(toks)
            )
            pats.append(r"(?<![A-Za-z0-9\u00C0-\u024F])" + body)
        if t.cjk:
            runs = re.findall(r"\S+", t.text)
            pats.extend(re.escape(r) for r in runs if any(ord(c) > 0x2FFF for c in r))
            pats.extend(re.escape(b) for b in t.cjk)
    return pats


@lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regular expression for a query's patterns (a query builds many snippets)."""
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


def make_snippet(
    text: str, patterns: Sequence[str], *, width: int = 180
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """A passage of ``text`` around the densest cluster of matches, and their offsets.

    Args:
        text: the unit's body (or title when the body is empty).
        patterns: from :func:`term_patterns`.
        width: target length in characters.

    Returns:
        ``(snippet, highlights)``: the passage (newlines folded to spaces, ``…`` where
        it was cut) and the ``(start, end)`` offsets of each match within it. The start
        of ``text`` and no highlights when nothing matches.
    """
    flat = _FLAT.sub(" ", text).strip()
    matches: list[tuple[int, int]] = []
    if patterns:
        rx = _compiled(tuple(sorted(patterns, key=len, reverse=True)))
        matches = [(m.start(), m.end()) for m in rx.finditer(flat) if m.end() > m.start()]
    if not matches:
        cut = flat[:width]
        return cut + ("…" if len(flat) > width else ""), ()
    prefix_sum = [0]
    for a, b in matches:
        prefix_sum.append(prefix_sum[-1] + b - a)
    best_i, best_score, j = 0, -1, 0
    for i, (start_i, _end_i) in enumerate(matches):
        j = max(j, i)
        while j < len(matches) and matches[j][1] - start_i <= width:
            j += 1
        score = prefix_sum[max(j, i + 1)] - prefix_sum[i]
        if score > best_score:
            best_i, best_score = i, score
    first = matches[best_i][0]
    start = max(0, first - width // 4)
    if start > 0:
        sp = flat.find(" ", start)
        start = sp + 1 if 0 <= sp < first else start
    end = min(len(flat), start + width)
    if end < len(flat):
        sp = flat.rfind(" ", start, end)
        end = sp if sp > matches[best_i][1] else end
    prefix = "…" if start > 0 else ""
    shift = len(prefix) - start
    spans = tuple((a + shift, b + shift) for a, b in matches if a >= start and b <= end)
    return prefix + flat[start:end] + ("…" if end < len(flat) else ""), spans


def first_match(lines: Sequence[str], patterns: Sequence[str]) -> tuple[int, int] | None:
    """Where ``patterns`` (from :func:`term_patterns`) first match in ``lines``.

    Returns:
        ``(index of the line in lines, column)``: the column is 1-based and counts
        UTF-8 bytes, as ``rg --vimgrep`` and Vim's quickfix list do; ``None`` when no
        line matches (or there are no patterns).
    """
    if not patterns:
        return None
    rx = _compiled(tuple(sorted(patterns, key=len, reverse=True)))
    for i, line in enumerate(lines):
        m = rx.search(line)
        if m is not None and m.end() > m.start():
            return i, len(line[: m.start()].encode("utf-8", "surrogatepass")) + 1
    return None
