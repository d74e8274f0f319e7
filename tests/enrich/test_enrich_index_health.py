"""``cairn enrich`` leaves a sound index: re-runs write no orphan keyword rows, two runs
at once do not corrupt it (one writer at a time, as for indexing), ``cairn check
--repair`` mends the rows an earlier version left, and ``enrich show`` finds a
conversation by id prefix or path. Against the replaying server on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from enrich_replay import ReplayServer, default_reply
from enrich_vault import chatgpt_export, make_vault
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.cli import app

SRC = Path(__file__).resolve().parents[2] / "src"


def _open(db: Path, cfg: Path) -> Cairn:
    return Cairn(load_config(db=db, config_file=cfg, env={"CAIRN_EMBED": "none"}))


def _indexed(tmp_path: Path, server: ReplayServer, timeout: float = 1.0) -> tuple[Path, Path]:
    chats, db, cfg = make_vault(tmp_path, server.url, timeout=timeout)
    with _open(db, cfg) as c:
        c.index([chats, chats.parent / "notes"])
    return db, cfg


def _check(db: Path, cfg: Path, *more: str) -> Any:
    res = CliRunner().invoke(app, ["--config", str(cfg), "check", "--db", str(db), "--json",
                                   *more])
    return res.exit_code, json.loads(res.stdout)


def test_enrich_again_and_again_leaves_no_orphan_keyword_rows(
    tmp_path: Path, server: ReplayServer
) -> None:
    db, cfg = _indexed(tmp_path, server)
    for _ in range(3):
        res = CliRunner().invoke(app, ["--config", str(cfg), "enrich", "--db", str(db)])
        assert res.exit_code == 0, res.output
        assert _check(db, cfg) == (0, {"ok": True, "problems": [], "repaired": []})
    with _open(db, cfg) as c:
        n_units = c.store.db.execute("SELECT count(*) FROM units").fetchone()[0]
        n_text = c.store.db.execute("SELECT count(*) FROM units_fts_text").fetchone()[0]
        assert n_units == n_text
        assert any(h.kind == "insight" for h in c.search("version control", mode="keyword").hits)


def test_check_repair_mends_orphan_rows_an_earlier_version_left(
    tmp_path: Path, server: ReplayServer
) -> None:
    db, cfg = _indexed(tmp_path, server)
    with _open(db, cfg) as c:
        c.enrich.run()
        # what an earlier version's re-run left: the units gone, their text rows kept
        rows = c.store.db.execute(
            "SELECT rowid FROM units WHERE kind IN ('summary', 'insight')").fetchall()
        with c.store.transaction():
            c.store.db.execute("DELETE FROM units_fts WHERE rowid IN "
                               "(SELECT rowid FROM units WHERE kind IN ('summary','insight'))")
            c.store.db.execute("DELETE FROM units WHERE kind IN ('summary', 'insight')")
    code, data = _check(db, cfg)
    assert code == 1 and data["problems"] == [
        f"{len(rows)} FTS rows without a unit (`cairn check --repair`)"]
    code, data = _check(db, cfg, "--repair")
    assert code == 0 and data["ok"], data
    assert data["repaired"] == [f"removed {len(rows)} FTS rows without a unit"]
    assert _check(db, cfg) == (0, {"ok": True, "problems": [], "repaired": []})
    with _open(db, cfg) as c:  # the next enrichment writes its units again
        c.enrich.run()
        assert c.notes.check() == []
        assert c.store.enrichments.counts()["insights"] == 9


def test_a_second_enrich_at_once_is_refused_or_waits_and_the_index_stays_sound(
    tmp_path: Path, server: ReplayServer
) -> None:
    db, cfg = _indexed(tmp_path, server, timeout=60.0)
    gate = threading.Event()

    def held(body: dict[str, Any]) -> str:  # the first run's replies wait for the gate
        gate.wait(60)
        return default_reply(body)

    server.default = held
    env = {**os.environ, "PYTHONPATH": str(SRC), "CAIRN_EMBED": "none"}
    cmd = [sys.executable, "-m", "cairn.interfaces.cli", "--config", str(cfg), "enrich",
           "--db", str(db)]
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env)
    try:
        deadline = time.monotonic() + 60
        while not server.bodies:  # the first run has asked: it holds the lock
            assert first.poll() is None and time.monotonic() < deadline, first.stderr
            time.sleep(0.05)
        res = CliRunner().invoke(app, ["--config", str(cfg), "enrich", "--db", str(db)])
        assert res.exit_code != 0
        assert "another cairn process is writing this index" in res.output
        assert "damaged" not in res.output
        waiting = subprocess.Popen([*cmd, "--wait"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env=env)
        assert waiting.stderr is not None
        told = ""
        while "waiting" not in told:  # the waiter says it waits, then waits
            line = waiting.stderr.readline()
            assert line, told
            told += line
    finally:
        gate.set()
    out1, err1 = first.communicate(timeout=120)
    out2, err2 = waiting.communicate(timeout=120)
    assert first.returncode == 0, err1
    assert waiting.returncode == 0, err2
    assert "3 answered" in out1 and "3 from the cache" in out2
    assert _check(db, cfg) == (0, {"ok": True, "problems": [], "repaired": []})


def test_enrich_show_finds_a_conversation_by_id_prefix_and_by_path(
    tmp_path: Path, server: ReplayServer
) -> None:
    chats, db, cfg = make_vault(tmp_path, server.url)
    single = chats / "single.json"
    single.write_text(json.dumps(chatgpt_export([("c9", "Seed saving", 1.73e9, [
        "How long do tomato seeds keep?", "Dry and cool, about four to six years."])])),
        encoding="utf-8")
    with _open(db, cfg) as c:
        c.index([chats])
        c.enrich.run(relations=False)
        deploy = next(d for d in c.store.documents_by_format(["chatgpt"])
                      if d.title == "Deploy configuration")

    def show(ref: str) -> Any:
        return CliRunner().invoke(app, ["--config", str(cfg), "enrich", "show", ref,
                                        "--db", str(db), "--json"])

    got = show(deploy.id[:8])
    assert got.exit_code == 0, got.output
    assert json.loads(got.stdout)["document_id"] == deploy.id
    got = show(str(single))  # a file of one conversation: the path is enough
    assert got.exit_code == 0, got.output
    assert json.loads(got.stdout)["title"] == "Seed saving"
    # the export holds three enriched conversations: it says so (not "run cairn enrich")
    bare = show(str(chats / "conversations.json"))
    assert bare.exit_code != 0
    assert "3 enriched conversations" in bare.output and "run `cairn enrich`" not in bare.output
    nothing = show("zzzz-no-such")
    assert nothing.exit_code != 0 and "no conversation matches" in nothing.output


def test_without_an_endpoint_the_message_gives_a_config_that_works(
    tmp_path: Path, server: ReplayServer
) -> None:
    chats, db, _ = make_vault(tmp_path, server.url)
    cfg = tmp_path / "bare.toml"
    cfg.write_text('[redact]\non_ingest = "off"\n', encoding="utf-8")
    with _open(db, cfg) as c:
        c.index([chats])
    res = CliRunner().invoke(app, ["--config", str(cfg), "enrich", "--db", str(db)])
    assert res.exit_code == 0 and "nothing was changed" in res.output
    said = res.output
    start = said.index("\n[enrich]\n") + 1
    snippet = said[start: said.index("\n", said.index("model = ", start))]
    assert 'provider = "openai"' in snippet and "http://127.0.0.1:" in snippet
    assert "api_key_env" in said and "llama-server" in said
    # the snippet as printed, pointed at this machine's server, is a working setup
    port = snippet.split("http://127.0.0.1:")[1].split("/")[0]
    cfg.write_text(cfg.read_text() + snippet.replace(f"127.0.0.1:{port}",
                                                     f"127.0.0.1:{server.port}"))
    res = CliRunner().invoke(app, ["--config", str(cfg), "enrich", "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert "3 answered" in res.output and len(server.bodies) >= 3
