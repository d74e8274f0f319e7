"""Conversations ranked as conversations: a chat turn that answers a matching question
gains from it, as a named summand of the fused score.

A turn of a long conversation is short, and what it is about is often asked by the
turn before it: "How long have you been married?" is answered by "5 years already!",
which names neither word; "What are your plans for the summer?" by "Researching
adoption agencies". So, after fusion and the speaker summand
(:mod:`cairn.search.speakers`), each dated chat message among the fused candidates
whose previous turn in the same conversation asks something (a ``?`` ending a
sentence) gains

    ``context previous turn`` = :data:`PREVIOUS_WEIGHT` × that turn's fused score,

shown on its own in ``--explain``. The previous turn's score is taken before this
summand (no chains). Only units already among the fused candidates are raised — they
passed the query's filters — so a turn whose question is not a candidate gains nothing.
Notes, other units and messages without a time are left as they are; a list without a
dated chat message is returned as it came.

A question that asks for a list then has its results spread over conversations
(:mod:`cairn.search.lists`).

The keyword list weighs a turn's neighbours and its speaker as well
(:mod:`cairn.search.turns`), inside its BM25 score; ``--explain`` shows those as the
parts of the keyword score (``keyword.parts``), not as summands.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from cairn.model import TextQuery, UnitFacts
from cairn.search.fusion import Fused, make_distinct
from cairn.search.lists import asks_for_list, spread_conversations
from cairn.search.speakers import DEPTH, boost_speakers
from cairn.store import Store

PREVIOUS_WEIGHT = 0.25
"""Share of the previous turn's fused score a turn answering it gains (chosen on
LoCoMo's dev conversations: 0.25, 0.35 and 0.5 tried; a turn after any previous
turn, not only a question, and the next turn's score as well did worse)."""

_ASKS = re.compile(r"\?(?=[\s\"'\u201d\u2019)\]]|$)")
"""A question mark ending a sentence (not one inside a link's address)."""


def rank_turns(
    store: Store, tq: TextQuery, fused: Sequence[Fused], facts: Mapping[str, UnitFacts],
    question: str = "",
) -> list[Fused]:
    """``fused`` (best first, unit ids as keys) with the speaker summand
    (:func:`cairn.search.speakers.boost_speakers`), the ``context previous turn``
    summand of the module docstring and, for a question asking for a list, the
    ``spread conversation`` summand (:func:`cairn.search.lists.spread_conversations`),
    best first; the same list when no candidate is a dated chat message. ``facts``:
    unit facts of the fused units; ``question``: the query as typed (whether it asks
    for a list is read from all its words, stopwords too). Raises what the store
    raises.

    A question gives its share only from among the first :data:`DEPTH` candidates, so
    only those and the turns after them are looked up whole."""
    dated = [f.key for f in fused
             if (fact := facts.get(f.key)) is not None and fact.time is not None]
    if not dated:
        return list(fused)
    head = {f.key for f in fused[:DEPTH]}
    shapes = store.edges.unit_shapes(dated)
    at = {(s.document_id, s.ordinal): u for u, s in shapes.items()}
    answers = {q: a for q, s in shapes.items() if q in head
               and (a := at.get((s.document_id, s.ordinal + 1))) is not None}
    turns = store.hit_units(list(dict.fromkeys(
        [*(u for u in dated if u in head), *answers.values()])))
    fused = boost_speakers(tq, fused, turns)
    score = {f.key: f.score for f in fused}
    gains: dict[str, float] = {}
    for q, a in answers.items():
        asked, answer = turns.get(q), turns.get(a)
        if (asked is not None and answer is not None and asked.kind == "message"
                and answer.kind == "message" and _ASKS.search(asked.body)):
            gains[a] = PREVIOUS_WEIGHT * score[q]
    if gains:
        out: list[Fused] = []
        for f in fused:
            if f.key in gains:
                summands = {k: v for k, v in f.summands.items() if k != "order"}
                summands["context previous turn"] = gains[f.key]
                f = Fused(f.key, math.fsum(summands.values()), summands, f.ranks, f.raw)
            out.append(f)
        fused = make_distinct(out)
    if asks_for_list(question):
        fused = spread_conversations(fused, {
            u: t.document_id for u, t in turns.items() if t.kind == "message"})
    return fused
