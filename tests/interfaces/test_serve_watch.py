"""``cairn serve --watch``: the API answers what changed on disk while it runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("watchfiles")
pytest.importorskip("uvicorn")


def _search(port: int, query: str) -> list[str]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/search",
        data=json.dumps({"query": query, "mode": "keyword"}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        return [h["path"] for h in json.loads(r.read())["hits"]]


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
    try:
        deadline = time.time() + 30
        while True:  # the server is up
            try:
                assert _search(free_port, "first") == ["a.md"]
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.2)
        time.sleep(1.0)  # the watcher's catch-up run
        (notes / "b.md").write_text("# Beta\n\nzanzibar appears later\n")
        found: list[str] = []
        while time.time() < deadline and not found:
            found = _search(free_port, "zanzibar")
            time.sleep(0.2)
        assert found == ["b.md"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
