"""The MCP server through the SDK's own client: in memory, over a real stdio subprocess
(``cairn mcp`` as an agent launches it) and over streamable HTTP on loopback."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from cairn.app import Cairn
from cairn.interfaces.mcp.server import build_server, http_app
from cairn.model import UNTRUSTED_NOTICE
from cairn.model.serialize import to_data

ROOT = Path(__file__).resolve().parents[2]
READ_TOOLS = {
    "search", "get", "neighbors", "backlinks", "path", "recent", "stats", "list_roots",
    "dream_report",
}


def run(fn: Any) -> Any:
    return anyio.run(fn)


def test_tools_have_schemas_and_descriptions_and_no_write_tool_by_default(cairn: Cairn) -> None:
    async def main() -> None:
        async with Client(build_server(cairn)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == READ_TOOLS
            for t in tools.values():
                assert t.description and len(t.description) > 40
                assert t.input_schema["type"] == "object"
                assert t.output_schema is not None
                assert t.annotations is not None and t.annotations.read_only_hint
            props = tools["search"].input_schema["properties"]
            assert {"query", "mode", "filters", "limit", "offset", "explain"} <= set(props)
            assert all(p.get("description") for p in props.values())
            res = await client.call_tool("index", {})
            assert res.is_error

    run(main)


def test_write_tool_listed_only_when_enabled(cairn: Cairn) -> None:
    async def main() -> None:
        async with Client(build_server(cairn, allow_write=True)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            memory = {n for n in tools if n.startswith("memory_")}  # tests/memory
            assert set(tools) == READ_TOOLS | {"index", "dream_apply"} | memory
            assert len(memory) == 9
            assert tools["index"].annotations is not None
            assert tools["index"].annotations.read_only_hint is False
            res = await client.call_tool("index", {})
            assert not res.is_error
            assert res.structured_content is not None
            assert res.structured_content["unchanged"] > 0

    run(main)


def test_search_is_marked_untrusted_with_provenance(cairn: Cairn) -> None:
    async def main() -> dict[str, Any]:
        async with Client(build_server(cairn)) as client:
            res = await client.call_tool("search", {"query": "compost", "limit": 3})
            assert not res.is_error and res.structured_content is not None
            return res.structured_content

    data = run(main)
    assert data["notice"] == UNTRUSTED_NOTICE
    assert data["hits"] == to_data(cairn.search("compost", limit=3).hits)
    assert [p["unit_id"] for p in data["provenance"]] == [h["unit_id"] for h in data["hits"]]
    for p, h in zip(data["provenance"], data["hits"], strict=True):
        assert p["trust"] == "untrusted" and len(p["content_hash"]) >= 16
        assert (p["abs_path"], p["line_start"], p["line_end"]) == (
            h["abs_path"], h["line_start"], h["line_end"])


def test_search_filters_and_paging(cairn: Cairn) -> None:
    async def main() -> tuple[Any, Any]:
        async with Client(build_server(cairn)) as client:
            a = await client.call_tool("search", {"query": "", "filters": ["tag:garden"],
                                                  "limit": 2})
            b = await client.call_tool("search", {"query": "", "filters": ["tag:garden"],
                                                  "limit": 2, "offset": 2})
            return a.structured_content, b.structured_content

    a, b = run(main)
    assert a["hits"] and all("garden" in h["tags"] for h in a["hits"])
    assert not {h["unit_id"] for h in a["hits"]} & {h["unit_id"] for h in b["hits"]}


def test_get_a_unit_by_path_and_line(cairn: Cairn, vault: Any) -> None:
    async def main() -> dict[str, Any]:
        async with Client(build_server(cairn)) as client:
            res = await client.call_tool("get", {"ref": "projects/garden.org:15"})
            assert not res.is_error and res.structured_content is not None
            return res.structured_content

    data = run(main)
    assert data["kind"] == "unit"
    unit = data["unit"]
    assert unit["line_start"] <= 15 <= unit["line_end"]
    assert {"outline_path", "properties", "body"} <= set(unit) and data["siblings"]
    (prov,) = data["provenance"]
    assert prov["unit_id"] == unit["id"] and prov["trust"] == "untrusted"
    assert prov["abs_path"] == str(vault.folder / "projects/garden.org")


def test_graph_recent_stats_roots(cairn: Cairn, vault: Any) -> None:
    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(build_server(cairn)) as client:
            for name, args in [
                ("backlinks", {"node": "projects/garden.org"}),
                ("neighbors", {"node": "projects/garden.org"}),
                ("path", {"source": "projects/garden.org",
                          "target": "reference/composting.md"}),
                ("recent", {"since": "1d"}),
                ("stats", {}),
                ("list_roots", {}),
            ]:
                res = await client.call_tool(name, args)
                assert not res.is_error, (name, res.content)
                out[name] = res.structured_content
        return out

    out = run(main)
    assert out["backlinks"]["count"] >= 1 and out["backlinks"]["notice"] == UNTRUSTED_NOTICE
    assert out["neighbors"]["neighbors"]
    assert out["path"]["length"] is not None
    assert out["recent"]["documents"] and out["recent"]["documents"][0]["content_hash"]
    assert out["stats"]["documents"] == cairn.stats().documents
    assert out["list_roots"]["roots"][0]["path"] == str(vault.folder.resolve())


def test_every_path_out_of_the_roots_is_refused(cairn: Cairn, bad_refs: list[str]) -> None:
    async def main() -> list[str]:
        texts = []
        async with Client(build_server(cairn)) as client:
            for ref in bad_refs:
                for name, args in [("get", {"ref": ref}), ("backlinks", {"node": ref}),
                                   ("neighbors", {"node": ref})]:
                    res = await client.call_tool(name, args)
                    assert res.is_error, (name, ref)
                    text = res.content[0].text  # type: ignore[union-attr]
                    assert "never to be served" not in text
                    texts.append(text)
        return texts

    texts = run(main)
    assert all("refused" in t or "NotFound" in t for t in texts)
    assert sum("refused" in t for t in texts) >= len(texts) - 3


def test_resources_read_documents_and_refuse_paths_out(cairn: Cairn, vault: Any) -> None:
    doc_id = cairn.doors.get("projects/garden.org").document.id  # type: ignore[union-attr]

    async def main() -> None:
        async with Client(build_server(cairn)) as client:
            templates = (await client.list_resource_templates()).resource_templates
            assert {t.uri_template for t in templates} == {
                "cairn://documents/{id}", "cairn://files/{+path}"}
            for uri in (f"cairn://documents/{doc_id}", "cairn://files/projects/garden.org"):
                (content,) = (await client.read_resource(uri)).contents
                import json

                data = json.loads(content.text)  # type: ignore[union-attr]
                assert data["text"].startswith("#+TITLE: Garden")
                assert data["notice"] == UNTRUSTED_NOTICE
                assert data["provenance"][0]["document_id"] == doc_id
            for path in ["../outside/secret.md", "%2e%2e/outside/secret.md",
                         "..%2Foutside%2Fsecret.md", "escape/secret.md",
                         "%2F" + str(vault.secret).lstrip("/").replace("/", "%2F"),
                         "projects%00/garden.org"]:
                with pytest.raises(MCPError) as info:
                    await client.read_resource(f"cairn://files/{path}")
                assert "never to be served" not in str(info.value)

    run(main)


def _env(vault: Any) -> dict[str, str]:
    return {**os.environ, "CAIRN_DB": str(vault.db), "CAIRN_EMBED": "none",
            "PYTHONPATH": str(ROOT / "src")}


def test_stdio_subprocess_as_an_agent_starts_it(vault: Any) -> None:
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "cairn.interfaces.cli", "mcp"],
                                   env=_env(vault), cwd=str(Path.home()))

    async def main() -> None:
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert tools == READ_TOOLS
            res = await client.call_tool("search", {"query": "compost", "limit": 2})
            assert not res.is_error and res.structured_content is not None
            assert res.structured_content["hits"][0]["title"]
            res = await client.call_tool("get", {"ref": "../outside/secret.md"})
            assert res.is_error and "refused" in res.content[0].text  # type: ignore[union-attr]

    run(main)


def test_stdio_write_tool_needs_the_flag(vault: Any) -> None:
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "cairn.interfaces.cli", "mcp", "--allow-write"],
                                   env=_env(vault))

    async def main() -> set[str]:
        async with Client(params) as client:
            return {t.name for t in (await client.list_tools()).tools}

    names = run(main)
    assert names - {n for n in names if n.startswith("memory_")} == (
        READ_TOOLS | {"index", "dream_apply"})


def test_streamable_http_on_loopback(cairn: Cairn, port: int, uvicorn_server: Any) -> None:
    with uvicorn_server(http_app(build_server(cairn), port=port), port=port) as srv:

        async def main() -> None:
            async with Client(f"{srv.url}/mcp") as client:
                assert {t.name for t in (await client.list_tools()).tools} == READ_TOOLS
                res = await client.call_tool("search", {"query": "compost", "limit": 2})
                assert not res.is_error and res.structured_content is not None
                assert res.structured_content["hits"] == to_data(
                    cairn.search("compost", limit=2).hits)

        run(main)
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        headers = {"accept": "application/json, text/event-stream"}
        forged = httpx2.post(f"{srv.url}/mcp", json=body,
                             headers={**headers, "Host": "evil.example"})
        assert forged.status_code in (400, 403, 421)
        origin = httpx2.post(f"{srv.url}/mcp", json=body,
                             headers={**headers, "Origin": "http://evil.example"})
        assert origin.status_code in (400, 403)


def test_http_transport_refuses_a_non_loopback_bind(cairn: Cairn) -> None:
    from cairn.errors import QueryError

    with pytest.raises(QueryError, match="loopback"):
        http_app(build_server(cairn), host="0.0.0.0")
