"""``cairn serve`` and its child processes under faults: a large batch parsed by a
worker pool inside the watching child, children that die, shutdown during a run. Real
processes on a loopback port; every wait is bounded (a hang fails the test)."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest
from _served import CLI, Served, alive, cli_env, descendants, wait_for

from cairn.interfaces.watch_child import READY

pytest.importorskip("watchfiles")
pytest.importorskip("uvicorn")


def _indexed(tmp_path: Path) -> tuple[Path, Path]:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Alpha\n\nfirst note\n")
    db = tmp_path / "i.db"
    subprocess.run([*CLI, "index", str(notes)], env=cli_env(db), check=True,
                   capture_output=True, timeout=120)
    return notes, db


def test_serve_watch_indexes_a_batch_big_enough_for_the_parse_pool(tmp_path: Path) -> None:
    """100 new notes (over ``PARALLEL_MIN_FILES``) are parsed by worker processes
    started inside the watching child, which reads its requests on a thread: they all
    become searchable, the server stops on SIGTERM and leaves no process and no lock."""
    notes, db = _indexed(tmp_path)
    served = Served(db, "serve", "--watch", env=cli_env(db, CAIRN_WORKERS="2"))
    try:
        served.wait_line(READY)
        served.wait_up()
        for i in range(100):
            (notes / f"n{i:03}.md").write_text(f"# Note {i}\n\nzebrafoo word{i}\n")
        wait_for("the 100 notes to be searchable",
                 lambda: len(served.search("zebrafoo")) == 100, timeout=120)
        kids = list(descendants(served.proc.pid))
        assert served.stop(signal.SIGTERM, timeout=30) is not None
        wait_for("the server's children to exit",
                 lambda: not any(alive(k) for k in kids), timeout=15)
    finally:
        served.kill_all()
    done = subprocess.run([*CLI, "index"], env=cli_env(db), capture_output=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr  # the writer lock was let go


def _few_files() -> None:
    """In the server process before it starts: at most 128 open files."""
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))


def test_slow_sockets_past_the_file_limit_do_not_keep_new_clients_out(
        tmp_path: Path) -> None:
    """150 connections that never finish their headers, at a limit of 128 open files:
    they are dropped and a new client is answered."""
    import socket

    _notes, db = _indexed(tmp_path)
    served = Served(db, "serve", preexec=_few_files)
    slow: list[socket.socket] = []
    try:
        served.wait_up()
        for _ in range(150):
            s = socket.create_connection(("127.0.0.1", served.port), timeout=5)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never ends
            slow.append(s)
        wait_for("a new client to be answered", served.up, timeout=60)
        assert served.search("first") == ["a.md"]
    finally:
        for s in slow:
            s.close()
        served.kill_all()
