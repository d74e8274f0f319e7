"""A question asking for a list ("What activities has Melanie done?") is answered from
more than one conversation: among the first results, each later chat turn of a
conversation already shown loses ``spread conversation`` (a share of the best score per
turn of its conversation above it), shown in ``--explain``. A question that does not ask
for a list, and every note, lose nothing."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from _sessions import chat_session

from cairn.app import Cairn
from cairn.config import load_config
from cairn.search.lists import SPREAD, asks_for_list

KEY = "spread conversation"

SESSIONS = [
    chat_session("s1", "2023-06-01T10:00:00Z", [
        ("Caroline", "How was your week, Melanie?"),
        ("Melanie", "I signed up for a pottery class; pottery is my favourite activity."),
        ("Caroline", "Pottery sounds fun. What did you make?"),
        ("Melanie", "A pottery bowl. Pottery is such a calming activity for me."),
        ("Melanie", "More pottery next week: pottery activities keep me sane."),
    ]),
    chat_session("s2", "2023-07-01T10:00:00Z", [
        ("Caroline", "Any plans for the weekend?"),
        ("Melanie", "Camping with the kids was our activity; we did pottery by the fire."),
    ]),
    chat_session("s3", "2023-08-01T10:00:00Z", [
        ("Caroline", "Hi Melanie!"),
        ("Melanie", "I'm off swimming with the kids, my other activity."),
    ]),
]


@pytest.fixture
def cairn(tmp_path: Path) -> Any:
    tmp = tmp_path
    folder = tmp / "chats"
    folder.mkdir()
    for s in SESSIONS:
        (folder / f"{s['id']}.json").write_text(json.dumps(s), encoding="utf-8")
    (folder / "note.md").write_text(
        "# Pottery\n\nPottery activities: a pottery class, a pottery bowl.\n", encoding="utf-8")
    c = Cairn(load_config(db=tmp / "i.db"))
    c.index([folder])
    with c:
        yield c


@pytest.mark.parametrize(("question", "lists"), [
    ("What activities has Melanie done?", True),
    ("What has Melanie painted?", True),
    ("How many children does Melanie have?", True),
    ("Did Jon and Gina both start businesses?", True),
    ("What is Caroline's identity?", False),
    ("When did Melanie sign up for the pottery class?", False),
    ("What process does Caroline follow?", False),
    ("Quelles activités fait Melanie ?", False),
])
def test_a_question_asks_for_a_list_by_its_words(question: str, lists: bool) -> None:
    assert asks_for_list(question) is lists


def _conversation(hit: Any) -> str:
    return Path(hit.path).stem


@pytest.mark.embed  # hybrid needs vectors: the shipped model embeds
def test_a_list_question_reaches_past_the_conversation_that_crowds_it(cairn: Any) -> None:
    res = cairn.search("What pottery activities has Melanie done?", limit=10, explain=True)
    assert res.hits[0].explain["mode"] == "hybrid"
    turns = [h for h in res.hits if h.kind == "message"]
    # without the spread, the best three turns all come from the pottery conversation
    before = sorted(turns, key=lambda h: -(h.score - h.explain["summands"].get(KEY, 0.0)))
    assert {_conversation(h) for h in before[:3]} == {"s1"}
    # with it, a turn of another conversation is among them, for the reason --explain names
    assert {_conversation(h) for h in turns[:3]} != {"s1"}
    # each turn loses one share per turn of its conversation above it
    unit = -turns[1].explain["summands"][KEY] if KEY in turns[1].explain["summands"] else None
    assert unit is not None and unit == pytest.approx(SPREAD * res.hits[0].score, rel=1e-9)
    for i, h in enumerate(turns):
        above = sum(_conversation(t) == _conversation(h) for t in turns[:i])
        assert h.explain["summands"].get(KEY, 0.0) == pytest.approx(-above * unit, rel=1e-9)
        assert math.fsum(h.explain["summands"].values()) == pytest.approx(h.score, abs=1e-15)
    assert all(KEY not in h.explain["summands"] for h in res.hits if h.kind != "message")


@pytest.mark.embed
def test_a_question_not_asking_for_a_list_is_not_spread(cairn: Any) -> None:
    res = cairn.search("When did Melanie go to the pottery class?", limit=10, explain=True)
    assert res.hits
    assert all(KEY not in h.explain["summands"] for h in res.hits)
