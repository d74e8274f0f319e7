"""Chat turns ranked with their neighbours as context.

A turn of a long conversation is a very short unit, and what it is about is often said
by the turn before or after it: "What kind of counseling do you want to pursue?" is
answered by "I'm thinking of working with trans people …", which names neither word.
So a dated chat message's keyword score is its own BM25 plus :data:`CONTEXT_WEIGHT` times the
best BM25 of the messages just before and after it in the same conversation — the
neighbours act as a field of lower weight, never merged into the turn's own text (a
turn that matches on its own still wins over one that only sits next to a match).

Only units the keyword list holds are scored (no other search): the list is read
:data:`POOL` deep when it holds a chat message, so a neighbour below the cut still
counts. Notes, other units and messages without a time keep their BM25; a list without
a dated chat message (the unit's ``time`` fact, a light look-up) is returned as it
came, and only dated messages are looked up whole (their position and speaker). This is the one
place ranking treats conversations apart.

The raised score stays one keyword score (moving the terms out of BM25 ranks worse), so
that ``--explain`` can still say why, each raised message's score is split into
:func:`keyword_parts`: its own ``bm25``, the ``context neighbouring turn`` term and the
``speaker <name>`` term, which add up to it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from cairn.store import Store

CONTEXT_WEIGHT = 0.3
"""The weight of a neighbouring turn's BM25 in a turn's keyword score."""
SPEAKER_BOOST = 1.5
"""A turn's keyword score is multiplied by this when the query names its speaker."""
POOL = 100
"""How deep the keyword list is read when it holds a chat message."""


def with_turn_context(
    store: Store,
    ranked: Sequence[tuple[str, float]],
    limit: int,
    deeper: Callable[[int], Sequence[tuple[str, float]]],
    words: Collection[str] = (),
    parts: dict[str, dict[str, float]] | None = None,
) -> list[tuple[str, float]]:
    """``ranked`` (unit id, BM25 score; best first, ``limit`` at most) with every chat
    message's score raised by its neighbours' (see the module docstring), best first,
    ``limit`` at most.

    ``parts``: when given, gains unit id → :func:`keyword_parts` for every message
    whose score was raised (entries of units not raised are left as they are).

    ``words``: the query's words, case-folded; a message whose speaker one of them
    names scores :data:`SPEAKER_BOOST` times higher.

    ``deeper(n)`` returns the same keyword list ``n`` deep; it is called once, only when
    ``ranked`` holds a chat message and was cut at ``limit``. Raises what the store
    raises."""
    if not ranked:
        return list(ranked)
    facts = store.unit_facts([u for u, _ in ranked])
    if not any(f.time is not None for f in facts.values()):
        return list(ranked)
    pool = list(ranked)
    if len(ranked) >= limit and limit < POOL:
        pool = list(deeper(POOL))
        facts = store.unit_facts([u for u, _ in pool])
    # only dated chat messages need their position (the heavier look-up)
    units = store.hit_units([u for u, _ in pool if u in facts and facts[u].time is not None])
    score = dict(pool)
    at: dict[tuple[str, int], str] = {}
    for uid, unit in units.items():
        if unit.kind == "message":
            at[(unit.document_id, unit.ordinal)] = uid
    out: list[tuple[str, float]] = []
    for uid, s in pool:
        turn = units.get(uid)
        if turn is not None and turn.kind == "message":
            near = [
                score[n]
                for n in (at.get((turn.document_id, turn.ordinal - 1)),
                          at.get((turn.document_id, turn.ordinal + 1)))
                if n is not None
            ]
            own, context = s, CONTEXT_WEIGHT * max(near, default=0.0)
            s += context
            who = speaker(turn.title)
            named = bool(words) and who.casefold() in words
            if named:
                s *= SPEAKER_BOOST
            if parts is not None and (context or named):
                parts[uid] = keyword_parts(own, context, who if named else None)
        out.append((uid, s))
    out.sort(key=lambda x: -x[1])
    return out[:limit]


def keyword_parts(own: float, context: float, who: str | None = None) -> dict[str, float]:
    """A raised message's keyword score, ``(own + context) × SPEAKER_BOOST`` when the
    query names its speaker ``who`` (``None``: it does not; else ``own + context``), as
    named parts that add up to it (``math.fsum``, within rounding): ``{"bm25": own,
    "context neighbouring turn": context, "speaker <who>": (SPEAKER_BOOST - 1) × (own +
    context)}``; a part that adds nothing is left out (``bm25`` never is)."""
    out = {"bm25": own}
    if context:
        out["context neighbouring turn"] = context
    if who is not None:
        out[f"speaker {who}".rstrip()] = (SPEAKER_BOOST - 1.0) * (own + context)
    return out


def speaker(title: str) -> str:
    """The speaker of a chat message from its title (``"Caroline · 2023-05-08 13:56"`` →
    ``"Caroline"``); a role (``user``, ``assistant`` …) names no one: ``""``."""
    who = title.split(" · ", 1)[0].strip()
    return "" if who.casefold() in _ROLES else who


_ROLES = frozenset({"user", "assistant", "system", "tool"})
