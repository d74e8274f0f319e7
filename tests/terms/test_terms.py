"""``cairn terms``: every conversation and note holding a term, with counts per month,
on a real index of a chat export and notes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import load_config
from cairn.errors import QueryError
from cairn.fields.terms import count_phrase
from cairn.interfaces.cli import app


def _claude(cid: str, when: str, texts: list[str]) -> dict[str, Any]:
    msgs = [
        {
            "uuid": f"{cid}-{i}",
            "sender": "human" if i % 2 == 0 else "assistant",
            "text": t,
            "content": [],
            "attachments": [],
            "created_at": when,
        }
        for i, t in enumerate(texts)
    ]
    return {
        "uuid": cid,
        "name": f"Chat {cid}",
        "created_at": when,
        "updated_at": when,
        "chat_messages": msgs,
    }


@pytest.fixture
def db(tmp_path: Path) -> Path:
    chats = tmp_path / "chats"
    chats.mkdir()
    convs = [
        _claude(
            "a",
            "2024-01-10T10:00:00Z",
            [
                "How do I tune a vector database?",
                "A vector database needs an index. Vector database!",
            ],
        ),
        _claude("b", "2024-03-02T10:00:00Z", ["Compost and worms", "vector DATABASE again"]),
        _claude("c", "2024-03-05T10:00:00Z", ["nothing here", "still nothing"]),
    ]
    (chats / "conversations.json").write_text(json.dumps(convs), encoding="utf-8")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "db.md").write_text(
        "---\nmodified: 2024-02-01\n---\n# Databases\n\nA vector database stores embeddings.\n",
        encoding="utf-8",
    )
    path = tmp_path / "i.db"
    with Cairn(load_config(db=path)) as c:
        c.index([chats, notes], embed=False)
    return path


def test_counts_per_document_and_month(db: Path) -> None:
    with Cairn(load_config(db=db), create=False) as c:
        r = c.fields.terms("Vector Database")
    assert r.term == "vector database"
    assert (r.total, r.conversations, r.notes) == (5, 2, 1)
    assert r.months == {"2024-01": 3, "2024-02": 1, "2024-03": 1}
    top = r.documents[0]
    assert (top.title, top.source, top.count, top.units, top.first) == (
        "Chat a",
        "conversation",
        3,
        2,
        "2024-01",
    )
    assert {d.source for d in r.documents} == {"conversation", "note"}
    assert "Chat c" not in {d.title for d in r.documents}


def test_cli_json_and_text(db: Path) -> None:
    res = CliRunner().invoke(app, ["--db", str(db), "terms", "vector", "database", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert set(data) == {
        "term",
        "total",
        "conversations",
        "notes",
        "documents",
        "months",
        "took_ms",
    }
    assert set(data["documents"][0]) == {
        "document_id",
        "title",
        "path",
        "format",
        "source",
        "count",
        "units",
        "first",
        "last",
        "months",
    }
    res = CliRunner().invoke(app, ["--db", str(db), "terms", "compost"])
    assert res.exit_code == 0 and "1 occurrences in 1 conversations and 0 notes" in res.output
    res = CliRunner().invoke(app, ["--db", str(db), "terms", "???", "--json"])
    assert res.exit_code == 2 and "no word" in json.loads(res.stdout)["error"]


def test_count_phrase() -> None:
    assert count_phrase(["a", "b"], "A b a-b ab a b") == 3
    assert count_phrase(["x"], "") == 0


def test_a_term_without_a_word_is_refused(db: Path) -> None:
    with Cairn(load_config(db=db), create=False) as c, pytest.raises(QueryError):
        c.fields.terms("?!")


def test_titles_and_outlines_count_once_where_they_are_written(tmp_path: Path) -> None:
    chats = tmp_path / "chats"
    chats.mkdir()
    conv = _claude("t", "2024-05-01T10:00:00Z", ["first", "second", "about kelp", "fourth"])
    conv["name"] = "Kelp forests"
    (chats / "conversations.json").write_text(json.dumps([conv]), encoding="utf-8")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "sea.md").write_text(
        "# Kelp\n\nintro\n\n## Kelp tips\n\ngrow kelp\n\n## Other\n\nno mention\n\n"
        "### Deeper\n\nnone\n",
        encoding="utf-8",
    )
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([chats, notes], embed=False)
        r = c.fields.terms("kelp")
    by_title = {d.title: d for d in r.documents}
    # the conversation: its title once (the preamble) and one message; not once per
    # message through their outline paths
    assert (by_title["Kelp forests"].count, by_title["Kelp forests"].units) == (2, 2)
    # the note: the headings "Kelp" and "Kelp tips" and "grow kelp"; not "Other" or
    # "Deeper", which sit under "Kelp" in the outline
    note = next(d for d in r.documents if d.source == "note")
    assert (note.count, note.units) == (3, 2)
    assert r.total == 5
