"""``cairn watch --json`` reports its catch-up run as progress events on standard error
(standard output keeps its stream of ``ready`` and ``batch`` events)."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest
from _served import Served, cli_env

pytest.importorskip("watchfiles")

SAMPLE = Path(__file__).resolve().parents[2] / "sample"


def _events(lines: list[str]) -> list[dict[str, object]]:
    return [json.loads(x) for x in lines if x.startswith('{"event": "progress"')]


def test_watch_json_catch_up_writes_progress_events(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "sample")
    db = tmp_path / "i.db"
    w = Served(db, "watch", "--json", str(tmp_path / "sample"), env=cli_env(db))
    try:
        w.wait_line('"done": 12, "total": 12', timeout=120)
        code = w.stop(signal.SIGTERM, timeout=60)
    finally:
        w.kill_all()
    assert code == 0, w.log[-3000:]
    last = _events(w.lines)[-1]
    assert last["phase"] == "index" and last["unit"] == "files"
    assert (last["eta_s"], last["eta_low_s"], last["eta_high_s"]) == (0.0, 0.0, 0.0)

