"""``cairn.agenda.days`` and ``cairn agenda`` against a hand-made Org file with known dates
and a fixed today (Wednesday 2024-03-06)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.errors import QueryError

AGENDA = """#+TITLE: Agenda
#+TODO: TODO NEXT | DONE
* TODO [#A] Pay rent :home:
DEADLINE: <2024-03-01 Fri +1m -3d>
* NEXT File taxes
DEADLINE: <2024-03-15 Fri -10d> SCHEDULED: <2024-03-04 Mon>
* TODO Call plumber
SCHEDULED: <2024-03-07 Thu>
* DONE Renew passport
CLOSED: [2024-02-20 Tue 09:12] DEADLINE: <2024-02-28 Wed>
* Team meeting
<2024-01-03 Wed 10:00-11:00 ++1w>
* TODO Delayed start
SCHEDULED: <2024-03-05 Tue -2d>
* TODO Far deadline
DEADLINE: <2024-04-30 Tue>
* Someday [2024-03-06 Wed]
* DONE Weekly review
SCHEDULED: <2024-03-08 Fri +1w>
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cairn, Path]]:
    tmp = tmp_path_factory.mktemp("agenda")
    root = tmp / "org"
    root.mkdir()
    (root / "a.org").write_text(AGENDA, encoding="utf-8")
    (root / "b.md").write_text("# Not org\nDEADLINE: <2024-03-06 Wed>\n", encoding="utf-8")
    with Cairn(Config(db_path=tmp / "i.db")) as c:
        c.index([root])
        yield c, tmp / "i.db"


def rows(c: Cairn, **kw: object) -> dict[str, list[tuple[str, str, int]]]:
    a = c.agenda.days(today="2024-03-06", **kw)  # type: ignore[arg-type]
    return {d.date: [(i.kind, i.title, i.days) for i in d.items] for d in a.agenda}


def test_a_week_from_today(setup: tuple[Cairn, Path]) -> None:
    c, _ = setup
    days = rows(c, days=7)
    assert list(days) == [f"2024-03-{d:02}" for d in range(6, 13)]
    assert days["2024-03-06"] == [
        ("timestamp", "Team meeting", 0),  # timed first (10:00), a ++1w repeat
        ("overdue", "Pay rent", -5),  # open, its deadline (as written) gone by
        ("scheduled-past", "File taxes", -2),
        ("warning", "File taxes", 9),  # Mar 15 with -10d: warned from Mar 5
    ]
    assert days["2024-03-07"] == [
        ("scheduled", "Call plumber", 0),
        ("scheduled", "Delayed start", 0),
    ]
    assert days["2024-03-08"] == [("scheduled", "Weekly review", 0)]  # done: its day only
    assert days["2024-03-12"] == []
    every = [t for d in days.values() for _, t, _ in d]
    assert "Renew passport" not in every  # done, and its deadline is before the window
    assert "Far deadline" not in every  # 55 days away, beyond the 14-day warning
    assert "Someday" not in every  # inactive timestamps are not shown
    assert "Not org" not in every


def test_repeaters_expand_across_a_month(setup: tuple[Cairn, Path]) -> None:
    c, _ = setup
    days = rows(c, days=31, start="2024-03-01")
    meetings = [d for d, items in days.items() if ("timestamp", "Team meeting", 0) in items]
    assert meetings == ["2024-03-06", "2024-03-13", "2024-03-20", "2024-03-27"]
    assert ("deadline", "Pay rent", 0) in days["2024-03-01"]
    assert ("deadline", "File taxes", 0) in days["2024-03-15"]
    reviews = [d for d, items in days.items() if ("scheduled", "Weekly review", 0) in items]
    assert reviews == ["2024-03-08", "2024-03-15", "2024-03-22", "2024-03-29"]
    # a window that does not hold today shows no overdue or warning lines
    later = rows(c, days=3, start="2024-04-01")
    assert later["2024-04-01"] == [("deadline", "Pay rent", 0)]
    assert all(k in ("deadline", "scheduled", "timestamp") for d in later.values() for k, _, _ in d)


def test_bad_arguments_are_errors(setup: tuple[Cairn, Path]) -> None:
    c, _ = setup
    with pytest.raises(QueryError):
        c.agenda.days(days=0)
    with pytest.raises(QueryError, match="YYYY-MM-DD"):
        c.agenda.days(start="March")


def test_the_cli_prints_text_and_json(setup: tuple[Cairn, Path], cli: Callable[..., Any]) -> None:
    _, db = setup
    env = {"CAIRN_EMBED": "none", "CAIRN_TODAY": "2024-03-06", "COLUMNS": None}
    cmd = ["--db", str(db), "agenda"]
    res = cli(*cmd, "--days", "2", env=env, check=False)
    assert res.code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("Wednesday") and "2024-03-06" in lines[0] and "today" in lines[0]
    assert any(
        "5 d. ago:" in x and "TODO [#A] Pay rent :home:" in x and "a.org:3" in x for x in lines
    )
    assert any("Scheduled:" in x and "Call plumber" in x for x in lines)
    res = cli(*cmd, "--json", "--days", "1", env=env, check=False)
    data = json.loads(res.stdout)
    assert data["today"] == "2024-03-06" and data["days"] == 1
    (day,) = data["agenda"]
    first = day["items"][0]
    assert first["kind"] == "timestamp" and first["time"] == "10:00"
    assert first["line"] == 11 and first["path"] == "a.org"
    res = cli(*cmd, "--from", "soon", "--json", env=env, check=False)
    assert res.code == 2 and "YYYY-MM-DD" in json.loads(res.stdout)["error"]


WORK = """#+FILETAGS: :work:
* TODO Ship release
DEADLINE: <2024-03-07 Thu>
* TODO Home chore :home:
SCHEDULED: <2024-03-07 Thu>
"""
HOME = """* TODO Fix fence :home:
DEADLINE: <2024-03-07 Thu>
* TODO Untagged errand
SCHEDULED: <2024-03-07 Thu>
"""


def test_tag_and_file_filters_narrow_the_agenda(tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = tmp_path / "org"
    (root / "work").mkdir(parents=True)
    (root / "work" / "projects.org").write_text(WORK, encoding="utf-8")
    (root / "home.org").write_text(HOME, encoding="utf-8")
    db = tmp_path / "i.db"
    with Cairn(Config(db_path=db)) as c:
        c.index([root])

        def titles(**kw: object) -> list[str]:
            a = c.agenda.days(today="2024-03-06", start="2024-03-07", days=1, **kw)  # type: ignore[arg-type]
            return sorted(i.title for d in a.agenda for i in d.items)

        everything = ["Fix fence", "Home chore", "Ship release", "Untagged errand"]
        assert titles() == everything
        assert titles(tags=["work"]) == ["Home chore", "Ship release"]  # FILETAGS inherited
        assert titles(tags=["home"]) == ["Fix fence", "Home chore"]
        assert titles(tags=["work", "home"]) == ["Fix fence", "Home chore", "Ship release"]
        assert titles(files=[str(root / "home.org")]) == ["Fix fence", "Untagged errand"]
        assert titles(files=[str(root / "work")]) == ["Home chore", "Ship release"]
        assert titles(files=["work/*.org"]) == ["Home chore", "Ship release"]
        assert titles(files=["home.org"]) == ["Fix fence", "Untagged errand"]
        assert titles(files=["home", "projects"]) == everything
        assert titles(files=["home.org"], tags=["home"]) == ["Fix fence"]
        assert titles(files=["nowhere.org"]) == []
    env = {"CAIRN_EMBED": "none", "CAIRN_TODAY": "2024-03-06", "COLUMNS": "200"}
    cmd = ["--db", str(db), "agenda", "--from", "2024-03-07", "--days", "1"]
    res = cli(*cmd, "--tag", "home", "--file", str(root / "work" / "projects.org"), env=env,
              check=False)
    assert res.code == 0, res.stderr
    assert "Home chore" in res.stdout
    assert not any(t in res.stdout for t in ("Ship release", "Fix fence", "Untagged errand"))


def test_agenda_help_names_every_field_and_teaches_the_filters(cli: Callable[..., Any]) -> None:
    res = cli("agenda", "--help", env={"COLUMNS": "200"}, check=False)
    assert res.code == 0, res.stderr
    assert "TODO keyword, [#priority], title" in res.stdout and ", ," not in res.stdout
    assert "--tag" in res.stdout and "--file" in res.stdout
    assert "cairn agenda --days 1 --tag work" in res.stdout
