"""A value the query names that many units carry (a date, a common tag) brings in, from
anywhere in the index, the units that carry it and match another word of the query —
not only those among the first results looked at — and ``--explain`` says they were
brought in. A unit that carries the value and matches no other word stays out. A real
Org file indexed into a real SQLite file through the ``Cairn`` API."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config

# more meetings than the first results looked at, each saying "meeting" often and
# dated another day; the one meeting on the asked day says it once in a long entry
FILLERS = 70
LONG = "We went through the budget, the schedule and the open questions. " * 15


def _journal(root: Path) -> Path:
    root.mkdir()
    days = [f"2023-0{1 + i % 4}-{10 + i % 18:02d}" for i in range(FILLERS)]
    fillers = "".join(
        f"* Meeting {i}\n<{d} Mon>\nmeeting meeting, the weekly meeting{' notes' * i}\n"
        for i, d in enumerate(days)
    )
    (root / "journal.org").write_text(
        fillers
        + f"* Call with the bank\n<2023-05-07 Sun>\n{LONG}A short meeting at the end.\n"
        + "* Dentist\n<2023-05-07 Sun>\nA check-up.\n",
        encoding="utf-8",
    )
    return root


@pytest.fixture
def cairn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cairn:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    c = Cairn(Config(db_path=tmp_path / "index.db"))
    c.index([_journal(tmp_path / "notes")])
    return c


def test_a_dated_unit_beyond_the_first_results_is_brought_in_and_raised(
    cairn: Cairn,
) -> None:
    # without the date, the bank call's one "meeting" ranks below every filler
    plain = [h.title for h in cairn.search("meeting", mode="keyword", limit=100).hits]
    assert plain.index("Call with the bank") >= 60
    hits = cairn.search("meeting on 7 May 2023", mode="keyword", explain=True,
                        limit=10).hits
    call = next(h for h in hits if h.title == "Call with the bank")
    summands = dict(call.explain)["summands"]
    assert "matched date 2023-05-07 (brought in)" in summands
    assert sum(summands.values()) == pytest.approx(call.score)


def test_a_unit_carrying_the_date_alone_is_not_brought_in(
    cairn: Cairn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_TODAY", "2023-05-08")
    hits = cairn.search("meeting yesterday", mode="keyword", explain=True, limit=200).hits
    titles = [h.title for h in hits]
    # the dentist visit is that day too, but says neither word of the query
    assert "Dentist" not in titles
    call = hits[titles.index("Call with the bank")]
    assert "matched date 2023-05-07 (brought in)" in dict(call.explain)["summands"]
