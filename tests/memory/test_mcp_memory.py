"""The memory tools through a real MCP client (the SDK's in-memory transport): listed
only with writes enabled, a bundle outside the registered folders is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.mcp.server import build_server


def test_memory_tools_over_mcp(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    (root / "mem").mkdir(parents=True)
    (root / "a.md").write_text("# A\n\nplain note\n")
    cairn = Cairn(load_config(db=tmp_path / "i.db"))
    cairn.index([root])
    bundle = str(root / "mem")

    async def main() -> None:
        async with Client(build_server(cairn)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert not any(n.startswith("memory_") for n in names)
        async with Client(build_server(cairn, allow_write=True)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["memory_remember"].annotations is not None
            assert tools["memory_remember"].annotations.read_only_hint is False

            async def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
                res = await client.call_tool(name, args)
                assert not res.is_error, res.content
                assert res.structured_content is not None
                return res.structured_content

            rec = await call("memory_remember", {"bundle": bundle, "tags": ["kiln"],
                                                 "text": "The kiln fires at 1240 degrees"})
            assert rec["path"].startswith("memories/active/")
            got = await call("memory_recall", {"bundle": bundle, "query": "kiln degrees"})
            assert got["hits"][0]["path"] == rec["path"]
            con = await call("memory_consolidate", {"bundle": bundle})
            assert len(con["created"]) == 1
            got = await call("memory_recall", {"bundle": bundle, "query": "kiln"})
            assert got["hits"][0]["kind"] == "concept" and got["recorded"] == 1
            rep = await call("memory_maintain", {"bundle": bundle})
            assert rep["recalled"] == {con["created"][0]: 1}
            ver = await call("memory_verify", {"bundle": bundle})
            assert ver["ok"] and ver["checked"] == 1
            bad = await client.call_tool("memory_verify", {"bundle": str(tmp_path)})
            assert bad.is_error  # outside the registered folders

    anyio.run(main)
    cairn.close()
