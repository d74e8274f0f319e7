"""Speakers as a query field: a word of the query that names the speaker of a chat
message ("When did Caroline go to the support group?") raises that speaker's messages
in hybrid results.

The speaker is the name in the message's title (:func:`cairn.search.turns.speaker`:
``"Caroline · 2023-05-08 13:56"``; a role such as ``user`` names no one), and it counts
when it is one of the query's words, case aside. Among the first :data:`DEPTH` fused
results and the turns answering a question among them (both looked up by
:func:`cairn.search.conversation.rank_turns`), each dated chat message whose speaker the
query names gains the summand ``matched speaker <name>`` = :data:`SPEAKER_BOOST` × the
best fused score, so ``--explain`` shows it and the summands still add up. It is not a
filter: the other speaker's messages and every note stay. The keyword list weighs the
speaker already (:data:`cairn.search.turns.SPEAKER_BOOST`); the semantic list does not
know who spoke, which is why the fused list is raised here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from cairn.model import HitUnit, TextQuery
from cairn.search.fusion import Fused, make_distinct
from cairn.search.turns import speaker

SPEAKER_BOOST = 0.25
"""Share of the best fused score a message gains when the query names its speaker
(chosen on LoCoMo's dev conversations: 0.1, 0.25, 0.5 and 1.0 tried)."""
DEPTH = 50
"""Fused results looked at (the first ``DEPTH``, whatever the limit)."""


def boost_speakers(
    tq: TextQuery, fused: Sequence[Fused], turns: Mapping[str, HitUnit]
) -> list[Fused]:
    """``fused`` (best first, unit ids as keys) with the chat messages of ``turns``
    whose speaker a positive word of ``tq`` names raised (see the module docstring),
    best first; the same list when none is. ``turns``: the looked-up units of the dated
    candidates among the first :data:`DEPTH` and of the turns answering a question
    among them (a unit absent from it is not raised)."""
    words = {t.casefold() for term in tq.positive for t in term.tokens}
    if not words or not fused or not turns:
        return list(fused)
    gain = SPEAKER_BOOST * abs(fused[0].score)
    out: list[Fused] = []
    raised = False
    for f in fused:
        unit = turns.get(f.key)
        who = speaker(unit.title) if unit is not None and unit.kind == "message" else ""
        if who and who.casefold() in words:
            summands = {k: v for k, v in f.summands.items() if k != "order"}
            summands[f"matched speaker {who}"] = gain
            f = Fused(f.key, math.fsum(summands.values()), summands, f.ranks, f.raw)
            raised = True
        out.append(f)
    return make_distinct(out) if raised else out
