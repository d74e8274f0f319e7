"""Small things the CLI says: a bad ``dream --fix`` / ``--only`` name is refused before
any work starts, the help lists every check, fix kind and filter there is, and counts
read as English (``1 link``, ``none matches``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Cli = Callable[..., Any]


@pytest.fixture
def vault(tmp_path: Path, cairn_cmd: Cli) -> Path:
    """An index (returned) of a note linking to an empty one."""
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "a.md").write_text("# A\n\nSee [[B]] for more on this topic.\n")
    (tmp_path / "v" / "b.md").write_text("# B\n")
    db = tmp_path / "i.db"
    assert cairn_cmd("--db", str(db), "index", str(tmp_path / "v"), "--no-embed").code == 0
    return db


@pytest.mark.parametrize("args,reason", [
    (("--fix", "bogus", "--dry-run"), "unknown fix kind bogus"),
    (("--only", "bogus"), "unknown check bogus"),
])
def test_dream_refuses_a_bad_name_before_checking(
    vault: Path, cairn_cmd: Cli, args: tuple[str, ...], reason: str
) -> None:
    run = cairn_cmd("--db", str(vault), "dream", *args)
    assert run.code == 2 and reason in run.stderr
    assert "checking the index" not in run.stderr


def test_dream_help_names_every_check_and_fix_its_errors_list(
    vault: Path, cairn_cmd: Cli
) -> None:
    help_text = " ".join(cairn_cmd("dream", "--help", env={"COLUMNS": "400"}).stdout.split())
    for args, marker in ((("--fix", "bogus", "--dry-run"), "known: "),
                         (("--only", "bogus"), "known checks: ")):
        stderr = cairn_cmd("--db", str(vault), "dream", *args).stderr
        known = stderr.split(marker, 1)[1].strip().split(", ")
        assert all(name in help_text for name in known), (known, help_text)


def test_search_help_lists_the_lang_filter(cairn_cmd: Cli) -> None:
    assert "lang:" in cairn_cmd("search", "--help", env={"COLUMNS": "400"}).stdout


def test_counts_read_as_english(vault: Path, cairn_cmd: Cli) -> None:
    report = cairn_cmd("--db", str(vault), "dream", "--only", "thin").stdout
    assert "(1 link to it)" in report and "links to it" not in report
    run = cairn_cmd("--db", str(vault), "restore", "--run", "zzzz")
    assert run.code == 1 and "(none matches)" in run.stderr and "0 match" not in run.stderr
