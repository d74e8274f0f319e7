"""The exact-title rule: a result whose title has exactly the query's words ranks first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from cairn.search.fusion import Fused
from cairn.search.query import Query

TITLE_WINDOW = 30
"""How many of the best fused results are checked for an exact title match."""


def title_words(text: str) -> str:
    """``text``'s words, case-folded, joined by one space (punctuation dropped)."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def promote_exact_titles(
    fused: Sequence[Fused], query: Query, titles: Mapping[str, str]
) -> list[Fused]:
    """An exact title match wins: results whose title has exactly the query's words
    (case, punctuation and spacing aside: ``Clocking Work Time``) get a ``title_match``
    summand equal to the best score, so they rank above every other result (in their
    own order) and their summands still add up. ``titles``: unit id -> title of the
    results to consider; others are left as they are. Scores must be positive (BM25,
    RRF), so semantic lists are not passed here."""
    want = title_words(" ".join(t.text or " ".join(t.tokens) for t in query.positive))
    if not want or not fused:
        return list(fused)
    bonus = abs(fused[0].score)
    out: list[Fused] = []
    for f in fused:
        t = titles.get(f.key)
        if t is not None and title_words(t) == want:
            summands = {**f.summands, "title_match": bonus}
            f = Fused(f.key, math.fsum(summands.values()), summands, f.ranks, f.raw)
        out.append(f)
    return sorted(out, key=lambda f: -f.score)
