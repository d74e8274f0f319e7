"""``cairn store copy`` and ``Cairn.storage.copy`` between SQLite files: the copy holds
every row of the source, searches the same, and a target that holds an index already is
refused and left as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import Config
from cairn.errors import StoreError


def _indexed(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "garden.md").write_text("# Garden\n\nCompost the leaves in autumn.\n")
    (notes / "kitchen.md").write_text("# Kitchen\n\nBread needs a warm room.\n")
    db = tmp_path / "src.db"
    with Cairn(Config(db_path=db)) as cairn:
        cairn.index([str(notes)], embed=False)
    return db


def test_the_python_copy_searches_as_the_source(tmp_path: Path) -> None:
    db = _indexed(tmp_path)
    target = tmp_path / "copy.db"
    with Cairn(Config(db_path=db)) as cairn:
        want = [h.unit_id for h in cairn.search("compost", mode="keyword").hits]
        report = cairn.storage.copy(str(target))
        assert report.rows["documents"] == 2 and report.target == str(target)
        with pytest.raises(StoreError, match="already holds an index"):
            cairn.storage.copy(str(target))
    with Cairn(Config(db_path=target), create=False) as copy:
        assert [h.unit_id for h in copy.search("compost", mode="keyword").hits] == want
        assert copy.stats().documents == 2


def test_the_cli_copies_and_reports_rows_as_json(tmp_path: Path) -> None:
    from cairn.interfaces.cli import app

    db = _indexed(tmp_path)
    target = tmp_path / "copy.db"
    runner = CliRunner()
    done = runner.invoke(app, ["store", "copy", "--to", str(target), "--json"],
                         env={"CAIRN_DB": str(db)})
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["rows"]["units"] >= 2
    again = runner.invoke(app, ["store", "copy", "--to", str(target)], env={"CAIRN_DB": str(db)})
    assert again.exit_code != 0 and "already holds an index" in again.output


def test_a_sqlite_url_target_is_the_file_it_names(tmp_path: Path) -> None:
    db = _indexed(tmp_path)
    target = tmp_path / "deep" / "copy.db"
    with Cairn(Config(db_path=db)) as cairn:
        cairn.storage.copy(f"sqlite://{target}")
    assert target.is_file() and not (tmp_path / "sqlite:").exists()
    with Cairn(Config(db_path=target), create=False) as copy:
        assert copy.stats().documents == 2


def test_a_target_of_an_unknown_scheme_is_refused_by_name_and_nothing_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _indexed(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    with Cairn(Config(db_path=db)) as cairn, pytest.raises(StoreError) as err:
        cairn.storage.copy("mysql://ann:hunter2@db.example/notes")
    assert "mysql" in str(err.value) and "hunter2" not in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_home_relative_target_is_a_file_in_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _indexed(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    with Cairn(Config(db_path=db)) as cairn:
        cairn.storage.copy("~/copy.db")
    assert (tmp_path / "home" / "copy.db").is_file()
