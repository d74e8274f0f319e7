"""A chat turn that answers a question asked in the turn before it is found by that
question: it gains the summand ``context previous turn`` (a share of the question's
fused score), shown in ``--explain``. A turn after a statement, or after a link whose
address holds a ``?``, gains nothing, and notes are ranked as before."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from _sessions import chat_session

from cairn.app import Cairn
from cairn.config import load_config
from cairn.search.conversation import PREVIOUS_WEIGHT

pytestmark = pytest.mark.embed  # hybrid needs vectors: the shipped model embeds

KEY = "context previous turn"


SESSIONS = [
    chat_session("s1", "2023-06-27T10:00:00Z", [
        ("Caroline", "Wow, what an amazing family pic! How long have you been married?"),
        ("Melanie", "Five years already! Time flies, it feels like yesterday."),
        ("Caroline", "My cousin got married in a castle last spring."),
        ("Melanie", "A castle wedding sounds lovely for a married couple."),
        ("Caroline", "Look at this: ![a married couple](https://example.org/p.jpg?w=2)"),
        ("Melanie", "They seem happy together."),
    ]),
    chat_session("s2", "2023-07-03T10:00:00Z", [
        ("Caroline", "I went hiking in the hills with friends."),
        ("Melanie", "We baked bread and read books all weekend."),
        ("Caroline", "The garden needs watering again."),
        ("Melanie", "My husband and I have been married for ages, or so it feels."),
    ]),
]


@pytest.fixture
def cairn(tmp_path: Path) -> Any:
    tmp = tmp_path
    folder = tmp / "chats"
    folder.mkdir()
    for s in SESSIONS:
        (folder / f"{s['id']}.json").write_text(json.dumps(s), encoding="utf-8")
    (folder / "note.md").write_text("# Weddings\n\nHow long were they married? Years.\n",
                                    encoding="utf-8")
    c = Cairn(load_config(db=tmp / "i.db"))
    c.index([folder])
    with c:
        yield c


def test_the_answer_to_a_matching_question_gains_a_share_of_its_score(cairn: Any) -> None:
    res = cairn.search("How long have Melanie and her husband been married?", limit=20,
                       explain=True)
    assert res.hits[0].explain["mode"] == "hybrid"
    answer = next(h for h in res.hits if "Five years" in h.snippet)
    question = next(h for h in res.hits if "How long have you been married" in h.snippet)
    gain = answer.explain["summands"][KEY]
    before = question.score - question.explain["summands"].get(KEY, 0.0)
    assert gain == pytest.approx(PREVIOUS_WEIGHT * before, rel=1e-6)
    assert math.fsum(answer.explain["summands"].values()) == pytest.approx(
        answer.score, abs=1e-15)


def test_only_a_turn_after_a_question_gains(cairn: Any) -> None:
    res = cairn.search("married couple castle wedding", limit=20, explain=True)
    hit = {h.snippet: h for h in res.hits}

    def one(start: str) -> Any:
        return next(h for s, h in hit.items() if s.startswith(start))

    assert KEY in one("Five years").explain["summands"]
    # after a statement, after a link whose address holds "?", and a note: nothing
    note = next(h for h in res.hits if h.kind != "message")
    for h in (one("A castle wedding"), one("They seem happy"), note):
        assert KEY not in h.explain["summands"], h.snippet
