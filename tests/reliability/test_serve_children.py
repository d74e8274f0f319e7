"""``cairn serve`` and its child processes under faults: a large batch parsed by a
worker pool inside the watching child, children that die, shutdown during a run. Real
processes on a loopback port; every wait is bounded (a hang fails the test)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from _served import CLI, Served, alive, cli_env, descendants, wait_for

from cairn.serving.watch_child import READY

pytest.importorskip("watchfiles")
pytest.importorskip("uvicorn")

pytestmark = pytest.mark.faults


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


def _searched(served: Served) -> list[str] | None:
    """The keyword search's hits, or None while the server answers 503 or not at all."""
    try:
        status, body = served.request("POST", "/v1/search",
                                      {"query": "first", "mode": "keyword"}, timeout=5)
    except OSError:
        return None
    if status == 503:
        return None
    assert status == 200, (status, body)
    return sorted({hit["path"] for hit in body["hits"]})


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
        # Until the slow connections are dropped (HEADER_SECONDS) a new client may be
        # answered 503 by the concurrency limit; after that it must be served.
        wait_for("a new client to be served",
                 lambda: _searched(served) == ["a.md"], timeout=60)
    finally:
        for s in slow:
            s.close()
        served.kill_all()


WATCHER = "-m cairn.serving.watch_child"
INDEXER = "-m cairn.serving.index_worker"


def test_a_killed_watcher_is_reported_restarted_and_follows_again(tmp_path: Path) -> None:
    notes, db = _indexed(tmp_path)
    served = Served(db, "serve", "--watch")
    try:
        served.wait_line(READY)
        served.wait_up()
        (old,) = served.children(WATCHER)
        os.kill(old, signal.SIGKILL)
        served.wait_line("watching process exited unexpectedly (exit status -9)", 30)
        status, body = served.request("GET", "/healthz")
        assert status == 503 and body["status"] == "degraded", body
        assert "exit status -9" in body["children"]["watcher"]
        wait_for("a new watcher", lambda: bool(served.children(WATCHER))
                 and served.children(WATCHER) != [old], 30)
        wait_for("its catch-up", lambda: served.log.count(READY) >= 2, 90)
        (notes / "b.md").write_text("# Beta\n\nzanzibar arrives after the restart\n")
        wait_for("the new note", lambda: served.search("zanzibar") == ["b.md"], 60)
        wait_for("healthz ok", lambda: served.request("GET", "/healthz")[0] == 200, 30)
        status, body = served.request("POST", "/v1/index", timeout=120)
        assert status == 200, body
    finally:
        served.kill_all()


def _busy_vault(tmp_path: Path, files: int = 3000) -> tuple[Path, Path]:
    """An index of one note, then ``files`` more notes beside it: the next run is long."""
    notes, db = _indexed(tmp_path)
    for i in range(files):
        (notes / f"m{i:05}.md").write_text(f"# M {i}\n\nbody {i} [[m{(i + 1) % files:05}]]\n")
    return notes, db


def _post_index(served: Served) -> tuple[list[tuple[int, object]], threading.Thread]:
    out: list[tuple[int, object]] = []

    def run() -> None:
        try:
            out.append(served.request("POST", "/v1/index", timeout=120))
        except OSError as exc:
            out.append((0, str(exc)))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return out, t


def test_a_killed_index_child_answers_503_naming_the_cause(tmp_path: Path) -> None:
    _notes, db = _busy_vault(tmp_path)
    served = Served(db, "serve")
    try:
        served.wait_up()
        out, t = _post_index(served)
        wait_for("the index child", lambda: bool(served.children(INDEXER)), 30)
        (child,) = served.children(INDEXER)
        time.sleep(0.5)  # it is reading its configuration and starting the run
        os.kill(child, signal.SIGKILL)
        t.join(timeout=60)
        assert out, "no answer to POST /v1/index"
        status, body = out[0]
        assert status == 503, out
        assert isinstance(body, dict) and "exit status -9" in body["error"], body
        assert body["type"] == "ChildUnavailable"
        assert served.up()
    finally:
        served.kill_all()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_an_index_run_stops_the_server_within_seconds(
        tmp_path: Path, sig: int) -> None:
    _notes, db = _busy_vault(tmp_path)
    served = Served(db, "serve")
    try:
        served.wait_up()
        out, t = _post_index(served)
        wait_for("the index child", lambda: bool(served.children(INDEXER)), 30)
        kids = list(descendants(served.proc.pid))
        time.sleep(0.5)
        served.stop(sig, timeout=30)  # fails the test if it takes longer
        t.join(timeout=30)
        assert out and out[0][0] == 503, out
        body = out[0][1]
        assert isinstance(body, dict) and body["error"] == "server shutting down", body
        wait_for("the children to exit", lambda: not any(alive(k) for k in kids), 15)
    finally:
        served.kill_all()
    done = subprocess.run([*CLI, "index"], env=cli_env(db), capture_output=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr


def test_serve_reopens_an_index_file_replaced_under_it(tmp_path: Path) -> None:
    """A restore puts another index file at the server's path (a rename, as sync tools
    and ``mv`` do) and it is written: the server reads the new file."""
    _notes, db = _indexed(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "z.md").write_text("# Zed\n\nzanzibar restored\n")
    backup = tmp_path / "backup.db"
    subprocess.run([*CLI, "index", str(other)], env=cli_env(backup), check=True,
                   capture_output=True, timeout=120)
    served = Served(db, "serve")
    try:
        served.wait_up()
        assert served.search("first") == ["a.md"]
        os.replace(backup, db)
        (other / "y.md").write_text("# Why\n\nzanzibar written later\n")
        subprocess.run([*CLI, "index", str(other)], env=cli_env(db), check=True,
                       capture_output=True, timeout=120)
        wait_for("the server to read the new file",
                 lambda: served.search("zanzibar") == ["y.md", "z.md"], 30)
        status, body = served.request("POST", "/v1/search",
                                      {"query": "zanzibar", "mode": "hybrid"})
        assert status == 200, body
        assert served.search("first") == []
    finally:
        served.kill_all()
