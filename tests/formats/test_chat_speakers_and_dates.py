"""Two-person chats as long conversations hold them: a linear chat export names each
message's speaker (``name``) and dates the session once (``created_at``); the speaker
titles the message and is searchable, each message takes the session's time, relative
dates in a message ("yesterday", "last Saturday") are resolved against that time and
indexed as dates, and an image part's alt text is kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.formats.chats import parse_file
from cairn.formats.chats._when import relative_dates
from cairn.model import Document

SESSION: dict[str, Any] = {
    "id": "s1",
    "name": "Caroline and Melanie",
    "created_at": "2023-05-25T13:14:00Z",  # a Thursday
    "messages": [
        {"id": "D1:1", "role": "user", "name": "Caroline",
         "content": "Thanks, Melanie! I love camping too, and your camping photos."},
        {"id": "D1:2", "role": "assistant", "name": "Melanie",
         "content": "We went camping in the mountains last Saturday with the kids, "
                    "right after the pottery workshop in the town hall."},
        {"id": "D1:3", "role": "user", "name": "Caroline",
         "content": [{"type": "text", "text": "I went to a LGBTQ support group yesterday."},
                     {"type": "image_url", "image_url": {"url": "https://x.example/a.jpg"},
                      "alt": "a photo of a rainbow flag at a parade"}]},
    ],
}


def _doc(tmp_path: Path, data: dict[str, Any]) -> Document:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    docs = list(parse_file(path, "s.json"))
    assert len(docs) == 1 and isinstance(docs[0], Document), docs
    return docs[0]


def test_speaker_titles_the_message_and_session_time_dates_it(tmp_path: Path) -> None:
    doc = _doc(tmp_path, SESSION)
    msgs = [u for u in doc.units if u.kind == "message"]
    assert [u.title for u in msgs] == [
        "Caroline · 2023-05-25 13:14", "Melanie · 2023-05-25 13:14", "Caroline · 2023-05-25 13:14"
    ]
    assert all(u.extra["time"] == "2023-05-25T13:14:00Z" for u in msgs)
    assert all(u.extra["time_from"] == "conversation" for u in msgs)
    assert [u.extra["role"] for u in msgs] == ["user", "assistant", "user"]
    assert doc.created == "2023-05-25T13:14:00Z"
    assert msgs[2].body.endswith("[image: a photo of a rainbow flag at a parade]")


def test_relative_dates_are_resolved_against_the_message_time(tmp_path: Path) -> None:
    doc = _doc(tmp_path, SESSION)
    msgs = [u for u in doc.units if u.kind == "message"]
    assert [(t.raw, t.start, t.active) for t in msgs[1].timestamps] == [
        ("last Saturday", "2023-05-20", False)
    ]
    assert [(t.raw, t.start) for t in msgs[2].timestamps] == [("yesterday", "2023-05-24")]
    assert msgs[0].timestamps == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the day before yesterday", [("2023-05-23", None)]),
        ("I'm off tomorrow", [("2023-05-26", None)]),
        ("last Thursday, said on a Thursday", [("2023-05-18", None)]),
        ("next Monday", [("2023-05-29", None)]),
        ("last week was busy", [("2023-05-15", "2023-05-21")]),
        ("last weekend", [("2023-05-20", "2023-05-21")]),
        ("last month", [("2023-04-01", "2023-04-30")]),
        ("next month I'm having a show", [("2023-06-01", "2023-06-30")]),
        ("last year", [("2022-01-01", "2022-12-31")]),
        ("two weeks ago", [("2023-05-11", None)]),
        ("a couple of days ago", [("2023-05-23", None)]),
        ("3 months ago", [("2023-02-01", "2023-02-28")]),
        ("5 years ago", [("2018-01-01", "2018-12-31")]),
        ("a few weeks ago", []),
        ("the yesterdays of lastweek", []),
        # the phrase matches regardless of case, even where lower-casing changes the
        # letter ("İ" lowers to "i" plus a dot), so a cheap pre-check must not miss it
        ("LAST NİGHT", [("2023-05-24", None)]),
        ("TONİGHT", [("2023-05-25", None)]),
        ("THİS MORNİNG", [("2023-05-25", None)]),
        ("LAST WEEKEND", [("2023-05-20", "2023-05-21")]),
    ],
)
def test_relative_date_phrases(text: str, expected: list[tuple[str, str | None]]) -> None:
    got = [(t.start, t.end) for t in relative_dates(text, "2023-05-25T13:14:00Z")]
    assert got == expected


def test_no_time_no_relative_dates() -> None:
    assert relative_dates("yesterday", None) == ()
    assert relative_dates("yesterday", "not a time") == ()
    assert relative_dates("10000 years ago", "2023-05-25T13:14:00Z") == ()


def test_text_already_lowered_by_the_caller_gives_the_same_dates() -> None:
    text = "We met Last Friday and again yesterday; no date word in this other clause."
    at = "2023-05-25T13:14:00Z"
    assert relative_dates(text, at, text.lower()) == relative_dates(text, at)
    assert [t.raw for t in relative_dates(text, at)] == ["Last Friday", "yesterday"]


def test_speaker_and_resolved_dates_are_searchable(tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    (folder / "s.json").write_text(json.dumps(SESSION), encoding="utf-8")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([folder])
        # Melanie's own words, not Caroline's reply that names her, answer a question
        # about what Melanie did
        hits = c.search("Where has Melanie camped?", mode="keyword", limit=3).hits
        assert "mountains" in hits[0].snippet, [h.snippet for h in hits]
        hits = c.search("ts-inactive:2023-05-24", mode="keyword").hits
        assert [h.title for h in hits] == ["Caroline · 2023-05-25 13:14"]
        assert "support group" in hits[0].snippet
