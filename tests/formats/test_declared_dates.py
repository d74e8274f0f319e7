"""A note's ``created:`` / ``modified:`` front matter is read in the spellings vault tools
and people write — epoch milliseconds and seconds, ``YYYY/MM/DD``, ``12 March 2024``,
``March 12, 2024`` — so the ``created:`` filter finds the note; an ambiguous spelling
(``03/04/2024``) is not guessed at. Real files indexed into a real SQLite index."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.formats.written_dates import declared_date

NOTES = {
    "epoch-ms.md": "created: 1700000000000",  # 2023-11-14T22:13:20Z
    "epoch-s.md": "created: 1709251200",  # 2024-03-01T00:00:00Z
    "slashed.md": "created: 2024/03/05",
    "day-month.md": "created: 12 March 2024",
    "month-day.md": 'created: "March 12, 2024"\nmodified: Tue, 2 Apr 2024',
    "ambiguous.md": "created: 03/04/2024",
}


@pytest.fixture
def cairn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cairn:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    root = tmp_path / "vault"
    root.mkdir()
    for name, front in NOTES.items():
        (root / name).write_text(f"---\n{front}\n---\n# Garden\n\nseedlings\n", encoding="utf-8")
    c = Cairn(Config(db_path=tmp_path / "i.db"))
    c.index([root])
    return c


def _files(c: Cairn, q: str) -> list[str]:
    return sorted({h.path for h in c.search(q, mode="keyword", limit=50,
                                             today=dt.date(2024, 6, 1)).hits})


def test_created_in_epoch_milliseconds_and_usual_spellings_is_a_date(cairn: Cairn) -> None:
    assert _files(cairn, "created:2023-11-14 seedlings") == ["epoch-ms.md"]
    assert _files(cairn, "created:2024-03 seedlings") == [
        "day-month.md", "epoch-s.md", "month-day.md", "slashed.md"]
    assert _files(cairn, "created:2024-03-12 seedlings") == ["day-month.md", "month-day.md"]
    assert _files(cairn, "modified:2024-04-02 seedlings") == ["month-day.md"]


def test_an_ambiguous_spelling_is_not_guessed(cairn: Cairn) -> None:
    # 03/04/2024 is March or April: the note keeps its file's date, not either month
    assert "ambiguous.md" not in _files(cairn, "created:2024-03 seedlings")
    assert "ambiguous.md" not in _files(cairn, "created:2024-04 seedlings")
    assert declared_date("03/04/2024") is None
    assert declared_date("March 2024") is None
    assert declared_date(True) is None
    assert declared_date("99999999999999") is None  # no epoch that far
    assert declared_date(1700000000000) == "2023-11-14T22:13:20Z"
