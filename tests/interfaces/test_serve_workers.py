"""``cairn serve --workers 2``: two processes answer on one port, the second hands its
``POST /v1/index`` to the first (one owner of index runs), and ``/metrics`` counts the
requests of both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")

pytestmark = pytest.mark.slow

TOKEN = "workers-test-token"


def _call(port: int, path: str, body: dict[str, object] | None = None,
          method: str | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=None if body is None else json.dumps(body).encode(),
        headers={"content-type": "application/json", "authorization": f"Bearer {TOKEN}"},
        method=method,
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.status, r.read()


def _children(pid: int) -> dict[int, bytes]:
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


def _log_lines(path: Path) -> list[dict[str, object]]:
    out = []
    for raw in path.read_text(errors="replace").splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and "route" in line:
            out.append(line)
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_two_processes_share_the_port_the_index_runs_and_the_metrics(
        tmp_path: Path, port: int) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Alpha\n\nfirst note about lighthouses\n")
    db = tmp_path / "i.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    env.update(CAIRN_DB=str(db), CAIRN_EMBED="none", CAIRN_TOKEN=TOKEN)
    cli = [sys.executable, "-m", "cairn.interfaces.cli"]
    subprocess.run([*cli, "index", str(notes)], env=env, check=True, capture_output=True)
    log = tmp_path / "server.log"
    with log.open("wb") as err:
        proc = subprocess.Popen([*cli, "serve", "--workers", "2", "--port", str(port)],
                                env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.time() + 90
        kids: dict[int, bytes] = {}
        while True:  # both processes are up: the second logs its warm-up-free answers
            try:
                kids = {k: c for k, c in _children(proc.pid).items()
                        if b"cairn.interfaces.api.server" in c}
                if _call(port, "/healthz")[0] == 200 and kids:
                    break
            except OSError:
                pass
            assert proc.poll() is None, log.read_text()
            assert time.time() < deadline, log.read_text()
            time.sleep(0.2)
        assert len(kids) == 1, kids
        (other,) = kids
        sent = 0
        # parallel requests on new connections until both processes have answered
        while {line["pid"] for line in _log_lines(log)} != {proc.pid, other}:
            assert time.time() < deadline, _log_lines(log)[-5:]
            results: list[list[str]] = []

            def search(out: list[list[str]]) -> None:
                _, data = _call(port, "/v1/search", {"query": "lighthouses",
                                                    "mode": "keyword"})
                out.append([h["path"] for h in json.loads(data)["hits"]])

            threads = [threading.Thread(target=search, args=(results,)) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            sent += len(threads)
            assert results == [["a.md"]] * len(threads)
        # an index run asked of either process is run by the first one's index child
        (notes / "b.md").write_text("# Beta\n\nsecond note about zeppelins\n")
        index_pids: set[object] = set()
        runs = 0
        while other not in index_pids:
            assert time.time() < deadline, _log_lines(log)[-5:]
            status, data = _call(port, "/v1/index", method="POST")
            assert status == 200 and "id" in json.loads(data)
            runs += 1
            index_pids = {line["pid"] for line in _log_lines(log)
                          if line["route"] == "/v1/index" and line["status"] == 200}
        indexers = [k for k, c in _children(proc.pid).items()
                    if b"cairn.serving.index_worker" in c]
        assert len(indexers) == 1  # one index process, the first server's
        assert not [k for k, c in _children(other).items() if b"index_worker" in c]
        for _ in range(20):  # the second process sees the runs' commits
            _, data = _call(port, "/v1/search", {"query": "zeppelins", "mode": "keyword"})
            assert [h["path"] for h in json.loads(data)["hits"]] == ["b.md"]
        sent += 20
        # /metrics sums both processes' counts, whichever of them answers the scrape
        _, text = _call(port, "/metrics")
        counted = sum(float(line.rsplit(" ", 1)[1]) for line in text.decode().splitlines()
                      if line.startswith("cairn_http_requests_total{")
                      and 'route="/v1/search"' in line)
        assert counted == sent
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert not Path(f"/proc/{other}").exists()  # the server stopped its second process
