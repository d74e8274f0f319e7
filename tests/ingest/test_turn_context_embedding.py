"""A chat message is embedded after the turn before it: a turn is short and often
answers the one before ("Three times a week" answers "How often do you all train?"),
so it is found by meaning through that question. What is embedded: the metadata line,
the turn before as ``Speaker: text`` (its last ``CONTEXT_CHARS`` characters, a link's
text without its address), then ``Speaker: `` and the message. Notes are embedded as
before."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.ingest.chunking import content_hash
from cairn.ingest.embedding import CONTEXT_CHARS, turn_context
from cairn.model import ChunkSource

TURNS = [
    ("Maria", "Working out together is a great way of bonding as a family. "
              "How often do you all train?"),
    ("John", "Three times a week; it keeps us on track."),
    ("Maria", "My family loves board games on Sundays. ![a board game](https://ex.org/g.png?x=1)"),
    ("John", "Family dinners are the best part of my day."),
    ("Maria", "I started a new workout plan at the gym."),
    ("John", "I watched a film about a boxer last night."),
]


def _index(tmp: Path) -> Any:
    folder = tmp / "chats"
    folder.mkdir()
    session = {
        "id": "s1", "name": "Maria and John", "created_at": "2023-06-27T10:00:00Z",
        "messages": [{"id": f"s1:{i}", "role": "user" if who == "Maria" else "assistant",
                      "name": who, "content": text} for i, (who, text) in enumerate(TURNS, 1)],
    }
    (folder / "s1.json").write_text(json.dumps(session), encoding="utf-8")
    (folder / "note.md").write_text("# Training\n\nThree times a week.\n", encoding="utf-8")
    c = Cairn(load_config(db=tmp / "i.db"))
    c.index([folder])
    return c


def _hashes(db: Path) -> dict[str, str]:
    con = sqlite3.connect(db)
    try:
        return {str(b): str(h) for b, h in con.execute(
            "SELECT u.body, c.hash FROM chunks c JOIN units u ON u.id = c.unit_id")}
    finally:
        con.close()


def test_a_chat_message_is_embedded_after_the_turn_before_it(tmp_path: Path) -> None:
    with _index(tmp_path):
        pass
    hashes = _hashes(tmp_path / "i.db")
    head = "Maria and John › {} · 2023-06-27 10:00\n"
    assert hashes[TURNS[1][1]] == content_hash(
        head.format("John") + f"Maria: {TURNS[0][1]}\nJohn: {TURNS[1][1]}")
    # a link keeps its text, not its address
    assert hashes[TURNS[3][1]] == content_hash(
        head.format("John") + "Maria: My family loves board games on Sundays. a board game\n"
        f"John: {TURNS[3][1]}")
    # the first turn has none before it: its speaker only
    assert hashes[TURNS[0][1]] == content_hash(head.format("Maria") + f"Maria: {TURNS[0][1]}")
    # a note is embedded as before: its outline line and its text
    assert hashes["Three times a week."] == content_hash("Training\nThree times a week.")


def test_a_long_turn_before_is_cut_to_its_end() -> None:
    long = " ".join(f"word{i}" for i in range(200)) + " How often do you train?"
    unit = ChunkSource("u", "message", "John · 2023-06-27 10:00", (), "Daily.", (), "Chat",
                       before_title="Maria · 2023-06-27 09:59", before_body=long)
    text = turn_context(unit)
    said = text.split("\n", 1)[0].removeprefix("Maria: ")
    assert len(said) <= CONTEXT_CHARS and said.endswith("How often do you train?")
    assert long.endswith(said) and said.split(" ", 1)[0].startswith("word")
    assert text.endswith("\nJohn: ")


@pytest.mark.embed  # the shipped model embeds
def test_an_answer_is_found_by_meaning_through_the_question_before_it(tmp_path: Path) -> None:
    with _index(tmp_path) as cairn:
        res = cairn.search("How often does John work out with his family?", mode="semantic",
                           limit=10)
    turns = [h.snippet for h in res.hits if h.kind == "message"]
    # the answer names neither training nor family; the question before it does
    assert turns[0].startswith("Three times a week")
