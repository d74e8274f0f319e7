"""The warm model: a running server answers the CLI's hybrid searches over its socket,
with output identical to a local search; stale adverts are ignored and removed; other
settings, bad requests and dead sockets fall back to a local search."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.model.serialize import to_data
from cairn.serving import warm
from cairn.serving.remote_hits import RemoteResult

pytestmark = pytest.mark.skipif(not warm.has_sockets(), reason="no Unix domain sockets")

ROOT = Path(__file__).resolve().parents[2]
NOTES = {
    "garden.md": "# Garden\n\nCompost needs greens and browns; turn the pile weekly.\n",
    "bread.md": "# Sourdough\n\nFeed the starter the night before baking bread.\n",
    "pets.md": "# Our cat\n\nThe kitten naps on the warm windowsill.\n\n## Dog\n\nWalks in "
    "the park twice a day.\n",
    "travel.md": "---\ntags: [trip]\n---\n# Lisbon\n\nTrams, custard tarts, the ocean.\n",
}


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An index of four notes embedded with the shipped static model; its path."""
    pytest.importorskip("model2vec")
    monkeypatch.setenv("CAIRN_EMBED", "static")
    monkeypatch.delenv("CAIRN_NO_WARM", raising=False)
    monkeypatch.delenv("CAIRN_CONFIG", raising=False)
    root = tmp_path / "notes"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text, encoding="utf-8")
    db = tmp_path / "i.db"
    with Cairn(load_config(db=db, env={"CAIRN_EMBED": "static"})) as c:
        c.index([root])
    yield db


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CAIRN_NO_WARM", "CAIRN_CONFIG")}
    env.update(PYTHONPATH=str(ROOT / "src"), CAIRN_EMBED="static",
               XDG_CONFIG_HOME=str(ROOT / "nonexistent-config"), **extra)
    return env


def _cli(db: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "cairn.interfaces.cli",
                           "search", *args, "--db", str(db)], env=_env(**env),
                          capture_output=True, text=True, timeout=120)


def _wait_for_advert(db: Path, proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    folder = warm.advert_folder(db)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for p in folder.glob("*.json") if folder.is_dir() else ():
            ad: dict[str, Any] = json.loads(p.read_text(encoding="utf-8"))
            if ad["pid"] == proc.pid:
                return ad
        assert proc.poll() is None, "the server exited"
        time.sleep(0.1)
    raise AssertionError("no advert")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_cli_hybrid_search_through_a_warm_server_is_identical(embedded: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "cairn.interfaces.cli", "serve", "--db", str(embedded),
         "--port", str(_free_port())], env=_env(), stderr=subprocess.DEVNULL)
    try:
        ad = _wait_for_advert(embedded, server)
        assert ad["kind"] == "serve" and Path(ad["socket"]).exists()
        for args in (["compost pile", "--mode", "hybrid", "--json"],
                     ["kitten", "--mode", "semantic", "--json", "--explain"],
                     ["tag:trip ocean", "--json"],
                     ["feed the starter", "--mode", "hybrid", "--limit", "2"],
                     ["compost", "--mode", "hybrid", "--files"]):
            remote = _cli(embedded, *args)
            local = _cli(embedded, *args, CAIRN_NO_WARM="1")
            assert remote.returncode == local.returncode == 0, remote.stderr
            # the warm path never loads the search service (nor the model, nor numpy)
            assert "cairn.search.service" in local.stderr
            assert "cairn.search.service" not in remote.stderr, args
            assert "numpy" not in remote.stderr
            if "--json" in args:
                a, b = json.loads(remote.stdout), json.loads(local.stdout)
                assert a["hits"], args
                a.pop("took_ms"), b.pop("took_ms")
                assert a == b
            else:
                def body(text: str) -> list[str]:
                    return [ln for ln in text.splitlines() if " ms" not in ln]
                assert body(remote.stdout) == body(local.stdout)
                assert ("garden.md" if "--files" in args else "Sourdough") in remote.stdout
        # keyword searches too: the CLI's side of a warm answer costs less than a search
        keyword = _cli(embedded, "compost", "--mode", "keyword", "--json")
        local = _cli(embedded, "compost", "--mode", "keyword", "--json", CAIRN_NO_WARM="1")
        assert "cairn.search.service" not in keyword.stderr
        a, b = json.loads(keyword.stdout), json.loads(local.stdout)
        a.pop("took_ms"), b.pop("took_ms")
        assert a["hits"] and a == b
        # a table reads the index itself: searched locally, printed the same
        table = ["compost", "--mode", "hybrid", "--format", "csv", "--fields", "title,path"]
        remote, local = _cli(embedded, *table), _cli(embedded, *table, CAIRN_NO_WARM="1")
        assert remote.returncode == 0 and remote.stdout == local.stdout
        assert "title,path" in remote.stdout
    finally:
        server.terminate()
        server.wait(30)
    # the server removed its advert and its socket on the way out
    assert not list(warm.advert_folder(embedded).glob("*.json"))
    assert not Path(ad["socket"]).exists()


def test_in_process_server_answers_like_search(embedded: Path) -> None:
    config = load_config(db=embedded, env={"CAIRN_EMBED": "static"})
    with Cairn(config) as c, warm.advertise(c, "watch", warm_up=False) as server:
        assert server is not None
        answer = warm.remote_search(config, {"query": "compost", "mode": "hybrid"})
        assert answer is not None and answer["ok"] is True
        res = c.search("compost", mode="hybrid")
        assert answer["result"]["hits"] == to_data(res.hits)
        rebuilt = RemoteResult(answer["result"])
        assert to_data(rebuilt.hits) == to_data(res.hits)
        assert answer["empty"] is False
        # other settings (another embedder) never use this server
        other = load_config(db=embedded, env={"CAIRN_EMBED": "none"})
        assert warm.remote_search(other, {"query": "compost"}) is None
        # bad requests get an error answer, not a dead thread
        for bad in (b"not json", b'{"op": "drop"}', b'{"op": "search", "query": ""}',
                    b'{"op": "search", "query": "x", "limit": "ten"}',
                    b'{"op": "search", "query": "x", "limit": true}'):
            reply = json.loads(server.answer(bad))
            assert reply["ok"] is False and reply["error"]
        with socket.socket(socket.AF_UNIX) as s:  # an oversized request: connection closed
            s.connect(str(server.socket_path))
            try:
                s.sendall(b"x" * (warm.MAX_REQUEST + 10))
                assert s.recv(100) == b""
            except (BrokenPipeError, ConnectionResetError):
                pass
        # and it still answers afterwards
        assert warm.remote_search(config, {"query": "kitten"}) is not None
        assert oct(server.socket_path.stat().st_mode & 0o777) == "0o600"
        assert oct(server.socket_path.parent.stat().st_mode & 0o777) == "0o700"
    assert warm.remote_search(config, {"query": "compost"}) is None


def test_stale_adverts_are_ignored_and_removed(embedded: Path, tmp_path: Path) -> None:
    config = load_config(db=embedded, env={"CAIRN_EMBED": "static"})
    folder = warm.advert_folder(embedded)
    folder.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    gone = folder / f"{dead.stdout.strip()}.json"
    gone.write_text(json.dumps({"pid": int(dead.stdout), "socket": str(tmp_path / "no.sock"),
                                "settings": warm.settings_hash(config)}), encoding="utf-8")
    # a live pid (this one) whose socket nobody listens on
    deaf = folder / f"{os.getpid()}.json"
    deaf.write_text(json.dumps({"pid": os.getpid(), "socket": str(tmp_path / "deaf.sock"),
                                "settings": warm.settings_hash(config)}), encoding="utf-8")
    (folder / "junk.json").write_text("{not json", encoding="utf-8")
    # neither advert is waited on: a dead pid or a socket nobody listens on fails at
    # once (a hang would meet the test's timeout, not a clock assert)
    assert warm.remote_search(config, {"query": "compost"}) is None
    assert not gone.exists() and not deaf.exists()
    assert (folder / "junk.json").exists()  # not ours to judge: left alone, skipped
    # and the CLI searches locally, as if no server had ever run
    res = subprocess.run([sys.executable, "-m", "cairn.interfaces.cli", "search", "compost",
                          "--mode", "hybrid", "--json", "--db", str(embedded)], env=_env(),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and json.loads(res.stdout)["hits"]


def test_leaving_advertise_at_once_waits_for_the_model_warm_up(tmp_path: Path) -> None:
    """A server whose client leaves during start-up (``cairn mcp`` with its input closed
    at once) must not exit with the warm-up thread still inside onnxruntime: the
    finalising interpreter ends that thread there and the process aborts (exit -6)."""
    pytest.importorskip("onnxruntime")
    env = {"CAIRN_EMBED": "minilm-onnx"}
    root = tmp_path / "notes"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text, encoding="utf-8")
    db = tmp_path / "i.db"
    with Cairn(load_config(db=db, env=env)) as c:
        c.index([root])
    with Cairn(load_config(db=db, env=env)) as c:
        with warm.advertise(c, "mcp") as server:
            assert server is not None
            assert any(t.name == "cairn-warm-up" for t in threading.enumerate())
        left = [t.name for t in threading.enumerate() if t.name.startswith("cairn-warm")]
        assert left == []
