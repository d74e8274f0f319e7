"""The watcher outlives a transient error and stops on a fatal one: ``cairn watch`` as
a real process while another SQLite writer holds the index for longer than the
watcher's busy wait (the batch is retried once the index is free, the change becomes
searchable, the process still watches); work run between batches that fails; the
index file deleted under the watcher (it stops, saying so)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _reliability import Watching

from cairn.app import Cairn
from cairn.errors import StoreError

SRC = Path(__file__).resolve().parents[2] / "src"


def _start_watch(folder: Path, db: Path) -> tuple[subprocess.Popen[str], list[str]]:
    """``cairn watch FOLDER --json`` in a process; its stderr lines collected."""
    path = os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cairn.interfaces.cli", "watch", str(folder), "--db", str(db),
         "--json", "--no-embed"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        cwd=folder.parent,
    )
    errors: list[str] = []

    def drain() -> None:
        assert proc.stderr is not None
        errors.extend(proc.stderr)

    threading.Thread(target=drain, daemon=True).start()
    return proc, errors


def _wait_ready(proc: subprocess.Popen[str], lines: list[dict[str, object]]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        lines.append(event)
        if event.get("event") == "ready":
            break
    else:
        raise AssertionError(f"the watcher ended before it was ready: {proc.wait()}")

    def rest() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(json.loads(line))

    threading.Thread(target=rest, daemon=True).start()


def _hits(db: Path, word: str) -> list[str]:
    with Cairn.open(db=db, create=False) as c:
        return [h.path for h in c.search(word, mode="keyword").hits]


@pytest.mark.slow
def test_watch_retries_a_batch_while_another_writer_holds_the_index(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "first.md").write_text("# First\n\nalpha note\n", encoding="utf-8")
    db = tmp_path / "i.db"
    proc, stderr = _start_watch(folder, db)
    events: list[dict[str, object]] = []
    try:
        _wait_ready(proc, events)
        time.sleep(0.5)  # the OS watch is set up right after the catch-up run
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")  # every other writer waits, then gets "locked"
        try:
            (folder / "second.md").write_text("# Second\n\nbasaltic newcomer\n",
                                             encoding="utf-8")
            # longer than the watcher's SQLite busy wait (5 s): its batch fails
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not any(
                e.get("error") for e in events
            ):
                assert proc.poll() is None, "".join(stderr)
                time.sleep(0.2)
            assert any("locked" in str(e.get("error")) for e in events), (events, stderr)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _hits(db, "basaltic"):
            assert proc.poll() is None, "".join(stderr)
            time.sleep(0.3)
        assert _hits(db, "basaltic") == ["second.md"]
        assert proc.poll() is None, "".join(stderr)
        # still watching: a later change is indexed too
        (folder / "third.md").write_text("# Third\n\nobsidianite later\n", encoding="utf-8")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _hits(db, "obsidianite"):
            assert proc.poll() is None, "".join(stderr)
            time.sleep(0.3)
        assert _hits(db, "obsidianite") == ["third.md"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _until(check: Callable[[], bool], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return False


def test_watch_goes_on_when_work_between_batches_fails(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "first.md").write_text("# First\n\nalpha note\n", encoding="utf-8")
    calls: list[int] = []

    def between() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise OSError(28, "No space left on device")

    with Watching(folder, tmp_path / "w.db", between=between) as w:
        (folder / "second.md").write_text("# Second\n\nbasaltic newcomer\n",
                                         encoding="utf-8")
        assert _until(lambda: _hits(w.db, "basaltic") == ["second.md"])
        assert any("No space left on device" in b.error for b in w.batches)
        assert w.thread.is_alive()


def test_watch_stops_when_its_index_file_is_deleted(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "first.md").write_text("# First\n\nalpha note\n", encoding="utf-8")
    w = Watching(folder, tmp_path / "w.db")
    w.__enter__()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{w.db}{suffix}").unlink(missing_ok=True)
    (folder / "second.md").write_text("# Second\n\nbasaltic newcomer\n", encoding="utf-8")
    w.thread.join(30)
    assert not w.thread.is_alive()
    with pytest.raises(StoreError, match="the index file is gone"):
        w.__exit__(None, None, None)
