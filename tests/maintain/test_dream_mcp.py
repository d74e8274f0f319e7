"""``dream_report`` and ``dream_apply`` through the MCP SDK's own client."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from cairn.app import Cairn
from cairn.interfaces.mcp.server import build_server

pytestmark = pytest.mark.corpus


def test_dream_report_read_only_and_apply_only_with_writes(
    fresh: Callable[..., tuple[Path, Cairn]],
) -> None:
    base, c = fresh({"markdown": ["kepano-obsidian"]})
    target = base / "markdown" / "kepano-obsidian" / "References" / "Out of Control.md"
    original = target.read_bytes()

    async def main() -> tuple[Any, Any, Any, set[str]]:
        async with Client(build_server(c)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            report = await client.call_tool("dream_report", {"only": ["broken"]})
            refused = await client.call_tool("dream_apply", {})
        async with Client(build_server(c, allow_write=True)) as client:
            sure = await client.call_tool("dream_apply", {"fix": ["retarget_link"]})
            dry = await client.call_tool("dream_apply", {"fix": ["retarget_link"],
                                                         "proposed": True})
            assert target.read_bytes() == original
            done = await client.call_tool(
                "dream_apply", {"fix": ["retarget_link"], "only": ["broken"], "dry_run": False,
                                "proposed": True})
        assert not any("[[Kevin J Kelly]]" in ch["diff"]  # a similar name: only proposed
                       for ch in sure.structured_content["changes"])
        return report, refused, (dry, done), names

    report, refused, (dry, done), names = anyio.run(main)
    assert "dream_report" in names and "dream_apply" not in names
    assert refused.is_error
    data = report.structured_content
    assert data["checks"] == ["broken"] and data["counts"]["broken"] > 0
    assert any(f["value"] == "Kevin Kelly" for f in data["findings"])
    assert any("[[Kevin J Kelly]]" in ch["diff"] for ch in dry.structured_content["changes"])
    assert done.structured_content["applied"]
    assert b"[[Kevin J Kelly]]" in target.read_bytes()
