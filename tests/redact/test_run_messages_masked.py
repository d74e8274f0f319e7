"""A parser's warning that quotes a conversation title is masked wherever a run's
messages go: the run returned and printed, the ``runs`` and ``files`` tables (and so
``cairn stats``, ``/v1/stats``), the index file's bytes; and the HTTP log masks what it
writes. Chats are masked by default; with every ``on_ingest`` mode ``off`` nothing is."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from _chat_leaks import KEY, MAIL, ApiServer, broken_exports
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.cli import app


def _open(db: Path, cfg: Path) -> Cairn:
    return Cairn(load_config(db=db, config_file=cfg, env={"CAIRN_EMBED": "none"}))


def _db_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(db.parent.glob(db.name + "*")) if p.is_file())


def test_warnings_quoting_a_secret_title_are_masked_everywhere_they_go(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    chats = broken_exports(tmp_path / "chats")
    cfg = tmp_path / "cairn.toml"
    cfg.write_text("", encoding="utf-8")  # the defaults: chats masked
    db = tmp_path / "i.db"
    res = CliRunner().invoke(app, ["--config", str(cfg), "index", str(chats), "--db", str(db),
                                   "--no-embed"])
    assert res.exit_code == 0, res.output
    printed = res.output
    assert "[SECRET:openai-key#1]" in printed and "[PII:email#1]" in printed  # it was said
    res = CliRunner().invoke(app, ["--config", str(cfg), "index", str(chats), "--db", str(db),
                                   "--no-embed", "--json"])
    printed += res.output
    res = CliRunner().invoke(app, ["--config", str(cfg), "stats", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    printed += res.output
    with _open(db, cfg) as c:
        run = c.store.last_run()
        assert run is not None and run.warnings
        rows = [tuple(r) for t in ("runs", "files")
                for r in c.store.db.execute(f"SELECT * FROM {t}")]
        with ApiServer(c) as url, caplog.at_level(logging.INFO, logger="cairn.http"):
            stats = httpx.get(f"{url}/v1/stats", timeout=30)
            missing = httpx.get(f"{url}/v1/units/{KEY}", timeout=30)  # the log names it
        assert stats.status_code == 200 and missing.status_code == 404
    logged = "\n".join(r.getMessage() for r in caplog.records)
    everything = "\n".join([printed, json.dumps(rows, default=str), stats.text, logged])
    assert "no message mapping" in everything and "truncated JSON" in everything
    for secret in (KEY, MAIL):
        assert secret not in everything
        assert secret.encode() not in _db_bytes(db)


def test_with_every_mode_off_the_warning_is_kept_as_written(tmp_path: Path) -> None:
    chats = broken_exports(tmp_path / "chats")
    cfg = tmp_path / "cairn.toml"
    cfg.write_text('[redact]\non_ingest = "off"\n', encoding="utf-8")
    with _open(tmp_path / "i.db", cfg) as c:
        run = c.index([chats], embed=False)
    said = " ".join(w.message for w in run.warnings)
    assert KEY in said and MAIL in said


def test_a_run_record_masks_whatever_on_ingest_masks_for_any_format(tmp_path: Path) -> None:
    chats = broken_exports(tmp_path / "chats")
    cfg = tmp_path / "cairn.toml"
    cfg.write_text('[redact]\non_ingest = { chats = "off", notes = "mask" }\n', encoding="utf-8")
    with _open(tmp_path / "i.db", cfg) as c:
        run: Any = c.index([chats], embed=False)
    said = " ".join(w.message for w in run.warnings)
    assert "truncated JSON" in said and KEY not in said and MAIL not in said


class _Broken(Cairn):
    def stats(self) -> dict[str, Any]:
        raise RuntimeError(f"could not read the key {KEY} of {MAIL}")


def test_a_server_error_log_line_masks_what_the_traceback_quotes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = tmp_path / "cairn.toml"
    cfg.write_text("", encoding="utf-8")
    with Cairn(load_config(db=tmp_path / "i.db", config_file=cfg,
                           env={"CAIRN_EMBED": "none"})) as c:
        broken = _Broken(c.config, store=c.store)
        with ApiServer(broken) as url, caplog.at_level(logging.INFO, logger="cairn.http"):
            r = httpx.get(f"{url}/v1/stats", timeout=30)
    assert r.status_code == 500
    logged = "\n".join(rec.getMessage() for rec in caplog.records)
    assert r.json()["id"] in logged and "could not read the key" in logged
    assert KEY not in logged and MAIL not in logged and "[SECRET:openai-key#1]" in logged
