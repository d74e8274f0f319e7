"""One query through every door — CLI ``--json``, Python, HTTP and MCP — gives the same
hits: the same fields, the same values, the same order (one serialiser)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.interfaces.api.app import create_app
from cairn.interfaces.api.security import Policy
from cairn.interfaces.cli import app as cli
from cairn.interfaces.mcp.server import build_server
from cairn.model.serialize import to_data


@pytest.mark.parametrize("query", ["compost", "tag:garden", "kitchen -tile", "京都"])
def test_every_door_gives_the_same_hits(query: str, cairn: Cairn, vault: Any, port: int,
                                        uvicorn_server: Any) -> None:
    res = CliRunner().invoke(cli, ["--db", str(vault.db), "search", query, "--limit", "5",
                                   "--json"])
    assert res.exit_code == 0, res.output
    from_cli = json.loads(res.stdout)["hits"]
    from_python = to_data(cairn.search(query, limit=5).hits)
    with uvicorn_server(create_app(cairn, Policy.for_bind("127.0.0.1", port, token=None)),
                        port) as srv:
        r = httpx2.post(f"{srv.url}/v1/search", json={"query": query, "limit": 5})
        from_http = r.json()["hits"]

    async def mcp() -> Any:
        async with Client(build_server(cairn)) as client:
            out = await client.call_tool("search", {"query": query, "limit": 5})
            assert out.structured_content is not None
            return out.structured_content["hits"]

    from_mcp = anyio.run(mcp)
    assert from_cli, f"{query!r} finds something in the sample"
    assert from_python == from_cli
    assert from_http == from_cli
    assert from_mcp == from_cli
    assert [list(h) for h in from_mcp] == [list(h) for h in from_cli]
