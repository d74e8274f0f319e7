"""A query none of whose words match (``xyzzyplugh``) still gets semantic and hybrid hits
— no floor can tell it from a real query (``bench/floor.py``) — and every door says so:
the note "no word of the query matched: these are the nearest by meaning" is in the
CLI's text and ``--json``, the HTTP API's and the MCP tool's ``notes``."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import Config
from cairn.search.service import NEAREST_BY_MEANING

NOTES = {
    "garden.md": "# Garden\n\nCompost needs greens and browns; turn the pile weekly.\n",
    "bread.md": "# Sourdough\n\nFeed the starter the night before baking bread.\n",
    "travel.md": "# Trip to Lisbon\n\nTrams, custard tarts and the ocean view.\n",
}


@pytest.fixture
def indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Cairn, Path]]:
    pytest.importorskip("model2vec")
    monkeypatch.setenv("CAIRN_EMBED", "static")
    root = tmp_path / "vault"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text, encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db", embed={"provider": "static"})) as cairn:
        cairn.index([root])
        yield cairn, tmp_path / "i.db"


def test_python_and_cli(indexed: tuple[Cairn, Path]) -> None:
    from cairn.interfaces.cli import app

    cairn, db = indexed
    for mode in ("semantic", "hybrid"):
        res = cairn.search("xyzzyplugh", mode=mode)
        assert res.hits and NEAREST_BY_MEANING in res.notes, mode
    assert NEAREST_BY_MEANING not in cairn.search("compost", mode="hybrid").notes
    env = {"CAIRN_EMBED": "static", "CAIRN_DB": str(db)}
    runner = CliRunner()
    text = runner.invoke(app, ["search", "xyzzyplugh", "--mode", "hybrid"], env=env)
    assert text.exit_code == 0 and f"note: {NEAREST_BY_MEANING}" in text.output
    js = runner.invoke(app, ["search", "xyzzyplugh", "--mode", "semantic", "--json"], env=env)
    assert js.exit_code == 0, js.output
    assert NEAREST_BY_MEANING in json.loads(js.stdout)["notes"]


def test_http_and_mcp(indexed: tuple[Cairn, Path]) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("mcp")
    import anyio
    import uvicorn
    from mcp import Client

    from cairn.interfaces.api.app import create_app
    from cairn.interfaces.api.security import Policy
    from cairn.interfaces.mcp.server import build_server

    cairn, _ = indexed
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(cairn, Policy.for_bind("127.0.0.1", port, token=None))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    t = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    t.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert time.monotonic() < deadline and t.is_alive(), "uvicorn did not start"
            time.sleep(0.02)
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/search",
            data=json.dumps({"query": "xyzzyplugh", "mode": "hybrid"}).encode(),
            headers={"Content-Type": "application/json"}, method="POST",
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            got = json.loads(resp.read())
        assert got["hits"] and NEAREST_BY_MEANING in got["notes"]
    finally:
        server.should_exit = True
        t.join(10)
        sock.close()

    async def main() -> Any:
        async with Client(build_server(cairn)) as client:
            res = await client.call_tool("search", {"query": "xyzzyplugh", "mode": "semantic"})
            return res.structured_content

    data = anyio.run(main)
    assert data["hits"] and NEAREST_BY_MEANING in data["notes"]
