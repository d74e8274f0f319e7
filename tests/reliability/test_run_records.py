"""Every run leaves a true record: a run the deletion guard stopped, one that failed
or was killed stays visible as unfinished; a no-embed run's chunks are embedded by the
next run; a watcher batch that needs a full run reports that run's counts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _reliability import garden_vault, notes_folder

from cairn.app import Cairn
from cairn.ingest.limits import MassDelete

SRC = Path(__file__).resolve().parents[2] / "src"

Cli = Callable[..., Any]


def test_deletion_guard_stops_a_run_that_would_empty_a_root(cairn_cmd: Cli, tmp_path: Path) -> None:
    folder = notes_folder(tmp_path / "n", 20)
    db = tmp_path / "i.db"
    with Cairn.open(db=db) as c:
        c.index([folder])
    for p in list(folder.iterdir())[:15]:
        p.unlink()
    res = cairn_cmd("--db", str(db), "index")
    assert res.code == 2 and "--allow-mass-delete" in res.stderr
    with Cairn.open(db=db) as c:
        assert c.stats().documents == 20  # nothing dropped
        with pytest.raises(MassDelete):
            c.index()
    res = cairn_cmd("--db", str(db), "index", "--allow-mass-delete")
    assert res.code == 0, res.stderr
    with Cairn.open(db=db) as c:
        assert c.stats().documents == 5


def test_a_failed_run_is_recorded_as_such(tmp_path: Path) -> None:
    folder = notes_folder(tmp_path / "n", 20)
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([folder])
        for p in list(folder.iterdir())[:15]:
            p.unlink()
        with pytest.raises(MassDelete):
            c.index()
        refused = c.stats().last_run  # recorded as a run that did not finish
        assert refused.finished is None and "--allow-mass-delete" in refused.failures[0].reason
        c.index(allow_mass_delete=True)
        last = c.stats().last_run
        assert last.finished is not None and last.removed == 15


def test_an_interrupted_run_stays_visible_as_unfinished(tmp_path: Path) -> None:
    folder = notes_folder(tmp_path / "n", 80)
    db = tmp_path / "i.db"
    code = (
        "import os, threading; from cairn.app import Cairn\n"
        f"c = Cairn.open(db={str(db)!r})\n"
        "def progress(done, total, rel):\n"
        "    if done == 40: os.kill(os.getpid(), 9)\n"
        f"c.index([{str(folder)!r}], progress=progress, embed=False)\n"
    )
    subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(SRC), "CAIRN_EMBED": "none", "CAIRN_WORKERS": "1"},
        timeout=120,
    )
    with Cairn.open(db=db) as c:
        assert c.stats().last_run.finished is None
        assert c.notes.check() == []
        run = c.index()
        assert run.failed == 0 and c.stats().documents == 80


def test_chunks_of_a_no_embed_run_are_embedded_by_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "static")
    folder = notes_folder(tmp_path / "n")
    db = tmp_path / "i.db"
    with Cairn.open(db=db) as c:
        c.index([folder])
    (folder / "note 0.md").write_text("# Note 0\n\nnew words azurite\n", "utf-8")
    with Cairn.open(db=db) as c:
        c.index(embed=False)  # chunks the change (the index holds vectors), no model
    with Cairn.open(db=db) as c:
        run = c.index()  # nothing changed on disk: the missing vector is still made
        assert run.embedding is not None and run.embedding.embedded >= 1
        vs = c.store.vectors
        assert all(vs.missing_vectors(s.space) == 0 for s in vs.spaces())


def test_a_watcher_batch_that_needs_a_full_run_reports_its_counts(tmp_path: Path) -> None:
    """A deleted folder makes a full run; the batch reports that run's counts, not
    those of a second, empty run (``removed`` 0 in ``cairn watch --json``)."""
    root = garden_vault(tmp_path / "v")
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([root], embed=False)
        shutil.rmtree(root / "plants")
        done = c.runs.apply_changes([str(root / "plants")], embed=False)
        assert done is not None and done.full
        assert (done.run.removed, done.run.unchanged) == (2, 1)
        assert [d.path for d in c.store.documents_of_root(c.roots()[0].id)] == [
            "kitchen/bread.md"]

