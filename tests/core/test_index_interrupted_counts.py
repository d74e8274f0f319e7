"""Ctrl-C during an index run's file step: the message says how many of the run's files
are indexed now, and that figure is what the index holds afterwards (a first run
commits every 1,000 files, so an early Ctrl-C keeps none). Ctrl-C is raised where a
signal would land, in the file step (the indexer storing a file)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.errors import IndexInterrupted
from cairn.ingest.pipeline import Indexer

Cli = Callable[..., Any]


def _notes(folder: Path, start: int, n: int) -> Path:
    folder.mkdir(exist_ok=True)
    for i in range(start, start + n):
        (folder / f"note {i}.md").write_text(f"# Note {i}\n\nwords {i}\n", "utf-8")
    return folder


@pytest.fixture
def ctrl_c_at(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int], None]]:
    """``ctrl_c_at(n)``: Ctrl-C arrives as the run stores its ``n``-th file."""
    real = Indexer._index_file
    calls = {"n": 0, "at": 0}

    def storing(self: Indexer, *args: Any) -> None:
        calls["n"] += 1
        if calls["n"] == calls["at"]:
            raise KeyboardInterrupt
        real(self, *args)

    monkeypatch.setattr(Indexer, "_index_file", storing)
    monkeypatch.setenv("CAIRN_WORKERS", "1")

    def arm(n: int) -> None:
        calls["n"], calls["at"] = 0, n
    yield arm


def test_a_first_run_stopped_early_says_it_kept_nothing(
    tmp_path: Path, cairn_cmd: Cli, ctrl_c_at: Callable[[int], None]
) -> None:
    folder, db = _notes(tmp_path / "n", 0, 30), tmp_path / "i.db"
    ctrl_c_at(12)
    run = cairn_cmd("--db", str(db), "index", str(folder), "--no-embed")
    assert run.code == 130
    assert run.stderr.strip() == (
        "interrupted: 0 of 30 files were committed; run `cairn index` again to finish")
    with Cairn.open(db=db) as c:
        assert c.stats().documents == 0


def test_a_later_run_stopped_counts_the_files_that_stay_indexed(
    tmp_path: Path, cairn_cmd: Cli, ctrl_c_at: Callable[[int], None]
) -> None:
    folder, db = _notes(tmp_path / "n", 0, 10), tmp_path / "i.db"
    assert cairn_cmd("--db", str(db), "index", str(folder), "--no-embed").code == 0
    _notes(folder, 10, 15)
    ctrl_c_at(5)
    with Cairn.open(db=db) as c, pytest.raises(IndexInterrupted) as stopped:
        c.index([folder], embed=False)
    assert (stopped.value.kept, stopped.value.total) == (10, 25)
    ctrl_c_at(5)
    run = cairn_cmd("--db", str(db), "index", str(folder), "--no-embed")
    assert run.code == 130 and run.stderr.strip() == (
        "interrupted: 10 of 25 files stay indexed and searchable; "
        "run `cairn index` again to finish")
    with Cairn.open(db=db) as c:
        assert c.stats().documents == 10
