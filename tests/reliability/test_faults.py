"""Fault injection (the ``faults`` tier): ``serve --watch``, ``serve`` with its index
child, ``watch`` and ``mcp`` as real processes, with children or the process killed at
random points (fixed seed, bounded counts), a 500-file batch, early-closing clients and
signals during index runs. After every case: the server answered (or stopped within
seconds when told), no process of the case is left, the writer lock is free, no
temporary file is left beside the index, and the index equals a fresh build."""

from __future__ import annotations

import fcntl
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from _reliability import settle, snapshot_of
from _served import CLI, Served, alive, cli_env, descendants, wait_for

from cairn.model import IndexSnapshot
from cairn.serving.watch_child import READY

pytestmark = pytest.mark.faults
pytest.importorskip("watchfiles")
pytest.importorskip("uvicorn")

SEED = 20261207
WATCHER = "-m cairn.serving.watch_child"
INDEXER = "-m cairn.serving.index_worker"


def _vault(tmp_path: Path, notes: int = 20) -> tuple[Path, Path]:
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(notes):
        (folder / f"base{i:03}.md").write_text(
            f"# Base {i}\n\nbase note {i} [[base{(i + 1) % notes:03}]]\n")
    db = tmp_path / "i.db"
    subprocess.run([*CLI, "index", str(folder)], env=cli_env(db), check=True,
                   capture_output=True, timeout=120)
    return folder, db


def _fresh(folder: Path, tmp_path: Path) -> IndexSnapshot:
    """A fresh full build of ``folder`` by the CLI, with the servers' settings."""
    db = tmp_path / f"fresh-{time.monotonic_ns()}.db"
    subprocess.run([*CLI, "index", str(folder)], env=cli_env(db), check=True,
                   capture_output=True, timeout=300)
    return snapshot_of(db)


def _write_batch(folder: Path, tag: str, count: int) -> None:
    for i in range(count):
        (folder / f"{tag}{i:04}.md").write_text(f"# {tag} {i}\n\n{tag} body {i}\n")


def _assert_clean(db: Path, kids: dict[int, str]) -> None:
    """No process of the case alive, the writer lock free, no temporary file."""
    wait_for(f"the case's processes to exit: {kids}",
             lambda: not any(alive(p) for p in kids), 30)
    lock = Path(f"{db}.lock")
    if lock.exists():
        with open(lock, "a+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises when still held
            fcntl.flock(fh, fcntl.LOCK_UN)
    # the warm-model adverts (``<index>.servers/<pid>.json``) of a killed process stay
    # behind by design: readers skip and remove adverts of dead processes
    normal = {db.name, f"{db.name}-wal", f"{db.name}-shm", f"{db.name}.lock",
              f"{db.name}.servers"}
    left = [p.name for p in db.parent.iterdir()
            if p.name.startswith(db.name) and p.name not in normal]
    assert left == [], left


def test_serve_watch_survives_killed_watchers_and_a_500_file_batch(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    folder, db = _vault(tmp_path)
    served = Served(db, "serve", "--watch")
    kills = 0
    try:
        served.wait_line(READY)
        served.wait_up()
        for round_ in range(2):
            _write_batch(folder, f"r{round_}n", 500 if round_ == 0 else 40)
            time.sleep(rng.uniform(0.0, 2.0))  # a random point of the batch
            watchers = served.children(WATCHER)
            if watchers:
                os.kill(watchers[0], signal.SIGKILL)
                kills += 1
            assert served.up()  # the server answers meanwhile
            wait_for("a watcher again", lambda: bool(served.children(WATCHER)), 60)
        settle(db, _fresh(folder, tmp_path), timeout=180)
        assert served.request("GET", "/healthz")[0] in (200, 503)
        kids = dict(descendants(served.proc.pid))
        served.stop(signal.SIGTERM, timeout=30)
    finally:
        served.kill_all()
    _assert_clean(db, kids)
    print(f"serve --watch: {kills} watcher kills, 2 rounds")
    assert kills >= 1


def _index_in_thread(served: Served) -> tuple[list[tuple[int, object]], threading.Thread]:
    answers: list[tuple[int, object]] = []
    t = threading.Thread(target=lambda: answers.append(
        served.request("POST", "/v1/index", timeout=300)), daemon=True)
    t.start()
    return answers, t


def _wait_child(served: Served, needle: str) -> None:
    wait_for(f"a child {needle}", lambda: bool(served.children(needle)), 60)


def test_serve_index_child_killed_or_signalled_mid_run(tmp_path: Path) -> None:
    rng = random.Random(SEED + 1)
    folder, db = _vault(tmp_path)
    kills = 0
    for case in range(2):
        _write_batch(folder, f"c{case}n", 500)
        served = Served(db, "serve")
        try:
            served.wait_up()
            answers, t = _index_in_thread(served)
            _wait_child(served, INDEXER)
            time.sleep(rng.uniform(0.2, 1.5))
            kids = dict(descendants(served.proc.pid))
            if case == 0:  # kill the child: the request is answered, the server goes on
                for pid in served.children(INDEXER):
                    os.kill(pid, signal.SIGKILL)
                    kills += 1
                t.join(timeout=60)
                assert answers and answers[0][0] in (200, 503), answers
                status, body = served.request("POST", "/v1/index", timeout=300)
                assert status == 200, body  # a new child runs it
                served.stop(signal.SIGTERM, timeout=30)
            else:  # SIGTERM mid-run: stops within seconds
                served.stop(signal.SIGTERM, timeout=30)
                t.join(timeout=30)
                assert answers and answers[0][0] in (200, 503), answers
        finally:
            served.kill_all()
        _assert_clean(db, kids)
    subprocess.run([*CLI, "index"], env=cli_env(db), check=True, capture_output=True,
                   timeout=300)
    settle(db, _fresh(folder, tmp_path), timeout=30)
    print(f"serve index child: {kills} kills, 2 cases")


def test_watch_killed_mid_batch_converges_after_restart(tmp_path: Path) -> None:
    rng = random.Random(SEED + 2)
    folder, db = _vault(tmp_path)
    kills = 0
    for case in range(2):
        w = Served(db, "watch", str(folder), env=cli_env(db, CAIRN_WORKERS="2"))
        try:
            wait_for("the watcher to hold the lock", lambda: _locked(db), 60)
            time.sleep(2)
            _write_batch(folder, f"w{case}n", 500)
            time.sleep(rng.uniform(0.3, 2.0))
            kids = dict(descendants(w.proc.pid))
            w.proc.kill()  # the process itself, at a random point of the batch
            kills += 1
            w.proc.wait(timeout=30)
        finally:
            w.kill_all()
        _assert_clean(db, kids)
    w = Served(db, "watch", str(folder))
    try:
        settle(db, _fresh(folder, tmp_path), timeout=180)
        w.stop(signal.SIGINT, timeout=60)
    finally:
        w.kill_all()
    print(f"watch: {kills} process kills, 2 cases")


def _locked(db: Path) -> bool:
    lock = Path(f"{db}.lock")
    if not lock.exists():
        return False
    with open(lock, "a+b") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
    return False


def test_mcp_exits_cleanly_when_the_client_closes_early(tmp_path: Path) -> None:
    """``cairn mcp`` with the real model (its warm-up loads onnxruntime in a thread)
    whose client closes at seeded points of start-up: exit 0 every time, never an abort
    ("terminate called without an active exception", exit -6) and no core file."""
    pytest.importorskip("onnxruntime")
    rng = random.Random(SEED + 3)
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(10):
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\nabout topic {i} [[n{i + 1}]]\n")
    db = tmp_path / "i.db"
    env = {**cli_env(db), "CAIRN_EMBED": "minilm-onnx"}
    subprocess.run([*CLI, "index", str(folder)], env=env, check=True, capture_output=True,
                   timeout=120)
    codes = []
    for _ in range(8):
        proc = subprocess.Popen([*CLI, "mcp"], env=env, stdin=subprocess.PIPE, cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.0, 2.5))  # a seeded point of start-up or the warm-up
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError("cairn mcp did not exit 90 s after its input closed") from None
        codes.append(proc.returncode)
        assert proc.stderr is not None
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        assert proc.returncode == 0, err[-2000:]
        assert "terminate called" not in err, err[-2000:]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("core")]
    print(f"mcp: {len(codes)} early closes, exit codes {codes}")
