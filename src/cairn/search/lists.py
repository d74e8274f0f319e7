"""A question that asks for a list is answered from more than one conversation.

"What activities does Melanie partake in?", "What events has Caroline attended?", "Did
Jon and Gina both …": the answer is a list whose items were said in different
conversations (sessions of a long chat), while the best-matching turns crowd into the
one conversation that talked most about the subject. So, when the query asks for a list
(:func:`asks_for_list`), the first :data:`DEPTH` fused results are spread over
conversations: taken best first, each dated chat message is weighed down by

    ``spread conversation`` = −:data:`SPREAD` × the best fused score × (how many
    messages of its conversation are already above it),

a named summand ``--explain`` shows. Notes, other units and messages without a time are
never weighed down, and a message alone from its conversation loses nothing. Results
below the first :data:`DEPTH` are left as they are.

The test for a list is English (a question word, then a plural noun or a present
perfect before the verb, or ``both``, or ``how many``); a query in another language is
never spread.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from cairn.search.fusion import Fused, make_distinct

SPREAD = 0.1
"""Share of the best fused score a message loses per message of its conversation
ranked above it (chosen on LoCoMo's dev conversations: 0.05 to 0.2 tried on cached
first-50 lists, 0.1 and 0.3 in full runs)."""
DEPTH = 50
"""Fused results spread (the first ``DEPTH``, whatever the limit)."""

_WORD = re.compile(r"\w[\w'+/-]*")
_ASKING = frozenset({"what", "which", "where", "who"})
_AUXILIARY = frozenset({
    "is", "are", "was", "were", "do", "does", "did", "has", "have", "had", "can", "could",
    "would", "will", "should", "might"})
_NOT_PLURAL = frozenset({
    "this", "his", "its", "us", "yes", "always", "news", "bus", "series", "species",
    "process", "business", "class", "status", "miss", "was", "has", "does", "is"})


def asks_for_list(question: str) -> bool:
    """Whether a question asks for a list: it names ``both``, or begins ``how many``, or
    begins with what/which/where/who and has a plural-looking word (``activities``,
    ``events``; not ``process``) or ``has``/``have`` before its first auxiliary verb
    ("What has Melanie painted?"). Case and punctuation are ignored."""
    low = _WORD.findall(question.casefold())
    if not low:
        return False
    if "both" in low or low[:2] == ["how", "many"]:
        return True
    if low[0] not in _ASKING:
        return False
    for w in low[1:]:
        if w in _AUXILIARY:
            return w in ("has", "have")
        last = w.rsplit("/", 1)[-1]
        if (len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "'s", "us", "is"))
                and last not in _NOT_PLURAL):
            return True
    return False


def spread_conversations(fused: Sequence[Fused], conversation: Mapping[str, str]) -> list[Fused]:
    """``fused`` (best first) with the first :data:`DEPTH` results spread over
    conversations as the module docstring says, best first. ``conversation``: unit id →
    its conversation (document) id for the dated chat messages that may be weighed down;
    other units are not. The same list when no message loses anything."""
    head, tail = list(fused[:DEPTH]), list(fused[DEPTH:])
    if not head or not conversation:
        return list(fused)
    unit = SPREAD * abs(head[0].score)
    above: dict[str, int] = {}
    picked: list[Fused] = []
    lost: dict[str, float] = {}

    def cost(f: Fused) -> float:
        doc = conversation.get(f.key)
        return unit * above.get(doc, 0) if doc is not None else 0.0

    while head:
        # the greedy pick: a later pick can only lose more, so the picks come out best first
        best = max(head, key=lambda f: f.score - cost(f))
        head.remove(best)
        if (c := cost(best)) > 0.0:
            lost[best.key] = c
        if (doc := conversation.get(best.key)) is not None:
            above[doc] = above.get(doc, 0) + 1
        picked.append(best)
    if not lost:
        return list(fused)
    out: list[Fused] = []
    for f in picked:
        if f.key in lost:
            summands = {k: v for k, v in f.summands.items() if k != "order"}
            summands["spread conversation"] = -lost[f.key]
            f = Fused(f.key, math.fsum(summands.values()), summands, f.ranks, f.raw)
        out.append(f)
    return make_distinct(out + tail)
