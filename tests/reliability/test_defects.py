"""Regression tests of the defects the reliability probe found (issue 11), each through
the public API or the real CLI, on real files and a real index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.errors import CairnError, StoreError
from cairn.ingest.limits import MassDelete
from cairn.store.lock import IndexBusy

SRC = Path(__file__).resolve().parents[2] / "src"


def _cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    e = {**os.environ, "PYTHONPATH": str(SRC), "CAIRN_EMBED": "none", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "cairn.interfaces.cli", *args],
        capture_output=True,
        text=True,
        env=e,
        timeout=timeout,
    )


def _notes(folder: Path, n: int = 5) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"note {i}.md").write_text(f"# Note {i}\n\ngood words {i} lapis\n", "utf-8")
    return folder


def test_a_file_name_with_invalid_utf8_is_reported_and_the_rest_indexed(tmp_path: Path) -> None:
    folder = _notes(tmp_path / "n")
    bad = os.fsencode(folder) + b"/bad\xff.md"
    with open(bad, "wb") as fh:
        fh.write(b"# Bad name\n")
    with Cairn.open(db=tmp_path / "i.db") as c:
        run = c.index([folder])
        assert run.added == 5
        warned = [w for w in run.warnings if "not valid UTF-8" in w.message]
        assert warned and warned[0].path == "bad\\xff.md"
    res = _cli("--db", str(tmp_path / "j.db"), "index", str(folder), "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["added"] == 5
    assert any(w["path"] == "bad\\xff.md" for w in data["warnings"])


def test_a_note_replaced_by_a_fifo_does_not_block(tmp_path: Path) -> None:
    from cairn.sources import SourceFile, read_bytes

    fifo = tmp_path / "note.md"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    out = read_bytes(SourceFile(fifo, "note.md", 0, 0.0))
    assert time.monotonic() - t0 < 1
    assert not isinstance(out, bytes) and "not a regular file" in out.reason


def test_fifos_sockets_and_dangling_links_in_a_folder(tmp_path: Path) -> None:
    import socket

    folder = _notes(tmp_path / "n")
    os.mkfifo(folder / "pipe.md")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "sock.md"))
    os.symlink(folder / "missing.md", folder / "dangling.md")
    os.symlink(folder / "loop.md", folder / "loop.md")
    with Cairn.open(db=tmp_path / "i.db") as c:
        run = c.index([folder])
    sock.close()
    assert run.added == 5
    paths = {w.path for w in run.warnings}
    assert {"dangling.md", "loop.md"} <= paths


def test_two_writers_on_a_brand_new_index(tmp_path: Path) -> None:
    folder = _notes(tmp_path / "n", 30)
    db = tmp_path / "new.db"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cairn.interfaces.cli",
                "--db",
                str(db),
                "index",
                str(folder),
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(SRC), "CAIRN_EMBED": "none"},
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    codes = sorted(p.returncode for p in procs)
    errors = [
        json.loads(o)["error"] for (o, _e), p in zip(outs, procs, strict=True) if p.returncode
    ]
    assert codes[0] == 0  # one wrote
    for e in errors:  # the other was told another writer is at work, never "damaged"
        assert "another cairn process is writing" in e and "damaged" not in e
        assert "already exists" not in e
    with Cairn.open(db=db) as c:
        assert c.stats()["documents"] == 30 and c.check() == []


def test_a_second_writer_is_refused_or_waits(tmp_path: Path) -> None:
    folder = _notes(tmp_path / "n")
    db = tmp_path / "i.db"
    holder = Cairn.open(db=db)
    holder.index([folder])
    with holder.writing():
        res = _cli("--db", str(db), "index")
        assert res.returncode == 2
        assert "another cairn process is writing this index" in res.stderr
        assert "damaged" not in res.stderr and "--wait" in res.stderr
        with Cairn.open(db=db) as other:
            with pytest.raises(IndexBusy):
                other.index()
            assert other.search("lapis", mode="keyword").hits  # readers never block
        waiting = subprocess.Popen(
            [sys.executable, "-m", "cairn.interfaces.cli", "--db", str(db), "index", "--wait"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(SRC), "CAIRN_EMBED": "none"},
        )
        assert waiting.stderr is not None
        first = ""
        while "waiting" not in first:  # blocks until the waiter reports (however slow)
            line = waiting.stderr.readline()
            assert line, first  # EOF before "waiting": the waiter did not wait
            first += line
        assert waiting.poll() is None  # still waiting for the lock
    _out, err = waiting.communicate(timeout=60)
    holder.close()
    assert waiting.returncode == 0, first + err


def test_the_lock_is_released_when_the_writer_dies(tmp_path: Path) -> None:
    folder = _notes(tmp_path / "n")
    db = tmp_path / "i.db"
    code = (
        "import os, sys; from cairn.app import Cairn\n"
        f"c = Cairn.open(db={str(db)!r}); c.index([{str(folder)!r}])\n"
        "c.writer_lock.acquire(); print('held', flush=True); os.kill(os.getpid(), 9)\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=60,
    )
    assert "held" in res.stdout
    with Cairn.open(db=db) as c:
        assert c.index().failed == 0  # no stale lock


def test_a_read_only_index_gives_one_clear_message(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores file permissions")
    folder = _notes(tmp_path / "n")
    db = tmp_path / "ro" / "i.db"
    with Cairn.open(db=db) as c:
        c.index([folder])
    os.chmod(db.parent, 0o555)
    os.chmod(db, 0o444)
    try:
        (folder / "new.md").write_text("# New\n", "utf-8")
        res = _cli("--db", str(db), "index")
        assert res.returncode == 2 and "read-only" in res.stderr
        assert "Traceback" not in res.stderr
    finally:
        os.chmod(db.parent, 0o755)
        os.chmod(db, 0o644)


def test_deletion_guard_stops_a_run_that_would_empty_a_root(tmp_path: Path) -> None:
    folder = _notes(tmp_path / "n", 20)
    db = tmp_path / "i.db"
    with Cairn.open(db=db) as c:
        c.index([folder])
    for p in list(folder.iterdir())[:15]:
        p.unlink()
    res = _cli("--db", str(db), "index")
    assert res.returncode == 2 and "--allow-mass-delete" in res.stderr
    with Cairn.open(db=db) as c:
        assert c.stats()["documents"] == 20  # nothing dropped
        with pytest.raises(MassDelete):
            c.index()
    res = _cli("--db", str(db), "index", "--allow-mass-delete")
    assert res.returncode == 0, res.stderr
    with Cairn.open(db=db) as c:
        assert c.stats()["documents"] == 5


def test_a_failed_run_is_recorded_as_such(tmp_path: Path) -> None:
    folder = _notes(tmp_path / "n", 20)
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([folder])
        for p in list(folder.iterdir())[:15]:
            p.unlink()
        with pytest.raises(MassDelete):
            c.index()
        refused = c.stats()["last_run"]  # recorded as a run that did not finish
        assert refused.finished is None and "--allow-mass-delete" in refused.failures[0].reason
        c.index(allow_mass_delete=True)
        last = c.stats()["last_run"]
        assert last.finished is not None and last.removed == 15


def test_an_interrupted_run_stays_visible_as_unfinished(tmp_path: Path) -> None:
    folder = _notes(tmp_path / "n", 80)
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
        assert c.stats()["last_run"].finished is None
        assert c.check() == []
        run = c.index()
        assert run.failed == 0 and c.stats()["documents"] == 80


def test_chunks_of_a_no_embed_run_are_embedded_by_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "static")
    folder = _notes(tmp_path / "n")
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


def test_partial_export_and_skipped_files_are_named_by_the_cli(tmp_path: Path) -> None:
    folder = _notes(tmp_path / "n", 2)
    (folder / "data.json").write_text('{"not": "an export"}', "utf-8")
    res = _cli("--db", str(tmp_path / "i.db"), "index", str(folder))
    assert res.returncode == 0, res.stderr
    assert "skipped data.json" in res.stdout


def test_a_parse_over_the_time_limit_is_reported_and_the_rest_indexed(tmp_path: Path) -> None:
    folder = _notes(tmp_path / "n")
    (folder / "deep.org").write_text("".join("*" * i + " h\n" for i in range(1, 4001)), "utf-8")
    cfg = tmp_path / "cairn.toml"
    cfg.write_text("[index]\nfile_seconds = 0.05\n", "utf-8")
    with Cairn.open(db=tmp_path / "i.db", config_file=cfg) as c:
        run = c.index([folder])
    assert run.added >= 5
    slow = [f for f in run.failures if f.path == "deep.org"]
    assert not slow or "file_seconds" in slow[0].reason


def test_a_file_over_the_size_limit_is_reported_unread(tmp_path: Path) -> None:
    folder = _notes(tmp_path / "n")
    (folder / "big.md").write_bytes(b"# Big\n" + b"x" * 2_000_000)
    cfg = tmp_path / "cairn.toml"
    cfg.write_text("[index]\nmax_file_mb = 1\n", "utf-8")
    with Cairn.open(db=tmp_path / "i.db", config_file=cfg) as c:
        run = c.index([folder])
    assert run.added == 5
    reason = next(f.reason for f in run.failures if f.path == "big.md")
    assert reason.startswith("file is 1.9 MiB")


def test_bad_index_settings_are_config_errors(tmp_path: Path) -> None:
    cfg = tmp_path / "cairn.toml"
    cfg.write_text("[index]\nmass_delete_share = 2\n", "utf-8")
    with pytest.raises(CairnError, match="mass_delete_share"):
        Cairn.open(db=tmp_path / "i.db", config_file=cfg)
    cfg.write_text("[watch]\npoll = 'yes'\n", "utf-8")
    from cairn.config import load_config
    from cairn.interfaces.watch import WatchSettings

    with pytest.raises(CairnError, match="poll"):
        WatchSettings.from_mapping(load_config(config_file=cfg).watch)


def test_nfc_and_nfd_names_find_the_same_note(tmp_path: Path) -> None:
    import unicodedata

    folder = tmp_path / "n"
    folder.mkdir()
    nfd = unicodedata.normalize("NFD", "Café.md")
    (folder / nfd).write_text("# Café\n\nespresso\n", "utf-8")
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([folder])
        nfc = unicodedata.normalize("NFC", "Café.md")
        assert c.show(nfc).kind == "document"
        assert c.show(str(folder / nfc)).kind == "document"


def test_store_errors_never_escape_as_backend_errors(tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    db.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreError):
        Cairn.open(db=db).index([_notes(tmp_path / "n")])


def test_readers_never_see_a_half_applied_file(tmp_path: Path) -> None:
    folder = tmp_path / "n"
    folder.mkdir()
    note = folder / "big.md"
    heads = 300

    def write(tag: str) -> None:
        note.write_text("".join(f"# H{i}\n\n{tag} body {i}\n\n" for i in range(heads)), "utf-8")

    write("alpha")
    db = tmp_path / "i.db"
    with Cairn.open(db=db) as c:
        c.index([folder])
    stop = threading.Event()
    seen: set[int] = set()
    errors: list[BaseException] = []

    def read() -> None:
        try:
            with Cairn.open(db=db) as r:
                while not stop.is_set():
                    docs = r.snapshot().units
                    tags = {u[8].split()[0] for u in docs if u[8]}
                    seen.add(len(tags))
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=read)
    t.start()
    with Cairn.open(db=db) as c:
        for i in range(6):
            write(("beta", "gamma")[i % 2])
            c.index()
    stop.set()
    t.join()
    assert not errors
    assert seen == {1}  # every unit of the file from one version, never a mix


def test_a_full_disk_ends_the_run_with_one_clear_message(tmp_path: Path) -> None:
    """A full disk mid-run (simulated by capping the database's pages, which SQLite
    reports exactly as a full disk): one StoreError saying so, nothing half-written,
    the index still answers at its last committed state and passes its checks."""
    import sqlite3 as _sqlite3

    from cairn.config import Config
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
        assert c.check() == []
    raw = _sqlite3.connect(tmp_path / "i.db")
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    raw.close()
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:  # space again: it converges
        run = c.index(embed=False)
        assert run.failed == 0 and c.check() == []
        assert len(c.search("filler", mode="keyword", limit=500).hits) == 300
