"""The doors are their declarations: every tool an MCP tool module declares is a tool the
server lists (and no other), and every route an HTTP router module declares is in the
OpenAPI document the server serves (and no other route is), each module registered in
the one list the server is built from."""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from mcp import Client

from cairn.app import Cairn
from cairn.interfaces.api import routes
from cairn.interfaces.api.app import create_app
from cairn.interfaces.api.reference import _get
from cairn.interfaces.api.security import Policy
from cairn.interfaces.mcp import tools
from cairn.interfaces.mcp.server import build_server
from cairn.interfaces.mcp.tools import GROUPS, TOOLS, Tool
from cairn.interfaces.web import routes as pages

SHARED = {"base", "common"}
"""The modules of the two packages that declare nothing (what the others share)."""


def modules(package: ModuleType) -> list[ModuleType]:
    """Every declaring module of ``package`` (found on disk, not through its list)."""
    return [importlib.import_module(f"{package.__name__}.{m.name}")
            for m in pkgutil.iter_modules(package.__path__) if m.name not in SHARED]


async def listed(cairn: Cairn, allow_write: bool) -> list[Any]:
    """The tools a client is offered, through the SDK's own client."""
    async with Client(build_server(cairn, allow_write=allow_write)) as client:
        return list((await client.list_tools()).tools)


@pytest.fixture
def cairn(tmp_path: Path) -> Any:
    with Cairn.open(db=tmp_path / "i.db") as c:
        yield c


def test_every_tool_module_is_in_the_server_list() -> None:
    found = modules(tools)
    assert {m.__name__ for m in found} == {m.__name__ for m in GROUPS}
    declared = [t for m in found for t in m.TOOLS]
    assert all(isinstance(t, Tool) for t in declared)
    assert sorted(t.name for t in declared) == sorted(t.name for t in TOOLS)
    assert len({t.name for t in TOOLS}) == len(TOOLS), "two tools share a name"


def test_the_server_lists_exactly_the_declared_tools(cairn: Cairn) -> None:
    everything = {t.name: t for t in anyio.run(listed, cairn, True)}
    read_only = {t.name for t in anyio.run(listed, cairn, False)}
    declared = {t.name: t for m in modules(tools) for t in m.TOOLS}
    assert set(everything) == set(declared)
    assert read_only == {n for n, t in declared.items() if not t.write}
    for name, tool in declared.items():
        offered = everything[name]
        assert offered.description == tool.description
        assert offered.annotations.read_only_hint is not tool.write, name
        # the context a tool runs in is bound by the server, never asked of the client
        assert "ctx" not in offered.input_schema.get("properties", {}), name


def test_every_router_module_is_in_the_app_list() -> None:
    found = modules(routes)
    assert [m.router for m in found if m.router not in routes.ROUTERS] == []
    assert len(found) == len(routes.ROUTERS)


def test_every_web_page_module_is_in_the_web_list(cairn: Cairn) -> None:
    found = modules(pages)
    assert [m.router for m in found if m.router not in pages.ROUTERS] == []
    assert len(found) == len(pages.ROUTERS)
    # mount serves every declared page route, and none is in the OpenAPI document
    app = FastAPI()
    pages.mount(app, cairn)
    declared = [r for m in found for r in m.router.routes]
    assert all(isinstance(r, APIRoute) and not r.include_in_schema for r in declared)
    mounted = [r for r in app.router.routes if isinstance(r, APIRoute)]
    assert sorted(map(id, mounted)) == sorted(map(id, declared))


def test_the_openapi_document_has_exactly_the_declared_routes(cairn: Cairn) -> None:
    app = create_app(cairn, Policy.for_bind("127.0.0.1", 8765, token=None))
    doc = json.loads(anyio.run(_get, app, "/openapi.json"))
    served = {(method.upper(), path) for path, item in doc["paths"].items()
              for method in item}
    declared = {(method, route.path) for m in modules(routes) for route in m.router.routes
                if isinstance(route, APIRoute) and route.include_in_schema
                for method in route.methods}
    assert declared == served
    # a route reads the knowledge base from its request: no client ever passes it
    assert not any(p.get("name") == "cairn" for item in doc["paths"].values()
                   for op in item.values() for p in op.get("parameters", []))
