"""``cairn enrich --json`` reports its progress as JSON events on standard error (time
left included); standard output holds only the report. Against the replaying server."""

from __future__ import annotations

import json
import re
from pathlib import Path

from enrich_replay import ReplayServer
from enrich_vault import make_vault
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.cli import app


def test_enrich_json_writes_progress_events_and_plain_lines_give_the_time_left(
    tmp_path: Path, server: ReplayServer
) -> None:
    chats, db, cfg = make_vault(tmp_path, server.url)
    with Cairn(load_config(db=db, config_file=cfg, env={"CAIRN_EMBED": "none"})) as c:
        assert c.index([chats, chats.parent / "notes"]).added == 2
    res = CliRunner().invoke(app, ["--config", str(cfg), "enrich", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["answered"] == 3
    events = [json.loads(x) for x in res.stderr.splitlines() if x.startswith("{")]
    assert events and all(e["event"] == "progress" for e in events), res.stderr
    last = events[-1]
    assert (last["phase"], last["unit"], last["done"], last["total"]) == (
        "enrich", "conversations", 3, 3)
    assert last["eta_s"] == last["eta_low_s"] == last["eta_high_s"] == 0.0

    plain = CliRunner().invoke(app, ["--config", str(cfg), "enrich", "--db", str(db),
                                     "--retry-invalid"])
    assert plain.exit_code == 0, plain.output
    assert re.search(r"^enrich: 3/3 \(\d+ s, ETA 0 s\) ", plain.stderr, re.M), plain.stderr
