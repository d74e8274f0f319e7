"""Output to a pipe or a file is not wrapped: Rich would break paths, titles and
messages at 80 columns (its width off a terminal), and a script reads each piece as
another line. A terminal keeps its width."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.cli._console import CliConsole

LONG_TITLE = ("A heading whose title runs well past the eightieth column of any terminal "
              "and then some more words")
DEEP = "a-rather-long-folder-name/another-long-subfolder-name"
FILE = "a-file-name-long-enough-that-its-path-passes-eighty-columns.org"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("piped")
    (tmp / "notes" / DEEP).mkdir(parents=True)
    (tmp / "notes" / DEEP / FILE).write_text(
        f"#+TITLE: Long\n* {LONG_TITLE} :tagone:tagtwo:\ncompost heap\n"
        f"** {LONG_TITLE} too\nmore compost\n")
    with Cairn(load_config(db=tmp / "i.db", env={})) as c:
        c.index([tmp / "notes"], embed=False)
    return tmp / "i.db"


def _run(cli: Callable[..., Any], db: Path, *args: str) -> Any:
    # no COLUMNS: what a script or a pipe gives (Rich would take 80 columns)
    return cli("--db", str(db), *args, env={"CAIRN_EMBED": "none", "COLUMNS": None},
               check=False)


def test_show_and_terms_tables_keep_each_value_on_one_line(
    cli: Callable[..., Any], db: Path
) -> None:
    path = str(db.parent / "notes" / DEEP / FILE)
    shown = _run(cli, db, "show", path)
    assert shown.code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert path in lines
    assert any(LONG_TITLE in line and "tagone:tagtwo" in line for line in lines), lines
    assert any(f"{LONG_TITLE} too" in line for line in lines), lines
    terms = _run(cli, db, "terms", "compost")
    assert terms.code == 0, terms.stderr
    assert any(f"{DEEP}/{FILE}" in line for line in terms.stdout.splitlines()), terms.stdout


def test_an_error_on_standard_error_is_one_line(cli: Callable[..., Any], db: Path) -> None:
    missing = "/no/such/" + "deep/" * 20 + "file.org"
    res = _run(cli, db, "show", missing)
    assert res.code == 1
    assert len(res.stderr.strip().splitlines()) == 1 and missing in res.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_keeps_its_width() -> None:
    on_terminal = CliConsole(file=_Terminal(), _environ={"COLUMNS": "50"})
    assert on_terminal.width == 50
    piped = CliConsole(file=io.StringIO(), _environ={"COLUMNS": "50"})
    assert piped.width > 10_000
    assert CliConsole(file=io.StringIO(), width=70).width == 70  # asked for: as asked
