"""``cairn search`` takes words starting with ``-`` as exclusions, so Typer lets unknown
options through; one that looks like an option (``--limt 3``) is an error naming it and
the nearest option, not words quietly searched for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("opts")
    (tmp / "notes").mkdir()
    (tmp / "notes" / "a.md").write_text("# Zebra\n\nzebra crossing, --limit flag\n")
    (tmp / "notes" / "b.md").write_text("# Draft\n\nzebra draft\n")
    with Cairn(load_config(db=tmp / "i.db", env={})) as c:
        c.index([tmp / "notes"], embed=False)
    return tmp / "i.db"


def _search(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    return subprocess.run(
        [sys.executable, "-m", "cairn.interfaces.cli", "--db", str(db), "search", *args],
        capture_output=True, text=True, env={**env, "PYTHONPATH": str(SRC), "COLUMNS": "200"},
    )


def test_a_mistyped_option_is_an_error_with_the_nearest_one(db: Path) -> None:
    res = _search(db, "zebra", "--limt", "1", "--json")
    assert res.returncode == 2
    err = json.loads(res.stdout)["error"]
    assert "no such option --limt" in err and "did you mean --limit?" in err
    res = _search(db, "zebra", "--offset=5")
    assert res.returncode == 2 and "no such option --offset" in res.stderr
    assert "quote it as a phrase" in res.stderr


def test_exclusions_phrases_and_real_options_still_work(db: Path) -> None:
    res = _search(db, "zebra", "-draft", "--limit", "5", "--json")
    assert res.returncode == 0, res.stderr
    assert [h["title"] for h in json.loads(res.stdout)["hits"]] == ["Zebra"]
    res = _search(db, '"--limit flag"', "--json", "--mode", "keyword")
    assert res.returncode == 0, res.stderr
    assert [h["title"] for h in json.loads(res.stdout)["hits"]] == ["Zebra"]
