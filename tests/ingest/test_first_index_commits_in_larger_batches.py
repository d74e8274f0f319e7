"""A root's first index run stores its files in larger transactions than a later run:
each commit rewrites the pages of the random-id indexes it touched, which a first build
touches nearly all of, so its bytes written grew with the number of commits."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.ingest.batch import BATCH


def _write_notes(folder: Path, n: int, version: str) -> None:
    for i in range(n):
        (folder / f"note{i}.md").write_text(
            f"# Note {i}\n\nText {version} of note {i}, linking [[note{(i + 1) % n}]].\n",
            "utf-8",
        )


def _file_commits(c: Cairn, folder: Path) -> int:
    """How many committed transactions stored files in an index run of ``folder``."""
    count, storing = [0], [False]

    def trace(sql: str) -> None:
        if sql.startswith("BEGIN"):
            storing[0] = False
        elif sql.startswith("INSERT INTO files"):
            storing[0] = True
        elif sql == "COMMIT" and storing[0]:
            count[0] += 1

    db = c.store.db  # type: ignore[attr-defined]
    db.set_trace_callback(trace)
    try:
        run = c.index([str(folder)], embed=False)
    finally:
        db.set_trace_callback(None)
    assert not run.failures
    return count[0]


def test_a_first_index_commits_fewer_times_than_reindexing_the_same_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CAIRN_WORKERS", "1")  # parsed in process: no commit while waiting
    notes = tmp_path / "notes"
    notes.mkdir()
    n = BATCH + BATCH // 4
    _write_notes(notes, n, "one")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        first = _file_commits(c, notes)
        _write_notes(notes, n, "two, longer")  # every file changed: all parsed again
        again = _file_commits(c, notes)
        assert c.search("longer", mode="keyword", limit=5)
    # one transaction in the first run; BATCH files a transaction after
    assert (first, again) == (1, 2)
