"""Backups are pruned by a documented policy (``[writeback] keep_days`` and
``keep_per_file``): before, every dream/decay cycle added a copy of every file it
touched and nothing ever removed one."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn.config import load_config
from cairn.errors import ConfigError
from cairn.interfaces.cli import app as cli
from cairn.writeback import Backups, sha256_bytes, write_file


def _edit(path: Path, n: int, backups: Backups, text: str = "version") -> None:
    for i in range(n):
        old = path.read_bytes() if path.exists() else None
        write_file(path, f"{text} {i}\n".encode(), backups=backups,
                   expected_sha256=None if old is None else sha256_bytes(old))


def test_keep_per_file_and_the_newest_copy(tmp_path: Path) -> None:
    b = Backups(tmp_path / "bk")
    a, c = tmp_path / "a.md", tmp_path / "c.md"
    _edit(a, 16, b)  # 15 backups of a.md (the first write replaced nothing)
    _edit(c, 3, b)  # 2 of c.md
    assert len(b.list(a)) == 15 and len(b.list(c)) == 2
    newest = [x.id for x in b.list(a)][-4:]
    dry = b.prune(keep_days=0, keep_per_file=4, dry_run=True)
    assert len(dry.removed) == 11 and dry.dry_run and len(b.list()) == 17
    done = b.prune(keep_days=0, keep_per_file=4)
    assert [x.id for x in done.removed] == [x.id for x in dry.removed]
    assert [x.id for x in b.list(a)] == newest and len(b.list(c)) == 2 and done.kept == 6
    assert done.freed_bytes > 0
    live = {x.sha256 for x in b.list()}
    assert {o.name for o in (b.folder / "objects").iterdir()} == live
    for x in b.list():
        assert b.read(x)  # every kept backup still has its bytes
    b.restore(newest[0])
    assert a.read_bytes() == b"version 11\n"


def test_keep_days_keeps_the_newest_copy_of_each_file(tmp_path: Path) -> None:
    b = Backups(tmp_path / "bk")
    a, c = tmp_path / "a.md", tmp_path / "c.md"
    _edit(a, 4, b)
    _edit(c, 2, b, text="same")  # one backup
    later = datetime.now(UTC) + timedelta(days=31)
    assert len(b.prune(keep_days=30, keep_per_file=0, now=later - timedelta(days=2)).removed) == 0
    gone = b.prune(keep_days=30, keep_per_file=0, now=later)
    assert len(gone.removed) == 2 and [x.path for x in b.list()] == [a, c]
    assert b.prune(keep_days=30, keep_per_file=1, now=later).removed == ()


def test_an_object_shared_with_a_kept_backup_stays(tmp_path: Path) -> None:
    b = Backups(tmp_path / "bk")
    a, c = tmp_path / "a.md", tmp_path / "c.md"
    for p in (a, c):
        p.write_bytes(b"same bytes\n")
    b.save(a, b"same bytes\n")
    _edit(a, 2, b)
    b.save(c, b"same bytes\n")
    b.prune(keep_days=0, keep_per_file=1)
    kept = b.list()
    assert all(b.read(x) for x in kept) and {x.path for x in kept} == {a, c}


def test_config_keys_and_cli(tmp_path: Path) -> None:
    cfg = tmp_path / "cairn.toml"
    cfg.write_text("[writeback]\nkeep_days = 7\nkeep_per_file = 2\n")
    c = load_config(db=tmp_path / "i.db", config_file=cfg)
    assert (c.backup_keep_days, c.backup_keep_per_file) == (7.0, 2)
    assert (load_config(db=tmp_path / "i.db").backup_keep_per_file) == 10
    for bad in ("keep_days = -1", "keep_per_file = 2.5", 'keep_days = "a week"'):
        cfg.write_text(f"[writeback]\n{bad}\n")
        with pytest.raises(ConfigError, match=r"\[writeback\] keep_"):
            load_config(db=tmp_path / "i.db", config_file=cfg)
    cfg.write_text("[writeback]\nkeep_per_file = 2\n")
    notes = tmp_path / "notes"
    notes.mkdir()
    assert CliRunner().invoke(cli, ["--db", str(tmp_path / "i.db"), "index", "-q",
                                    "--no-embed", str(notes)]).exit_code == 0
    backups = Backups(load_config(db=tmp_path / "i.db", config_file=cfg).backup_folder)
    _edit(notes / "n.md", 6, backups)
    args = ["--db", str(tmp_path / "i.db"), "--config", str(cfg), "restore", "--prune"]
    r = CliRunner().invoke(cli, [*args, "--dry-run", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert len(data["removed"]) == 3 and data["kept"] == 2 and data["dry_run"] is True
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0 and "removed 3 backups" in r.stdout, r.output
    assert len(backups.list()) == 2


def test_memory_decay_prunes_what_it_backs_up(tmp_path: Path) -> None:
    from cairn.app import Cairn
    from cairn.config import Config

    bundle = tmp_path / "mem"
    with Cairn(Config(db_path=tmp_path / "i.db", backup_keep_per_file=2)) as c:
        for text, tag in (("The build needs Python 3.12 on the runner", "build"),
                          ("Deploys happen on Tuesdays after the release review", "deploy")):
            c.memory.remember(bundle, text, tags=[tag])
        c.memory.consolidate(bundle)
        touched = 0
        for _ in range(5):
            touched += len(c.memory.maintain(bundle).changed)
        every = c.maintain.list_backups()
        assert touched > 4 and every  # decay rewrote concepts, each backed up first
        per_file: dict[Path, int] = {}
        for b in every:
            per_file[b.path] = per_file.get(b.path, 0) + 1
        assert max(per_file.values()) <= 2, per_file
