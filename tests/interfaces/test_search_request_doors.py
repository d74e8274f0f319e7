"""Every door reads its input into one :class:`cairn.model.SearchRequest`: the same
request sent through the CLI (Typer's runner), the CLI's fast path, HTTP, MCP, the
warm-model socket and Python gives the same hits, and each door's own fields are the
request's fields."""

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
from cairn.interfaces.api.models import SearchRequest as HttpSearchRequest
from cairn.interfaces.api.security import Policy
from cairn.interfaces.cli import app as cli
from cairn.interfaces.cli._fast import parse
from cairn.interfaces.mcp.server import build_server
from cairn.model import SearchRequest
from cairn.model.search_body import search_body
from cairn.model.serialize import to_data
from cairn.serving.warm import WarmServer

FIELDS = set(SearchRequest.__dataclass_fields__)

REQUESTS = [
    SearchRequest("garden", mode="keyword", limit=3, sort="title", explain=True,
                  alternates=True, expand=False),
    SearchRequest("compost tag:garden", limit=4, rerank=False),
    SearchRequest("soil -kitchen", mode="keyword", limit=2, expand=True),
]


def _cli_argv(req: SearchRequest) -> list[str]:
    """``cairn search`` options for ``req`` (the CLI has no offset or filters)."""
    argv = [req.query]
    if req.mode is not None:
        argv += ["--mode", req.mode]
    if req.limit is not None:
        argv += ["--limit", str(req.limit)]
    if req.sort is not None:
        argv += ["--sort", str(req.sort)]
    argv += ["--explain"] * req.explain + ["--alternates"] * req.alternates
    if req.expand is not None:
        argv.append("--expand" if req.expand else "--no-expand")
    if req.rerank is not None:
        argv.append("--rerank" if req.rerank else "--no-rerank")
    return argv


def _mcp_hits(cairn: Cairn, args: dict[str, Any]) -> Any:
    async def call() -> Any:
        async with Client(build_server(cairn)) as client:
            out = await client.call_tool("search", args)
            assert out.structured_content is not None, out
            return out.structured_content

    return anyio.run(call)


@pytest.mark.parametrize("req", REQUESTS, ids=lambda r: r.query)
def test_one_request_gives_the_same_hits_through_every_door(
    req: SearchRequest, cairn: Cairn, vault: Any, port: int, uvicorn_server: Any
) -> None:
    from_python = to_data(cairn.search(req).hits)
    assert from_python, f"{req.query!r} finds something in the sample"
    assert to_data(cairn.search(req.query, **{
        k: v for k, v in req.to_mapping().items() if k != "query"}).hits) == from_python

    res = CliRunner().invoke(cli, ["--db", str(vault.db), "search", *_cli_argv(req), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["hits"] == from_python

    fast = parse(["--db", str(vault.db), "search", *_cli_argv(req)])
    assert fast is not None and SearchRequest.from_mapping(fast.fields) == req

    body = {k: v for k, v in req.to_mapping().items() if k in HttpSearchRequest.model_fields}
    with uvicorn_server(create_app(cairn, Policy.for_bind("127.0.0.1", port, token=None)),
                        port) as srv:
        r = httpx2.post(f"{srv.url}/v1/search", json=body)
        assert r.status_code == 200, r.text
        assert r.json()["hits"] == from_python

    tool = {k: v for k, v in req.to_mapping().items() if k != "today"}
    assert _mcp_hits(cairn, tool)["hits"] == from_python

    answer = json.loads(WarmServer(cairn, "serve").answer(
        json.dumps({"op": "search", **req.to_mapping()}).encode()))
    assert answer["ok"] is True, answer
    assert answer["result"]["hits"] == from_python


def test_mcp_filters_are_the_requests_filters(cairn: Cairn) -> None:
    req = SearchRequest("compost", filters=("tag:garden",), limit=5, mode="keyword")
    assert req.text == "compost tag:garden"
    got = _mcp_hits(cairn, {"query": "compost", "filters": ["tag:garden"], "limit": 5,
                            "mode": "keyword"})
    assert got["query"] == req.text
    assert got["hits"] == to_data(cairn.search(req).hits)
    assert got["hits"] == to_data(cairn.search("compost tag:garden", limit=5,
                                               mode="keyword").hits)


def test_paging_is_the_same_over_http_mcp_and_python(
    cairn: Cairn, port: int, uvicorn_server: Any
) -> None:
    req = SearchRequest("garden", mode="keyword", limit=2, offset=1)
    from_python = to_data(cairn.search(req).hits)
    assert [h["rank"] for h in from_python] == [2, 3]
    with uvicorn_server(create_app(cairn, Policy.for_bind("127.0.0.1", port, token=None)),
                        port) as srv:
        r = httpx2.post(f"{srv.url}/v1/search", json={"query": "garden", "mode": "keyword",
                                                      "limit": 2, "offset": 1})
        assert r.json()["hits"] == from_python
    assert _mcp_hits(cairn, {"query": "garden", "mode": "keyword", "limit": 2,
                             "offset": 1})["hits"] == from_python


def test_every_door_answers_with_one_body_builder(
    cairn: Cairn, vault: Any, port: int, uvicorn_server: Any
) -> None:
    """The CLI, HTTP, MCP and the warm socket answer ``{"query", "took_ms", "notes",
    "hits"}`` as :func:`search_body` builds it; only the query each echoes differs
    (MCP strips it, and adds its notice and provenance after the body)."""
    req = SearchRequest("  compost tag:garden ", mode="keyword", limit=4)
    local = search_body(req.text, cairn.search(req))
    assert local["hits"] and list(local) == ["query", "took_ms", "notes", "hits"]

    def same(body: dict[str, Any], query: str) -> None:
        assert list(body)[:4] == list(local)
        assert isinstance(body["took_ms"], float)
        assert {**body, "took_ms": 0.0} == {**local, "query": query, "took_ms": 0.0}

    res = CliRunner().invoke(cli, ["--db", str(vault.db), "search", *_cli_argv(req), "--json"])
    assert res.exit_code == 0, res.output
    same(json.loads(res.stdout), req.text)

    with uvicorn_server(create_app(cairn, Policy.for_bind("127.0.0.1", port, token=None)),
                        port) as srv:
        r = httpx2.post(f"{srv.url}/v1/search", json={"query": req.query, "mode": "keyword",
                                                      "limit": 4})
        same(r.json(), req.query)

    tool = _mcp_hits(cairn, {"query": req.query, "mode": "keyword", "limit": 4})
    assert list(tool)[4:] == ["notice", "provenance"]
    same({k: tool[k] for k in list(tool)[:4]}, req.text.strip())

    answer = json.loads(WarmServer(cairn, "serve").answer(
        json.dumps({"op": "search", **req.to_mapping()}).encode()))
    same(answer["result"], req.text)


def test_each_doors_fields_are_request_fields(cairn: Cairn) -> None:
    assert set(HttpSearchRequest.model_fields) <= FIELDS

    async def schema() -> dict[str, Any]:
        async with Client(build_server(cairn)) as client:
            tools = await client.list_tools()
            return next(t.input_schema for t in tools.tools if t.name == "search")

    assert set(anyio.run(schema)["properties"]) <= FIELDS
    fast = parse(["search", "x", "--limit", "2", "--mode", "hybrid", "--explain",
                  "--alternates", "--expand"])
    assert fast is not None and set(fast.fields) <= FIELDS


def test_a_bad_value_is_refused_at_every_door_naming_the_field(
    cairn: Cairn, vault: Any, port: int, uvicorn_server: Any
) -> None:
    res = CliRunner().invoke(cli, ["--db", str(vault.db), "search", "x", "--mode", "fuzzy",
                                   "--json"])
    assert res.exit_code == 2
    assert json.loads(res.stdout) == {
        "error": "unknown mode 'fuzzy': use keyword, semantic or hybrid", "type": "QueryError"}
    answer = json.loads(WarmServer(cairn, "serve").answer(
        b'{"op": "search", "query": "x", "limit": 0}'))
    assert answer["ok"] is False and "limit" in answer["error"] and "0" in answer["error"]
    answer = json.loads(WarmServer(cairn, "serve").answer(
        b'{"op": "search", "query": "x", "include_alternates": true}'))
    assert answer["ok"] is False and "include_alternates" in answer["error"]
