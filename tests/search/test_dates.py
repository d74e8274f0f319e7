"""Dates in the query language, OR/AND filters and sorting, against hand-made Org and
Markdown files with known dates and a fixed today (Wednesday 2024-03-06)."""

from __future__ import annotations

import datetime as dt
import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.errors import QueryError
from cairn.model.dates import add_step, due_date, occurrences, warning_days
from cairn.search.dates import resolve
from cairn.search.query import parse_query

TODAY = dt.date(2024, 3, 6)

TASKS = """#+TITLE: Tasks
#+FILETAGS: :tasks:
#+TODO: TODO NEXT WAIT | DONE
* TODO [#B] Pay rent :home:
DEADLINE: <2024-03-01 Fri +1m -3d>
* NEXT [#A] File taxes :work:
DEADLINE: <2024-03-15 Fri -10d> SCHEDULED: <2024-03-04 Mon>
* WAIT [#C] Call plumber :home:
SCHEDULED: <2024-03-07 Thu>
* DONE Renew passport
CLOSED: [2024-02-20 Tue 09:12] DEADLINE: <2024-02-28 Wed>
* TODO Water plants :home:
SCHEDULED: <2024-02-01 Thu .+3d>
* Team meeting :work:
<2024-01-03 Wed 10:00-11:00 ++1w>
* Reading log
[2024-02-11 Sun] finished a book
* TODO Far future
DEADLINE: <2025-06-01 Sun>
* TODO Overdue report :work:
DEADLINE: <2024-02-10 Sat>
"""

NOTE = """---
title: Garden plan
created: 2023-11-02
modified: 2024-03-01
tags: [home]
---
# Beds
Compost and beds.
## Seeds
Tomato seeds.
### Deep
Deep heading.
"""


@pytest.fixture(scope="module")
def cairn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cairn]:
    tmp = tmp_path_factory.mktemp("dates")
    root = tmp / "notes"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / "tasks.org").write_text(TASKS, encoding="utf-8")
    (root / "b" / "garden.md").write_text(NOTE, encoding="utf-8")
    with Cairn(Config(db_path=tmp / "i.db")) as c:
        c.index([root])
        yield c


def titles(c: Cairn, q: str, **kw: object) -> list[str]:
    return [h.title for h in c.search(q, limit=100, mode="keyword", today=TODAY, **kw).hits]  # type: ignore[arg-type]


# --- the calendar arithmetic ------------------------------------------------------------
def test_repeaters_warning_delays_and_month_ends() -> None:
    assert add_step(dt.date(2024, 1, 31), 1, "m") == dt.date(2024, 2, 29)
    assert add_step(dt.date(2023, 2, 28), 1, "y") == dt.date(2024, 2, 28)
    week = list(occurrences(dt.date(2024, 1, 3), "++1w", dt.date(2024, 3, 4), dt.date(2024, 3, 18)))
    assert week == [dt.date(2024, 3, 6), dt.date(2024, 3, 13)]
    assert list(occurrences(dt.date(2024, 1, 3), None, dt.date(2024, 3, 4), None)) == []
    assert due_date(dt.date(2024, 3, 1), "+1m", TODAY) == dt.date(2024, 4, 1)
    assert due_date(dt.date(2024, 2, 1), ".+3d", TODAY) == dt.date(2024, 3, 8)
    assert due_date(dt.date(2024, 2, 10), None, TODAY) == dt.date(2024, 2, 10)
    assert warning_days("-3d") == 3 and warning_days("-1w") == 7 and warning_days(None) == 14


def test_every_date_form_resolves_to_a_half_open_range() -> None:
    cases = {
        "2024": "2024-01-01..2025-01-01",
        "2024-03": "2024-03-01..2024-04-01",
        "2024-03-05": "2024-03-05..2024-03-06",
        "2024-03..2024-04": "2024-03-01..2024-05-01",
        "2024-03..": "2024-03-01..",
        "..2024-04": "..2024-05-01",
        "<2024-06-01": "..2024-06-01",
        "<=2024-06": "..2024-07-01",
        ">2024-06-01": "2024-06-02..",
        ">=2024-06": "2024-06-01..",
        "today": "2024-03-06..2024-03-07",
        "tomorrow": "2024-03-07..2024-03-08",
        "yesterday": "2024-03-05..2024-03-06",
        "+7d": "2024-03-06..2024-03-14",
        "-2w": "2024-02-21..2024-03-07",
        "this-week": "2024-03-04..2024-03-11",
        "next-week": "2024-03-11..2024-03-18",
        "last-month": "2024-02-01..2024-03-01",
        "next-month": "2024-04-01..2024-05-01",
        "this-year": "2024-01-01..2025-01-01",
        "overdue": "..2024-03-06",
        "today..+1m": "2024-03-06..2024-04-07",
        "soon": "soon",
    }
    for value, want in cases.items():
        assert resolve(value, TODAY) == want, value
    for bad in ("2024-13", "someday", "<", "..", "+7q"):
        assert resolve(bad, TODAY) is None, bad
    q = parse_query("deadline:someday", today=TODAY)
    assert not q.filters and "deadline:" in q.notes[0]


# --- date filters on the index ----------------------------------------------------------
def test_deadline_forms(cairn: Cairn) -> None:
    assert titles(cairn, "deadline:2024-03-15") == ["File taxes"]
    assert titles(cairn, "deadline:2024-02") == ["Renew passport", "Overdue report"]
    # the +1m repeater occurs on Apr 1, May 1 …: this and next month both match
    assert titles(cairn, "deadline:next-month") == ["Pay rent"]
    assert titles(cairn, "deadline:this-month") == ["Pay rent", "File taxes"]
    assert titles(cairn, "deadline:<2024-03-01") == ["Renew passport", "Overdue report"]
    # a repeater occurs every month, for ever
    assert titles(cairn, "deadline:2025..") == ["Pay rent", "Far future"]
    assert titles(cairn, "deadline:..2024-02 todo:open") == ["Overdue report"]
    assert titles(cairn, "deadline:overdue todo:open") == ["Pay rent", "Overdue report"]


def test_due_soon_honours_warning_delays_and_repeaters(cairn: Cairn) -> None:
    # File taxes: Mar 15 with -10d → soon from Mar 5; Pay rent: next due Apr 1 with -3d
    # → not soon; Overdue report (past) → soon; Far future → not
    assert titles(cairn, "deadline:soon todo:open") == ["File taxes", "Overdue report"]
    later = [
        h.title
        for h in cairn.search(
            "deadline:soon todo:open", mode="keyword", today=dt.date(2024, 3, 29)
        ).hits
    ]
    assert "Pay rent" in later
    # scheduled:soon: the scheduled day has come (a repeater's next occurrence)
    assert titles(cairn, "scheduled:soon") == ["File taxes"]


DONE_STATES = {
    "plain.org": """* TODO Open deadline
DEADLINE: <2024-03-08 Fri>
* DONE Done deadline
DEADLINE: <2024-03-07 Thu>
* DONE Done overdue
DEADLINE: <2024-02-01 Thu>
* Heading with a deadline
DEADLINE: <2024-03-07 Thu>
* DONE Done scheduled
SCHEDULED: <2024-03-01 Fri>
""",
    "declared.org": """#+TODO: TODO WAIT | FINISHED CANCELLED
* WAIT Waiting overdue
DEADLINE: <2024-02-02 Fri>
* FINISHED Finished soon
DEADLINE: <2024-03-09 Sat>
* CANCELLED Cancelled overdue
DEADLINE: <2024-02-03 Sat>
""",
}


def test_soon_and_overdue_leave_out_tasks_in_a_done_state(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    for name, text in DONE_STATES.items():
        (root / name).write_text(text, encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([root])
        assert sorted(titles(c, "deadline:soon")) == [
            "Heading with a deadline", "Open deadline", "Waiting overdue",
        ]
        assert sorted(titles(c, "deadline:overdue")) == ["Waiting overdue"]
        assert titles(c, "scheduled:soon") == [] and titles(c, "scheduled:overdue") == []
        # past is a plain range: done tasks stay
        assert sorted(titles(c, "deadline:past")) == [
            "Cancelled overdue", "Done overdue", "Waiting overdue",
        ]


def test_scheduled_closed_and_timestamps(cairn: Cairn) -> None:
    assert titles(cairn, "scheduled:tomorrow") == ["Call plumber"]
    assert titles(cairn, "scheduled:this-week") == ["File taxes", "Call plumber", "Water plants"]
    assert titles(cairn, "closed:2024-02") == ["Renew passport"]
    assert titles(cairn, "closed:this-week") == []
    # ts: any active timestamp, a ++1w meeting every Wednesday since Jan 3
    assert "Team meeting" in titles(cairn, "ts:today")
    assert "Team meeting" not in titles(cairn, "ts:tomorrow")
    assert titles(cairn, "ts-inactive:2024-02-11") == ["Reading log"]
    assert titles(cairn, "ts-inactive:2024-02-20") == ["Renew passport"]
    assert titles(cairn, "-ts:2024 path:tasks todo:open") == ["Far future"]


def test_equals_asks_for_the_written_date_of_a_repeating_timestamp(cairn: Cairn) -> None:
    # the meeting is written <2024-01-03 Wed ++1w>: it repeats into March, but was
    # written in January; a deadline <2024-03-01 Fri +1m> repeats into April
    assert "Team meeting" in titles(cairn, "ts:2024-03")
    assert "Team meeting" not in titles(cairn, "ts:=2024-03")
    assert "Team meeting" in titles(cairn, "ts:=2024-01")
    assert "Team meeting" in titles(cairn, "ts:=2024-01-03")
    assert "Pay rent" in titles(cairn, "deadline:2024-04")
    assert titles(cairn, "deadline:=2024-04") == []
    assert titles(cairn, "deadline:=2024-03-01") == ["Pay rent"]
    # a timestamp without a repeater is found the same either way
    assert titles(cairn, "scheduled:=2024-03-07") == titles(cairn, "scheduled:2024-03-07")
    # only the repeating ones: written before March, repeating into it
    assert sorted(titles(cairn, "-ts:=2024-03 ts:2024-03 path:tasks")) == [
        "Team meeting", "Water plants"]
    assert parse_query("deadline:=soon", today=TODAY).notes


def test_usual_date_spellings_are_read_and_ambiguous_ones_are_not(cairn: Cairn) -> None:
    assert resolve("2024/03/05", TODAY) == "2024-03-05..2024-03-06"
    assert resolve("March 2024", TODAY) == "2024-03-01..2024-04-01"
    assert resolve("12 Mar 2024", TODAY) == resolve("Mar 12, 2024", TODAY) == (
        "2024-03-12..2024-03-13")
    assert resolve("sept-2023", TODAY) == "2023-09-01..2023-10-01"
    assert resolve("03/04/2024", TODAY) is None  # March or April: not guessed
    assert titles(cairn, 'created:"November 2023" Compost') == ["Beds"]
    assert titles(cairn, "closed:2024/02/20") == ["Renew passport"]
    assert parse_query("created:03/04/2024", today=TODAY).notes


def test_created_and_modified_from_frontmatter(cairn: Cairn) -> None:
    hits = cairn.search("created:2023-11 Compost", mode="keyword", today=TODAY).hits
    assert [h.title for h in hits] == ["Beds"]
    assert titles(cairn, "created:2024 Compost") == []
    assert titles(cairn, "modified:2024-03-01 Compost") == ["Beds"]
    assert titles(cairn, "modified:<2024-03 Compost") == []


def test_today_comes_from_the_environment(cairn: Cairn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_TODAY", "2024-03-06")
    assert [h.title for h in cairn.search("scheduled:tomorrow", mode="keyword").hits] == [
        "Call plumber"
    ]
    monkeypatch.setenv("CAIRN_TODAY", "2024-03-03")
    assert [h.title for h in cairn.search("scheduled:tomorrow", mode="keyword").hits] == [
        "File taxes"
    ]
    with pytest.raises(QueryError):
        cairn.search("x", today="March")
    assert os.environ["CAIRN_TODAY"] == "2024-03-03"


# --- OR within a filter, AND across filters ---------------------------------------------
def test_a_list_is_or_and_repeats_are_and(cairn: Cairn) -> None:
    assert titles(cairn, "todo:NEXT,WAIT") == ["File taxes", "Call plumber"]
    assert titles(cairn, "-todo:NEXT,WAIT,TODO path:tasks todo:any") == ["Renew passport"]
    assert titles(cairn, "tag:work tag:home") == []
    home_or_work = titles(cairn, "tag:work,home path:tasks")
    assert home_or_work == [
        "Pay rent",
        "File taxes",
        "Call plumber",
        "Water plants",
        "Team meeting",
        "Overdue report",
    ]
    assert titles(cairn, "priority:A,C") == ["File taxes", "Call plumber"]
    assert titles(cairn, "path:a/,b/ Compost") == ["Beds"]
    assert len(titles(cairn, "path:a/,b/")) == len(titles(cairn, "path:a/")) + len(
        titles(cairn, "path:b/")
    )
    assert titles(cairn, "format:markdown,org deadline:2024-03-15") == ["File taxes"]
    assert titles(cairn, "deadline:2024-03-15,2024-02-10") == ["File taxes", "Overdue report"]
    assert titles(cairn, 'prop:title="Garden plan","Nope" Compost') == ["Beds"]
    assert titles(cairn, "kind:heading,preamble Tomato") == ["Seeds"]
    assert titles(cairn, "type:x,y") == []
    assert titles(cairn, "source:markdown,org Tomato") == ["Seeds"]
    assert titles(cairn, "tag:home,tasks deadline:2024-03-15") == ["File taxes"]


def test_a_quoted_comma_is_part_of_the_value() -> None:
    q = parse_query('prop:OWNER="Lee, Sam",Ann', today=TODAY)
    (f,) = q.filters
    assert (f.key, f.value, f.any_of) == ("OWNER", "Lee, Sam", ("Ann",))


# --- sorting ----------------------------------------------------------------------------
def test_sort_by_deadline_priority_and_combined(cairn: Cairn) -> None:
    open_ = "todo:open path:tasks"
    assert titles(cairn, open_, sort="deadline") == [
        "Overdue report",
        "File taxes",
        "Pay rent",
        "Far future",
        "Call plumber",
        "Water plants",
    ]
    assert titles(cairn, open_, sort="priority") == [
        "File taxes",
        "Pay rent",
        "Call plumber",
        "Water plants",
        "Far future",
        "Overdue report",
    ]
    # combined: priority first, the deadline among equals (no priority: by deadline)
    assert titles(cairn, open_, sort="priority,deadline") == [
        "File taxes",
        "Pay rent",
        "Call plumber",
        "Overdue report",
        "Far future",
        "Water plants",
    ]
    assert titles(cairn, open_, sort=["scheduled"])[:3] == [
        "File taxes",
        "Call plumber",
        "Water plants",
    ]
    assert titles(cairn, open_, sort="title")[0] == "Call plumber"
    assert titles(cairn, open_, sort="relevance") == titles(cairn, open_)
    with pytest.raises(QueryError, match="deadline"):
        cairn.search("x", sort="due")


def test_sort_pages_do_not_overlap(cairn: Cairn) -> None:
    every = titles(cairn, "path:tasks", sort="title")
    pages = [
        h.title
        for off in range(0, len(every), 3)
        for h in cairn.search("path:tasks", limit=3, offset=off, sort="title", today=TODAY).hits
    ]
    assert pages == every


def test_sort_through_the_cli_http_and_mcp_parameters(
    cairn: Cairn, cli: Callable[..., Any], tmp_path: Path
) -> None:
    import json

    from cairn.interfaces.api.models import SearchRequest

    db = str(cairn.config.db_path)
    env = {"CAIRN_EMBED": "none", "CAIRN_TODAY": "2024-03-06", "COLUMNS": None}
    cmd = ["--db", db, "search"]
    res = cli(*cmd, "todo:open", "path:tasks", "--sort", "priority,deadline", "--json",
              "--limit", "3", env=env, check=False)
    assert res.code == 0, res.stderr
    got = [h["title"] for h in json.loads(res.stdout)["hits"]]
    assert got == ["File taxes", "Pay rent", "Call plumber"]
    bad = cli(*cmd, "x", "--sort", "due", env=env, check=False)
    assert bad.code == 2 and "relevance, deadline" in bad.stderr
    assert SearchRequest(query="x", sort="deadline").sort == "deadline"


# --- what Obsidian and ripgrep users type -----------------------------------------------
def test_must_match_words_file_heading_section_and_level(cairn: Cairn) -> None:
    assert titles(cairn, "compost tomato") == ["Beds", "Seeds"] or set(
        titles(cairn, "compost tomato")
    ) == {"Beds", "Seeds"}
    assert titles(cairn, "+compost tomato") == ["Beds"]
    assert titles(cairn, '+"tomato seeds" compost') == ["Seeds"]
    assert titles(cairn, "+compost +tomato") == []
    assert titles(cairn, "file:garden Tomato") == ["Seeds"]
    assert titles(cairn, "file:GARDEN.MD Tomato") == ["Seeds"]
    assert titles(cairn, "file:notes Tomato") == []  # a folder name is not the file name
    assert titles(cairn, "file:garden,tasks deadline:2024-03-15") == ["File taxes"]
    assert titles(cairn, "heading:seed") == ["Seeds"]
    assert titles(cairn, "section:beds") == ["Beds", "Seeds", "Deep"]
    assert titles(cairn, "section:seeds") == ["Seeds", "Deep"]
    assert titles(cairn, "level:2 path:garden") == ["Seeds"]
    assert titles(cairn, "level:>=2 path:garden") == ["Seeds", "Deep"]
    assert titles(cairn, "level:<=2 path:garden") == ["Beds", "Seeds"]
    assert titles(cairn, "level:1..2 path:garden") == ["Beds", "Seeds"]
    assert titles(cairn, "level:1,3 path:garden") == ["Beds", "Deep"]
    assert titles(cairn, "-level:1 path:garden") == ["Seeds", "Deep"]
    q = parse_query("level:deep")
    assert not q.filters and "level:" in q.notes[0]


def test_backwards_ranges_are_read_forwards_with_a_note(cairn: Cairn) -> None:
    res = cairn.search("level:2..1 path:garden", limit=100, mode="keyword", today=TODAY)
    assert [h.title for h in res.hits] == ["Beds", "Seeds"]
    assert "level:2..1 runs backwards; read as level:1..2" in res.notes
    forwards = titles(cairn, "deadline:2024-03-01..2024-03-31")
    assert forwards
    res = cairn.search("deadline:2024-03-31..2024-03-01", limit=100, mode="keyword", today=TODAY)
    assert [h.title for h in res.hits] == forwards
    assert any("runs backwards" in n and "2024-03-01..2024-03-31" in n for n in res.notes)
    res = cairn.search("level:>99", limit=100, mode="keyword", today=TODAY)
    assert not res.hits and any("matches no heading depth" in n for n in res.notes)


def _cli(cli: Callable[..., Any], cairn: Cairn, *args: str) -> str:
    """``cairn --db … search ARGS`` in this process (``cli`` fixture), its standard
    output."""
    env = {"CAIRN_EMBED": "none", "CAIRN_TODAY": "2024-03-06", "COLUMNS": None}
    res = cli("--db", str(cairn.config.db_path), "search", *args, env=env, check=False)
    assert res.code == 0, res.stderr
    return str(res.stdout)


def test_vimgrep_files_and_fields_layouts(cairn: Cairn, cli: Callable[..., Any]) -> None:
    import csv
    import io
    import json

    lines = _cli(cli, cairn, "todo:NEXT,WAIT", "--format", "vimgrep").splitlines()
    assert lines[0].endswith("tasks.org:6:1:File taxes")
    assert lines[1].split(":")[1:3] == ["8", "1"] and len(lines) == 2
    grouped = _cli(cli, cairn, "tag:home", "--files").splitlines()
    files = [x for x in grouped if not x.startswith(" ")]
    assert files[0].endswith("tasks.org  (3 hits)") and files[1].endswith("garden.md  (3 hits)")
    assert "      4: TODO Pay rent" in grouped
    data = json.loads(_cli(cli, cairn, "tag:home", "--files", "--json"))
    assert [f["path"] for f in data["files"]] == ["a/tasks.org", "b/garden.md"]
    assert [h["line_start"] for h in data["files"][1]["hits"]] == [7, 9, 11]
    fields = "title,todo,priority,deadline,prop:title,tags"
    table = _cli(cli, cairn, "todo:open path:tasks", "--sort", "deadline", "--fields", fields)
    head, first = table.splitlines()[:2]
    assert head.split() == fields.split(",")
    assert first.split()[:3] == ["Overdue", "report", "TODO"]
    as_csv = _cli(cli, cairn, "todo:NEXT", "--fields", fields, "--format", "csv")
    rows = list(csv.reader(io.StringIO(as_csv)))
    assert rows == [
        fields.split(","),
        ["File taxes", "NEXT", "A", "<2024-03-15 Fri -10d>", "Tasks", "work, tasks"],
    ]
    as_json = json.loads(_cli(cli, cairn, "todo:NEXT", "--fields", fields, "--format", "json"))
    # JSON keeps JSON's types: the tags a list (a CSV cell joins them)
    assert as_json == [{**dict(zip(fields.split(","), rows[1], strict=True)),
                        "tags": ["work", "tasks"]}]
    csv_default = _cli(cli, cairn, "todo:NEXT", "--format", "csv").splitlines()
    assert csv_default[0] == "rank,title,path,line,root"
    assert csv_default[1].endswith(f",6,{cairn.config.db_path.parent / 'notes'}"), csv_default
    with pytest.raises(QueryError, match="unknown field"):
        cairn.fields.columns([], "title,bogus")


def test_a_long_run_of_ties_stays_ordered() -> None:
    from cairn.search.fusion import ORDER_STEP, Fused, make_distinct

    items = [Fused(f"k{i:05}", 0.0, {"bm25": 0.0}, {}, {}) for i in range(3000)]
    out = make_distinct(items, key_order=False)  # was 4.5 million fsums, ~10 s
    assert [f.key for f in out] == [f.key for f in items]
    assert all(b.score < a.score for a, b in itertools.pairwise(out))
    # the smallest step that puts each below the one before: j·1e-12 for the j-th
    assert out[5].summands["order"] == pytest.approx(-5 * ORDER_STEP)


def test_dates_beyond_the_calendar_are_not_errors(cairn: Cairn) -> None:
    for value in ("9999-12-31", "+99999999d", "-99999999w", "+9999y", "0000-01-01", "9999-12.."):
        q = f"deadline:{value} ts:{value} scheduled:soon"
        parse_query(q, today=TODAY)  # never raises
        cairn.search(q, mode="keyword", today=TODAY)
        cairn.search(q, mode="keyword", today=dt.date(9999, 12, 31))
    far = list(occurrences(dt.date(9999, 12, 1), "+1w", dt.date(9999, 12, 20), None))
    assert far == [dt.date(9999, 12, 22)]
    assert list(occurrences(dt.date(9999, 12, 1), "+1m", dt.date(9999, 12, 2), None)) == []
    assert add_step(dt.date(9999, 12, 31), 1, "d") == dt.date.max
    assert add_step(dt.date(1, 1, 1), -1, "y") == dt.date.min


def test_fields_table_keeps_whole_paths_and_marks_a_cut(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    deep = tmp_path / "notes" / ("a-rather-long-folder-name-for-projects/" * 2) / "sub"
    deep.mkdir(parents=True)
    title = "A heading whose title runs on well past sixty characters of text"
    (deep / "meeting-notes-from-the-quarterly-planning.org").write_text(
        f"* TODO {title}\nquarterly\n", encoding="utf-8"
    )
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([tmp_path / "notes"])
        table = _cli(cli, c, "quarterly", "--fields", "path,abs_path,title", "--mode", "keyword")
    head, row = table.splitlines()[:2]
    assert head.split() == ["path", "abs_path", "title"]
    path, abs_path, shown = row.split("  ", 2)
    path, abs_path, shown = path.strip(), abs_path.strip(), shown.strip()
    assert len(path) > 60 and (tmp_path / "notes" / path).is_file()
    assert Path(abs_path).is_file()
    assert shown == title[:59] + "…"
