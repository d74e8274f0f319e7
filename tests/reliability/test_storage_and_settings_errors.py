"""Storage and settings errors end in one clear message naming the file and what to do:
a read-only index or medium (where reads still answer), a full disk, a file that is
not an index, a folder given as the index, a bad setting (refused before the run),
``enrich`` without a model. The CLI runs in process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _reliability import garden_vault, notes_folder

from cairn.app import Cairn
from cairn.config import Config, load_config
from cairn.errors import CairnError, ConfigError, StoreError
from cairn.store import open_store

Cli = Callable[..., Any]


def _mount_tmpfs(where: Path) -> bool:
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("mount"):
        return False
    where.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(where)],
                         capture_output=True)
    return res.returncode == 0


def test_a_read_only_index_gives_one_clear_message(cairn_cmd: Cli, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores file permissions")
    folder = notes_folder(tmp_path / "n")
    db = tmp_path / "ro" / "i.db"
    with Cairn.open(db=db) as c:
        c.index([folder])
    os.chmod(db.parent, 0o555)
    os.chmod(db, 0o444)
    try:
        (folder / "new.md").write_text("# New\n", "utf-8")
        res = cairn_cmd("--db", str(db), "index")
        assert res.code == 2 and "read-only" in res.stderr
        assert "Traceback" not in res.stderr
    finally:
        os.chmod(db.parent, 0o755)
        os.chmod(db, 0o644)


def test_an_index_on_read_only_media_answers_reads(cairn_cmd: Cli, tmp_path: Path) -> None:
    """SQLite cannot make a WAL-mode index's ``-shm`` file on a read-only file system,
    yet reads answer there, checks pass, and a write says the index is read-only (not
    "unable to open database file", not "damaged")."""
    media = tmp_path / "media"
    if not _mount_tmpfs(media):
        pytest.skip("needs root and mount to make a read-only file system")
    try:
        root = garden_vault(tmp_path / "v")
        db = media / "i.db"
        with Cairn.open(db=db) as c:
            c.index([root], embed=False)
        subprocess.run(["mount", "-o", "remount,ro", str(media)], check=True)
        with Cairn.open(db=db) as c:
            assert [h.title for h in c.search("compost", mode="keyword").hits] == ["Compost"]
            assert c.store.integrity_check() == []
        res = cairn_cmd("--db", str(db), "search", "sourdough", "--mode", "keyword", "--json")
        assert res.code == 0, res.stderr
        assert json.loads(res.stdout)["hits"][0]["title"] == "Sourdough"
        assert cairn_cmd("--db", str(db), "check").code == 0
        res = cairn_cmd("--db", str(db), "index", "--no-embed")
        assert res.code == 2 and "read-only" in res.stderr
        assert "damaged" not in res.stderr
    finally:
        subprocess.run(["umount", "-l", str(media)], capture_output=True)


def test_a_full_disk_ends_the_run_with_one_clear_message(tmp_path: Path) -> None:
    """A full disk mid-run (simulated by capping the database's pages, which SQLite
    reports exactly as a full disk): one StoreError saying so, nothing half-written,
    the index still answers at its last committed state and passes its checks."""
    import sqlite3 as _sqlite3

    from cairn.errors import StoreError

    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_text("# Alpha\n\nalpha body\n")
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        for i in range(300):
            (root / f"n{i}.md").write_text(f"# Note {i}\n\n" + "filler text " * 400)
        pages = c.store.db.execute("PRAGMA page_count").fetchone()[0]  # type: ignore[attr-defined]
        c.store.db.execute(f"PRAGMA max_page_count = {pages + 20}")  # type: ignore[attr-defined]
        with pytest.raises(StoreError) as exc:
            c.index(embed=False)
        assert "full" in str(exc.value) and "free some disk space" in str(exc.value)
        assert [h.path for h in c.search("alpha", mode="keyword").hits] == ["a.md"]
        assert c.notes.check() == []
    raw = _sqlite3.connect(tmp_path / "i.db")
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    raw.close()
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:  # space again: it converges
        run = c.index(embed=False)
        assert run.failed == 0 and c.notes.check() == []
        assert len(c.search("filler", mode="keyword", limit=500).hits) == 300


def test_store_errors_never_escape_as_backend_errors(tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    db.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreError):
        Cairn.open(db=db).index([notes_folder(tmp_path / "n")])


def test_a_folder_given_as_the_index_says_so(cairn_cmd: Cli, tmp_path: Path) -> None:
    with pytest.raises(StoreError) as exc:
        open_store(tmp_path)
    assert str(tmp_path) in str(exc.value) and "a folder, not an index file" in str(exc.value)
    res = cairn_cmd("--db", str(tmp_path), "index", str(tmp_path))
    assert res.code == 2 and "a folder, not an index file" in res.stderr
    assert list(tmp_path.iterdir()) == []  # nothing was made in it


def test_bad_index_settings_are_config_errors(tmp_path: Path) -> None:
    cfg = tmp_path / "cairn.toml"
    cfg.write_text("[index]\nmass_delete_share = 2\n", "utf-8")
    with pytest.raises(CairnError, match="mass_delete_share"):
        Cairn.open(db=tmp_path / "i.db", config_file=cfg)
    cfg.write_text("[watch]\npoll = 'yes'\n", "utf-8")
    from cairn.config import load_config
    from cairn.serving.watch import WatchSettings

    with pytest.raises(CairnError, match="poll"):
        WatchSettings.from_mapping(load_config(config_file=cfg).watch)


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ('[fusion]\nmethod = "bogus"\n', "[fusion] method"),
        ('[index]\nmax_file_mb = "x"\n', "[index] max_file_mb must be a number, not 'x'"),
        ('[chunking]\ndefault_profile = "nope"\n', "[chunking] default_profile 'nope'"),
        ("[serve]\nport = 99999\n", "[serve] port must be a TCP port"),
        ("[mcp]\nport = 70000\n", "[mcp] port must be a TCP port"),
        ("[search]\nlimit = 0\n", "[search] limit must be 1 or more"),
    ],
)
def test_a_bad_setting_is_refused_before_the_run_naming_the_file(
    cairn_cmd: Cli,
    tmp_path: Path, toml: str, says: str
) -> None:
    """Every section's check names the file, ``[chunking]`` is checked before any file
    is indexed, and ``port = 99999`` is refused (not served on another port)."""
    cfg = tmp_path / "cairn.toml"
    cfg.write_text(toml, "utf-8")
    root = garden_vault(tmp_path / "v")
    db = tmp_path / "i.db"
    with pytest.raises(ConfigError) as err, Cairn(load_config(db=db, config_file=cfg)) as c:
        c.index([root], embed=False)
    assert str(err.value).startswith(f"{cfg}: ") and says in str(err.value)
    res = cairn_cmd("--config", str(cfg), "--db", str(db), "index", str(root))
    assert res.code == 2 and str(cfg) in res.stderr.replace("\n", "")
    assert not db.exists() or "0 documents" in cairn_cmd("--db", str(db), "stats").stdout


def test_enrich_without_a_model_names_the_section(cairn_cmd: Cli, tmp_path: Path) -> None:
    root = garden_vault(tmp_path / "v")
    db = tmp_path / "i.db"
    assert cairn_cmd("--db", str(db), "index", str(root)).code == 0
    res = cairn_cmd("--db", str(db), "enrich")
    said = res.stdout.replace("\n", " ")
    assert res.code == 0 and "no [enrich] provider in cairn.toml" in said

