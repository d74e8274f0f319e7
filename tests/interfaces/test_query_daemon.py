"""The query daemon: a hybrid search with no warm process starts one, detached; it
answers the next searches with the same hits and scores as a local search, sees a
re-index, is stopped by ``cairn daemon stop`` or its quiet period, runs once per index
and settings, and is never started when turned off."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.serving import daemon, warm

pytestmark = pytest.mark.skipif(not warm.has_sockets(), reason="no Unix domain sockets")

ROOT = Path(__file__).resolve().parents[2]
NOTES = {
    "garden.md": "# Garden\n\nCompost needs greens and browns; turn the pile weekly.\n",
    "bread.md": "# Sourdough\n\nFeed the starter the night before baking bread.\n",
    "pets.md": "# Our cat\n\nThe kitten naps on the warm windowsill.\n",
}


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    """A user's environment: the daemon allowed, the static model, no user config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    env.update(PYTHONPATH=str(ROOT / "src"), CAIRN_EMBED="static",
               XDG_CONFIG_HOME=str(tmp / "no-config"), **extra)
    return env


def _daemon_pids(db: Path) -> list[int]:
    """Live daemon processes started for ``db`` (their command line names it)."""
    pids = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            cmd = (p / "cmdline").read_bytes().split(b"\0")
            stat = (p / "stat").read_text().rsplit(")", 1)[1].split()
            daemon_module = {b"cairn.serving.daemon", b"cairn.interfaces.cli._answer"} & set(cmd)
            if daemon_module and str(db.resolve()).encode() in cmd and stat[0] != "Z":
                pids.append(int(p.name))
    return pids


def _wait(what: str, check: object, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Three notes embedded with the shipped static model; every daemon started for
    the index is stopped (then killed) afterwards."""
    pytest.importorskip("model2vec")
    root = tmp_path / "notes"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text, encoding="utf-8")
    db = tmp_path / "i.db"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    with Cairn(load_config(db=db, env={"CAIRN_EMBED": "static"})) as c:
        c.index([root])
    yield db
    for pid in _daemon_pids(db):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    with contextlib.suppress(AssertionError):
        _wait("the daemons to stop", lambda: not _daemon_pids(db), 30)
    for pid in _daemon_pids(db):
        os.kill(pid, signal.SIGKILL)


def _cli(db: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "cairn.interfaces.cli",
                           "--db", str(db), *args], env=env, capture_output=True, text=True,
                          timeout=120)


def _daemon_advert(db: Path) -> dict[str, object] | None:
    folder = warm.advert_folder(db)
    for p in folder.glob("*.json") if folder.is_dir() else ():
        with contextlib.suppress(OSError, ValueError):
            ad = json.loads(p.read_text(encoding="utf-8"))
            if ad.get("kind") == "daemon":
                return dict(ad)
    return None


def _hits(out: str) -> list[tuple[str, float]]:
    data = json.loads(out)
    return [(h["unit_id"], h["score"]) for h in data["hits"]]


@pytest.mark.slow  # a real daemon and a dozen cairn processes, each loading the model
def test_a_hybrid_search_starts_a_daemon_that_answers_next_searches_as_a_local_one(
    index: Path, tmp_path: Path
) -> None:
    env = _env(tmp_path)
    first = _cli(index, "search", "compost pile", "--json", env=env)
    assert first.returncode == 0, first.stderr
    assert "cairn.search.service" in first.stderr  # the first search ran here
    _wait("the daemon's advert", lambda: _daemon_advert(index) is not None)
    ad = _daemon_advert(index)
    assert ad is not None and [ad["pid"]] == _daemon_pids(index)
    sock = Path(str(ad["socket"]))
    assert sock.stat().st_mode & 0o077 == 0 and sock.parent.stat().st_mode & 0o077 == 0
    for args in (["compost pile", "--json"], ["kitten", "--mode", "semantic", "--json"],
                 ["feed the starter", "--mode", "hybrid", "--json", "--limit", "2"]):
        remote = _cli(index, "search", *args, env=env)
        local = _cli(index, "search", *args, env={**env, "CAIRN_NO_WARM": "1"})
        assert remote.returncode == local.returncode == 0, remote.stderr
        assert "cairn.search.service" not in remote.stderr, args  # the daemon answered
        assert _hits(remote.stdout) and _hits(remote.stdout) == _hits(local.stdout), args
    # a re-index is seen by the daemon's next answer
    (index.parent / "notes" / "tomato.md").write_text(
        "# Tomatoes\n\nSow tomato seeds indoors in early spring.\n", encoding="utf-8")
    reindex = _cli(index, "index", "-q", env=env)
    assert reindex.returncode == 0, reindex.stderr
    after = _cli(index, "search", "tomato seeds", "--json", env=env)
    assert "cairn.search.service" not in after.stderr
    assert json.loads(after.stdout)["hits"][0]["title"] == "Tomatoes"
    assert _daemon_pids(index) == [ad["pid"]]  # the same daemon, not a new one
    # cairn stats says it runs and how to stop it; cairn daemon stop stops it
    stats = _cli(index, "stats", env=env)
    assert f"query daemon running (pid {ad['pid']})" in stats.stdout
    assert "cairn daemon stop" in stats.stdout
    stop = _cli(index, "daemon", "stop", "--json", env=env)
    assert json.loads(stop.stdout) == {"stopped": [ad["pid"]]}
    _wait("the daemon to exit", lambda: not _daemon_pids(index), 60)
    assert _daemon_advert(index) is None and not sock.exists()


def test_no_daemon_is_started_when_it_is_turned_off(index: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    for off in ({"CAIRN_DAEMON": "0"}, {"CAIRN_NO_WARM": "1"}):
        done = _cli(index, "search", "compost", "--json", env={**env, **off})
        assert done.returncode == 0, done.stderr
        assert _daemon_pids(index) == [], off  # the CLI starts it before it exits
    config_file = tmp_path / "cairn.toml"
    config_file.write_text("[daemon]\nidle_minutes = 0\n", encoding="utf-8")
    done = _cli(index, "--config", str(config_file), "search", "compost", env=env)
    assert done.returncode == 0 and _daemon_pids(index) == []
    assert not daemon.enabled(load_config(db=index, config_file=config_file), env)
    assert not daemon.enabled(load_config(db=index, env={"CAIRN_EMBED": "none"}), {})
    assert daemon.enabled(load_config(db=index, env={"CAIRN_EMBED": "static"}), {})


def _cmdline(pid: int) -> list[bytes]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")


@pytest.mark.slow  # a real daemon and four cairn processes
def test_a_keyword_search_starts_a_daemon_that_loads_the_model_when_asked(
    index: Path, tmp_path: Path
) -> None:
    """A keyword search starts a daemon too, without the model: the next keyword search
    is answered by it, and a hybrid search it answers has a local search's hits and
    scores (the model loaded on that first need)."""
    env = _env(tmp_path)
    keyword = _cli(index, "search", "compost", "--mode", "keyword", "--json", env=env)
    assert keyword.returncode == 0, keyword.stderr
    _wait("the daemon's advert", lambda: _daemon_advert(index) is not None)
    (pid,) = _daemon_pids(index)
    assert b"--no-warm-up" in _cmdline(pid)
    again = _cli(index, "search", "compost", "--mode", "keyword", "--json", env=env)
    assert again.returncode == 0, again.stderr
    assert _hits(again.stdout) == _hits(keyword.stdout)
    hybrid = _cli(index, "search", "turn the pile", "--json", env=env)
    local = _cli(index, "search", "turn the pile", "--json",
                 env={**env, "CAIRN_NO_WARM": "1"})
    assert hybrid.returncode == 0 and local.returncode == 0, hybrid.stderr + local.stderr
    assert _hits(hybrid.stdout) == _hits(local.stdout)
    assert _daemon_pids(index) == [pid]  # the same daemon, not a second one


def test_the_daemon_exits_after_its_quiet_period_and_runs_once_per_index(
    index: Path, tmp_path: Path
) -> None:
    config_file = tmp_path / "cairn.toml"
    config_file.write_text("[daemon]\nidle_minutes = 0.05\n", encoding="utf-8")  # 3 s
    env = _env(tmp_path)
    argv = [sys.executable, "-m", "cairn.serving.daemon", "--db", str(index),
            "--config", str(config_file)]
    first = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE)
    try:
        _wait("the daemon's advert", lambda: _daemon_advert(index) is not None)
        second = subprocess.run(argv, env=env, capture_output=True, timeout=60)
        assert second.returncode == 0 and first.poll() is None  # the lock is taken
        assert first.wait(timeout=90) == 0  # quiet for idle_minutes: it exits by itself
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        assert first.stderr is not None
        first.stderr.close()
    assert _daemon_advert(index) is None


def test_a_daemon_whose_index_file_is_replaced_exits(index: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "cairn.serving.daemon", "--db",
                             str(index)], env=env, stderr=subprocess.DEVNULL)
    try:
        _wait("the daemon's advert", lambda: _daemon_advert(index) is not None)
        copy = tmp_path / "copy.db"
        shutil.copyfile(index, copy)
        os.replace(copy, index)  # another inode under the same name (a restored backup)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_daemon_that_cannot_start_is_not_started_again_by_every_search(
    index: Path, tmp_path: Path
) -> None:
    # a file where the adverts' folder would be: no daemon can advertise itself
    blocker = warm.advert_folder(index)
    blocker.write_text("not a folder", encoding="utf-8")
    env = _env(tmp_path)
    config = load_config(db=index, env={"CAIRN_EMBED": "static"})
    _lock, log, failed = daemon._files(config)
    failed.unlink(missing_ok=True)
    before = log.read_text(encoding="utf-8").count(str(blocker)) if log.exists() else 0
    try:
        first = _cli(index, "search", "compost", "--json", env=env)
        assert first.returncode == 0 and _hits(first.stdout)  # searched locally
        _wait("the failed daemon's marker", failed.exists, 90)
        _wait("the failed daemon to exit", lambda: not _daemon_pids(index), 60)
        for _ in range(2):
            again = _cli(index, "search", "compost", "--json", env=env)
            assert again.returncode == 0 and _hits(again.stdout) == _hits(first.stdout)
            assert _daemon_pids(index) == []  # none started: the marker is recent
        assert log.read_text(encoding="utf-8").count(str(blocker)) == before + 1
    finally:
        failed.unlink(missing_ok=True)
