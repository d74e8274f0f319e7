"""``cairn serve --watch``: the API answers what changed on disk while it runs, and the
folders are followed by a child process of the server (its GIL stays with requests)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from cairn.serving.watch_child import READY

pytest.importorskip("watchfiles")
pytest.importorskip("uvicorn")

pytestmark = pytest.mark.slow


def _search(port: int, query: str) -> list[str]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/search",
        data=json.dumps({"query": query, "mode": "keyword"}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        return [h["path"] for h in json.loads(r.read())["hits"]]


def _children(pid: int) -> dict[int, bytes]:
    """The command lines of ``pid``'s live child processes (Linux ``/proc``)."""
    out: dict[int, bytes] = {}
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            ppid = int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                out[int(p.name)] = (p / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
    return out


def test_serve_with_watch_follows_a_new_note(tmp_path: Path, port: int) -> None:
    free_port = port
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Alpha\n\nfirst note\n")
    db = tmp_path / "i.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    env.update(CAIRN_DB=str(db), CAIRN_EMBED="none")
    cli = [sys.executable, "-m", "cairn.interfaces.cli"]
    subprocess.run([*cli, "index", str(notes)], env=env, check=True, capture_output=True)
    proc = subprocess.Popen(
        [*cli, "serve", "--watch", "--port", str(free_port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read_stderr() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            lines.put(raw.decode(errors="replace"))

    threading.Thread(target=read_stderr, daemon=True).start()
    try:
        deadline = time.time() + 60
        seen: list[str] = []
        while not any(READY in line for line in seen):  # the watcher's catch-up is done
            try:
                seen.append(lines.get(timeout=max(0.1, deadline - time.time())))
            except queue.Empty:
                pytest.fail(f"no {READY!r} line in 60 s; stderr: {''.join(seen)}")
        while True:  # the server is up
            try:
                assert _search(free_port, "first") == ["a.md"]
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.2)
        kids = _children(proc.pid)
        watchers = [k for k, cmd in kids.items() if b"cairn.serving.watch_child" in cmd]
        assert len(watchers) == 1, kids
        (notes / "b.md").write_text("# Beta\n\nzanzibar appears later\n")
        found: list[str] = []
        while time.time() < deadline and not found:
            found = _search(free_port, "zanzibar")
            time.sleep(0.2)
        assert found == ["b.md"]
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert not Path(f"/proc/{watchers[0]}").exists()  # the server stopped its watcher


def test_post_index_under_watch_runs_in_the_watcher(tmp_path: Path, port: int) -> None:
    """The watcher holds the writer lock while it runs: ``POST /v1/index`` is handed to
    it (run between two batches) instead of failing with ``IndexBusy``."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Alpha\n\nfirst note\n")
    db = tmp_path / "i.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    env.update(CAIRN_DB=str(db), CAIRN_EMBED="none", CAIRN_TOKEN="watch-token")
    cli = [sys.executable, "-m", "cairn.interfaces.cli"]
    subprocess.run([*cli, "index", str(notes)], env=env, check=True, capture_output=True)
    proc = subprocess.Popen([*cli, "serve", "--watch", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    lines: queue.Queue[str] = queue.Queue()

    def read_stderr() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            lines.put(raw.decode(errors="replace"))

    threading.Thread(target=read_stderr, daemon=True).start()
    try:
        deadline = time.time() + 60
        seen: list[str] = []
        while not any(READY in line for line in seen):
            try:
                seen.append(lines.get(timeout=max(0.1, deadline - time.time())))
            except queue.Empty:
                pytest.fail(f"no {READY!r} line in 60 s; stderr: {''.join(seen)}")
        for _ in range(3):
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/index", data=b"", method="POST",
                headers={"authorization": "Bearer watch-token"})
            while True:
                try:
                    with urllib.request.urlopen(req, timeout=60) as r:
                        status, run = r.status, json.loads(r.read())
                    break
                except urllib.error.HTTPError:
                    raise
                except OSError:  # the server is not listening yet
                    if time.time() > deadline or proc.poll() is not None:
                        raise
                    time.sleep(0.2)
            assert status == 200
            assert run["id"] and run["finished"] and not run["failures"]
    finally:
        proc.terminate()
        proc.wait(timeout=60)
