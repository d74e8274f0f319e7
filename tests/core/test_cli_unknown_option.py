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


@pytest.mark.parametrize("typer_only", [False, True], ids=["fast-path", "typer"])
def test_words_after_a_double_dash_are_query_words(
    cli: Callable[..., Any], db: Path, typer_only: bool
) -> None:
    """After ``--`` every word is the query's, as in every POSIX tool: ``--limit 1``
    there is text to search for, not an option (nor an unknown one) — on the fast path
    (:func:`cairn.interfaces.cli.main`) and in the Typer command alike."""
    args = ["--db", str(db), "search", "--mode", "keyword", "--json", "--", "--limit", "1",
            "zebra"]
    if typer_only:
        from typer.testing import CliRunner

        from cairn.interfaces.cli import app

        res: Any = CliRunner().invoke(app, args, env={"CAIRN_NO_WARM": "1"})
        code, out = res.exit_code, res.stdout
    else:
        ran = cli(*args, check=False)
        code, out = ran.code, ran.stdout
    assert code == 0, out
    body = json.loads(out)
    assert body["query"] == "--limit 1 zebra"
    assert len(body["hits"]) == 2  # ``--limit 1`` is text here, not a limit of one hit


def test_a_double_dash_that_is_an_options_value_ends_nothing(
    cli: Callable[..., Any], db: Path
) -> None:
    """``--sort --`` gives ``--sort`` the value ``--`` (as Click reads it): the words
    after it are still read as options, so a mistyped one is still reported."""
    res = _search(cli, db, "--sort", "--", "zebra", "--limt", "1")
    assert res.code == 2
    assert "no such option --limt" in res.stderr
