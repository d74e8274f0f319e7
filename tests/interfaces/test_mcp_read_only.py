"""Every MCP tool marked ``readOnlyHint`` leaves the index unchanged: called through the
SDK's client, each one (``dream_report`` included, which reports without storing the
report) leaves every table of the SQLite file byte for byte as it was."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.mcp.server import build_server

ROOT = Path(__file__).resolve().parents[2]


def dump(db: Path) -> list[str]:
    """The whole database as SQL statements (every table's rows)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_read_only_tools_leave_the_index_unchanged(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    shutil.copytree(ROOT / "sample", folder)
    db = tmp_path / "i.db"
    with Cairn(load_config(db=db)) as c:
        c.index([folder])
        doc = c.search("compost", limit=1).hits[0]
        args: dict[str, dict[str, Any]] = {
            "search": {"query": "compost"}, "get": {"ref": doc.document_id},
            "neighbors": {"node": doc.document_id}, "backlinks": {"node": doc.document_id},
            "path": {"source": doc.document_id, "target": doc.unit_id},
            "recent": {"since": "3650d"}, "dream_report": {}}
        before = dump(db)

        async def main() -> list[str]:
            async with Client(build_server(c, allow_write=True)) as client:
                tools = (await client.list_tools()).tools
                read_only = [t.name for t in tools
                             if t.annotations is not None and t.annotations.read_only_hint]
                for name in read_only:
                    res = await client.call_tool(name, args.get(name, {}))
                    assert not res.is_error, (name, res.content)
                    assert dump(db) == before, f"{name} changed the index"
                res = await client.call_tool("dream_report", {"only": ["orphans"]})
                assert not res.is_error and dump(db) == before
                return read_only

        called = anyio.run(main)
    assert {"search", "get", "stats", "dream_report"} <= set(called)
    assert "dream_apply" not in called and "index" not in called
