"""A newline, tab or escape in a file name is printed escaped (C-quoted, as git does)
in ``--files``, ``--format vimgrep`` and the plain hit list, so one hit stays one line
and a name cannot restyle the terminal; ``--json`` keeps the name as it is."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.interfaces.cli._plain import one_line, quote_path

NAMES = ("two\nlines.md", "tab\there.md", "esc\x1b[31mred.md")


def _cli(cli: Callable[..., Any], db: Path, *args: str) -> list[str]:
    env = {"CAIRN_EMBED": "none", "NO_COLOR": "1", "FORCE_COLOR": None, "COLUMNS": None}
    res = cli("--db", str(db), "search", "--mode", "keyword", *args, "marmalade", env=env,
              check=False)
    assert res.code == 0, res.stderr
    return res.stdout.splitlines()


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("odd")
    notes = root / "vault"
    notes.mkdir()
    for name in NAMES:
        (notes / name).write_text("# Jam\n\nSeville marmalade, boiled.\n", encoding="utf-8")
    with Cairn(Config(db_path=root / "i.db")) as c:
        c.index([notes])
    return root / "i.db", notes


def test_quote_path_and_one_line() -> None:
    assert quote_path("notes/plain name.md") == "notes/plain name.md"
    assert quote_path("a\nb.md") == '"a\\nb.md"'
    assert quote_path('t\tq"\\\x1b\x7f.md') == '"t\\tq\\"\\\\\\x1b\\x7f.md"'
    assert one_line("a\n\x1b[31mb \x07 c\r\n") == "a [31mb c"


def test_vimgrep_is_one_line_per_hit(cli: Callable[..., Any], vault: tuple[Path, Path]) -> None:
    db, notes = vault
    lines = _cli(cli, db, "--format", "vimgrep")
    assert len(lines) == len(NAMES)
    assert all("\x1b" not in line for line in lines)
    assert sorted(line.split(":", 1)[0] for line in lines) == sorted(
        quote_path(str(notes / n)) for n in NAMES)


def test_files_and_hits_are_escaped(cli: Callable[..., Any], vault: tuple[Path, Path]) -> None:
    db, notes = vault
    files = _cli(cli, db, "--files")
    assert len(files) == 2 * len(NAMES) + 1  # a path line and a hit line each, a summary
    assert all("\x1b" not in line and "\t" not in line for line in files)
    assert quote_path(str(notes / NAMES[0])) + "  (1 hit)" in files
    plain = _cli(cli, db)
    assert not [x for x in plain if "\x1b" in x]
    assert sum(x.strip().startswith('"') and ":" in x for x in plain) == len(NAMES)


def test_json_keeps_the_name(cli: Callable[..., Any], vault: tuple[Path, Path]) -> None:
    db, notes = vault
    data = json.loads("\n".join(_cli(cli, db, "--json")))
    assert sorted(h["abs_path"] for h in data["hits"]) == sorted(str(notes / n) for n in NAMES)


def test_show_quotes_the_path(vault: tuple[Path, Path], cli: Callable[..., Any]) -> None:
    db, notes = vault
    env = {"CAIRN_EMBED": "none", "NO_COLOR": "1", "COLUMNS": "200"}
    res = cli("--db", str(db), "show", NAMES[0], env=env, check=False)
    assert res.code == 0, res.stderr
    assert quote_path(str(notes / NAMES[0])) in res.stdout.splitlines()
