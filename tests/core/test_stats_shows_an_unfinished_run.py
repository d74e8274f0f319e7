"""``cairn stats`` on an index whose last run did not finish (killed, interrupted, or
still going) says so, instead of printing a finish time of ``None`` and zero counts."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.interfaces.cli import app
from cairn.model.core import Failure, Run


def _index_then_start_a_run(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Alpha\n\nbody\n", encoding="utf-8")
    db = tmp_path / "index.db"
    with Cairn.open(db=db) as cairn:
        cairn.index([notes], embed=False)
        # what a run leaves when it is killed after recording its start
        with cairn.store.transaction():
            cairn.store.save_run(
                Run(id="r-unfinished", started="2099-01-01T00:00:00Z", finished=None,
                    config_hash="", failures=(Failure("", "run stopped: interrupted"),))
            )
    return db


def test_stats_says_the_last_run_did_not_finish(tmp_path: Path) -> None:
    db = _index_then_start_a_run(tmp_path)
    res = CliRunner().invoke(app, ["stats", "--db", str(db)])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "last run started 2099-01-01T00:00:00Z and did not finish" in text
    assert "run stopped: interrupted" in text
    assert "last run None" not in text


def test_stats_json_keeps_the_unfinished_run_as_recorded(tmp_path: Path) -> None:
    db = _index_then_start_a_run(tmp_path)
    res = CliRunner().invoke(app, ["stats", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    run = json.loads(res.output)["last_run"]
    assert run["id"] == "r-unfinished" and run["finished"] is None
