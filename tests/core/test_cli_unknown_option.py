"""``cairn search`` takes words starting with ``-`` as exclusions, so Typer lets unknown
options through; one that looks like an option (``--limt 3``) is an error naming it and
the nearest option, not words quietly searched for."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import load_config


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("opts")
    (tmp / "notes").mkdir()
    (tmp / "notes" / "a.md").write_text("# Zebra\n\nzebra crossing, --limit flag\n")
    (tmp / "notes" / "b.md").write_text("# Draft\n\nzebra draft\n")
    with Cairn(load_config(db=tmp / "i.db", env={})) as c:
        c.index([tmp / "notes"], embed=False)
    return tmp / "i.db"


def _search(cli: Callable[..., Any], db: Path, *args: str) -> Any:
    """``cairn --db DB search ARGS`` in this process (``cli`` fixture)."""
    return cli("--db", str(db), "search", *args, check=False)


def test_a_mistyped_option_is_an_error_with_the_nearest_one(
    cli: Callable[..., Any], db: Path
) -> None:
    res = _search(cli, db, "zebra", "--limt", "1", "--json")
    assert res.code == 2
    err = json.loads(res.stdout)["error"]
    assert "no such option --limt" in err and "did you mean --limit?" in err
    res = _search(cli, db, "zebra", "--offset=5")
    assert res.code == 2 and "no such option --offset" in res.stderr
    assert "quote it as a phrase" in res.stderr


def test_exclusions_phrases_and_real_options_still_work(cli: Callable[..., Any], db: Path) -> None:
    res = _search(cli, db, "zebra", "-draft", "--limit", "5", "--json")
    assert res.code == 0, res.stderr
    assert [h["title"] for h in json.loads(res.stdout)["hits"]] == ["Zebra"]
    res = _search(cli, db, '"--limit flag"', "--json", "--mode", "keyword")
    assert res.code == 0, res.stderr
    assert [h["title"] for h in json.loads(res.stdout)["hits"]] == ["Zebra"]
