"""``cairn search`` layouts a script reads: ``--fields`` with ``--json`` keeps JSON's
types, a CSV names each file's registered root, and options that would print the hits
two ways at once are a usage error naming both."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import load_config


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of two roots, each holding a ``plan.md`` (one relative path, two files)."""
    tmp = tmp_path_factory.mktemp("layouts")
    for name, body in (("home", "compost heap"), ("work", "compost budget")):
        (tmp / name).mkdir()
        (tmp / name / "plan.md").write_text(
            f"---\ncount: 3\nowners: [ann, bo]\n---\n# Plan {name}\n\n{body}\n")
    with Cairn(load_config(db=tmp / "i.db", env={})) as c:
        c.index([tmp / "home"], embed=False)
        c.index([tmp / "work"], embed=False)
    return tmp / "i.db"


def _search(cli: Callable[..., Any], db: Path, *args: str) -> Any:
    return cli("--db", str(db), "search", "--mode", "keyword", *args, check=False)


@pytest.mark.parametrize("layout", [["--json"], ["--format", "json"]])
def test_a_json_table_keeps_numbers_and_lists(
    cli: Callable[..., Any], db: Path, layout: list[str]
) -> None:
    res = _search(cli, db, "compost", "--fields", "title,line,rank,score,tags,prop:count,"
                  "prop:owners", *layout)
    assert res.code == 0, res.stderr
    rows = json.loads(res.stdout)
    assert [r["rank"] for r in rows] == [1, 2]
    for r in rows:
        assert isinstance(r["line"], int) and r["line"] >= 1
        assert isinstance(r["score"], float) and r["score"] > 0
        assert r["tags"] == [] and r["prop:count"] == 3 and r["prop:owners"] == ["ann", "bo"]


def test_a_csv_names_the_root_each_path_is_under(cli: Callable[..., Any], db: Path) -> None:
    res = _search(cli, db, "compost", "--format", "csv")
    assert res.code == 0, res.stderr
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert list(rows[0]) == ["rank", "title", "path", "line", "root"]
    assert {r["path"] for r in rows} == {"plan.md"}
    opened = {(Path(r["root"]) / r["path"]).read_text().splitlines()[4] for r in rows}
    assert opened == {"# Plan home", "# Plan work"}  # a script opens each file
    cells = _search(cli, db, "compost", "--format", "csv", "--fields", "rank,score,prop:owners")
    assert list(csv.reader(io.StringIO(cells.stdout)))[1][2] == "ann, bo"


CONFLICTS = [
    (["--json", "--format", "csv"], "--json", "--format csv"),
    (["--format", "text", "--json"], "--json", "--format text"),
    (["--format", "vimgrep", "--json"], "--json", "--format vimgrep"),
    (["--files", "--fields", "title"], "--files", "--fields"),
    (["--files", "--format", "csv"], "--files", "--format csv"),
    (["--fields", "title", "--format", "vimgrep"], "--fields", "--format vimgrep"),
    (["--format", "vimgrep", "--explain"], "--explain", "--format vimgrep"),
    (["--explain", "--format", "csv"], "--explain", "--format csv"),
    (["--explain", "--fields", "title", "--json"], "--explain", "--fields"),
    (["--files", "--explain"], "--explain", "--files"),
]


@pytest.mark.parametrize(("options", "first", "second"), CONFLICTS,
                         ids=[" ".join(c[0]) for c in CONFLICTS])
def test_options_that_conflict_are_a_usage_error_naming_both(
    cli: Callable[..., Any], db: Path, options: list[str], first: str, second: str
) -> None:
    res = _search(cli, db, "compost", *options)
    assert res.code == 2
    said = json.loads(res.stdout)["error"] if "--json" in options else res.stderr
    assert f"{first} and {second} cannot be used together" in said, said
    if "--json" not in options:
        assert not res.stdout  # no hits printed one of the two ways


def test_layouts_that_go_together_still_work(cli: Callable[..., Any], db: Path) -> None:
    res = _search(cli, db, "compost", "--files", "--explain", "--json")
    assert res.code == 0, res.stderr
    assert all("explain" in h for f in res.json()["files"] for h in f["hits"])
    res = _search(cli, db, "compost", "--fields", "title", "--format", "json", "--json")
    assert res.code == 0 and len(res.json()) == 2
