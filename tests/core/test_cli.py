"""The ``cairn`` command, run as a user runs it (a subprocess) on the bundled sample."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "sample"


def _cairn(*args: str, db: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    env["CAIRN_DB"] = str(db)
    env["COLUMNS"] = "200"
    return subprocess.run(
        [sys.executable, "-m", "cairn.interfaces.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        check=check,
    )


def _json(*args: str, db: Path) -> Any:
    return json.loads(_cairn(*args, "--json", db=db).stdout)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cli")
    shutil.copytree(SAMPLE, folder / "sample")
    path = folder / "index.db"
    run = _json("index", str(folder / "sample"), db=path)
    assert run["seen"] == 12 and run["added"] == 12 and run["failed"] == 0
    return path


def test_search_json_fields(db: Path) -> None:
    out = _json("search", "induction", "hob", db=db)
    hit = out["hits"][0]
    assert hit["title"] == "Order the induction hob"
    assert hit["todo"] == "TODO"
    assert hit["path"] == "projects/kitchen-renovation.org"
    assert hit["abs_path"].endswith("/sample/projects/kitchen-renovation.org")
    assert Path(hit["abs_path"]).is_file()
    lines = Path(hit["abs_path"]).read_text().splitlines()
    assert "Order the induction hob" in lines[hit["line_start"] - 1]
    assert hit["line_end"] >= hit["line_start"]
    marked = [hit["snippet"][a:b] for a, b in hit["highlights"]]
    assert marked == ["induction", "hob"]
    assert hit["outline_path"] == ["Order the induction hob"]
    assert set(hit["tags"]) == {"home", "project"}
    assert "Budget" in hit["siblings"]


def test_filters_and_cjk_from_the_command_line(db: Path) -> None:
    titles = [h["title"] for h in _json("search", "tag:garden todo:open", db=db)["hits"]]
    assert set(titles) == {"Plant tomatoes", "Build a trellis for the beans"}
    cjk = _json("search", "清水寺", db=db)["hits"]
    assert cjk and cjk[0]["path"] == "reference/travel-japan.md"
    assert _json("search", "priority:A", db=db)["hits"][0]["title"] == "Plant tomatoes"
    odd = _json("search", '"unbalanced', "C++", "NEAR", "*", db=db)
    assert isinstance(odd["hits"], list)


def test_explain(db: Path) -> None:
    hit = _json("search", "compost", "--explain", db=db)["hits"][0]
    assert hit["explain"]["keyword"]["rank"] == 1
    assert hit["explain"]["score"] == hit["score"] > 0
    assert '"compost"' in hit["explain"]["fts_query"]


def test_show_by_path_line_and_id(db: Path) -> None:
    view = _json("show", "projects/garden.org:15", db=db)
    assert view["kind"] == "unit"
    assert view["unit"]["title"] == "Plant tomatoes"
    assert view["unit"]["priority"] == "A"
    assert any(t["role"] == "scheduled" for t in view["unit"]["timestamps"])
    doc = _json("show", "projects/garden.org", db=db)
    assert doc["document"]["title"] == "Garden"
    assert [u["title"] for u in doc["units"]][:3] == ["Garden", "Beds", "Plant tomatoes"]
    beds = _json("show", "8a1f3c2e-4b5d-4e6f-9a0b-1c2d3e4f5a6b", db=db)
    assert beds["unit"]["title"] == "Beds"
    journal = {b["source_path"] for b in doc["backlinks"]}
    assert "journal/2026-03-14.org" in journal


def test_stats_and_roots(db: Path) -> None:
    stats = _json("stats", db=db)
    assert stats["documents"] == 12
    assert set(stats["formats"]) == {"org", "markdown", "text"}
    assert stats["last_run"]["added"] == 12
    roots = _json("roots", db=db)
    assert len(roots) == 1 and roots[0]["path"].endswith("/sample")
    assert _json("check", db=db) == {"ok": True, "problems": []}


def test_errors_are_clear_and_exit_nonzero(db: Path, tmp_path: Path) -> None:
    res = _cairn("show", "no/such/file.org", db=db, check=False)
    assert res.returncode == 1
    assert "no document, unit or indexed file" in res.stderr
    res = _cairn("index", str(tmp_path / "missing"), "--json", db=db, check=False)
    assert res.returncode == 2
    assert "no such file or folder" in json.loads(res.stdout)["error"]
    bad = tmp_path / "bad.toml"
    bad.write_text("[search\n")
    res = _cairn("--config", str(bad), "stats", db=db, check=False)
    assert res.returncode != 0 and "invalid TOML" in res.stderr


def test_help_teaches() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "cairn.interfaces.cli", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    for word in ("index", "search", "show", "stats", "Quick start"):
        assert word in res.stdout
    res = subprocess.run(
        [sys.executable, "-m", "cairn.interfaces.cli", "search", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "tag:" in res.stdout and "--explain" in res.stdout
