"""The HTTP API against a real uvicorn server on loopback: the routes, the security
checks (Host/Origin, token, sizes, paths), generic server errors, logs and metrics."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.errors import QueryError
from cairn.interfaces.api.app import create_app
from cairn.interfaces.api.models import HitOut, SearchRequest
from cairn.interfaces.api.security import Policy, is_loopback
from cairn.interfaces.cli import app as cli
from cairn.model import Hit
from cairn.model.serialize import to_data


@pytest.fixture
def api(cairn: Cairn, port: int, uvicorn_server: Any) -> Iterator[httpx2.Client]:
    """A client of a server with the default policy (loopback, no token)."""
    policy = Policy.for_bind("127.0.0.1", port, token=None)
    with uvicorn_server(create_app(cairn, policy), port) as srv, \
            httpx2.Client(base_url=srv.url, timeout=30) as client:
        yield client


def serve(cairn: Cairn, port: int, uvicorn_server: Any, **policy: Any) -> Any:
    return uvicorn_server(create_app(cairn, Policy.for_bind("127.0.0.1", port, **policy)), port)


def test_search_answers_what_cli_json_prints(api: httpx2.Client, vault: Any) -> None:
    r = api.post("/v1/search", json={"query": "compost", "limit": 3})
    assert r.status_code == 200
    cli_out = CliRunner().invoke(cli, ["--db", str(vault.db), "search", "compost",
                                       "--limit", "3", "--json"])
    expected = json.loads(cli_out.stdout)
    got = r.json()
    assert set(got) == set(expected) == {"query", "took_ms", "notes", "hits"}
    assert got["hits"] == expected["hits"] and got["hits"]


def test_units_documents_graph_stats_roots(api: httpx2.Client, cairn: Cairn) -> None:
    view = cairn.doors.get("projects/garden.org:15")
    unit_id = view.unit.id  # type: ignore[union-attr]
    doc_id = view.unit.document_id  # type: ignore[union-attr]
    u = api.get(f"/v1/units/{unit_id}").json()
    assert u == to_data(view)
    d = api.get(f"/v1/documents/{doc_id}").json()
    assert d["kind"] == "document" and d["document"]["id"] == doc_id
    assert api.get(f"/v1/units/{doc_id}").status_code == 404
    assert api.get(f"/v1/documents/{unit_id}").status_code == 404
    assert api.get("/v1/units/no-such-id").json()["type"] == "NotFound"
    b = api.get("/v1/graph/backlinks", params={"node": doc_id}).json()
    assert b["count"] >= 1
    n = api.get("/v1/graph/neighbors", params={"node": "projects/garden.org", "hops": 2})
    assert n.status_code == 200 and n.json()["neighbors"]
    p = api.get("/v1/graph/path", params={"source": "projects/garden.org",
                                          "target": "reference/composting.md"}).json()
    assert p["length"] is not None
    s = api.get("/v1/graph/subgraph", params={"node": doc_id}).json()
    assert s["nodes"] and s["edges"]
    # the body is the typed subgraph's, which is the node-link export around the node
    assert s == to_data(cairn.graph.subgraph(doc_id))
    assert s == json.loads(cairn.graph.export("json", around=doc_id))
    assert api.get("/v1/stats").json()["documents"] == cairn.stats().documents
    assert api.get("/v1/roots").json() == to_data(cairn.roots())
    assert api.get("/v1/recent", params={"since": "2000-01-01"}).json()["documents"]
    assert api.get("/v1/recent", params={"since": "yesterday"}).status_code == 400
    assert api.get("/healthz").json() == {"status": "ok"}


def test_paths_out_of_the_roots_are_refused(api: httpx2.Client, bad_refs: list[str]) -> None:
    for ref in [*bad_refs, "..%252foutside%252fsecret.md"]:
        for route in ("/v1/graph/backlinks", "/v1/graph/neighbors", "/v1/graph/subgraph"):
            r = api.get(route, params={"node": ref})
            assert r.status_code in (400, 404, 422), (route, ref, r.status_code)
            assert "never to be served" not in r.text
    r = api.get("/v1/graph/backlinks", params={"node": "../outside/secret.md"})
    assert r.status_code == 400 and "refused" in r.json()["error"]
    # a raw NUL and an encoded traversal in the path of the URL itself
    assert api.get("/v1/units/%00").status_code in (400, 404)
    assert api.get("/v1/documents/..%2F..%2Fetc%2Fpasswd").status_code in (400, 404)


def test_forged_host_and_origin_are_refused(api: httpx2.Client) -> None:
    r = api.get("/v1/stats", headers={"Host": "attacker.example"})
    assert r.status_code == 421 and r.json()["type"] == "Forbidden"
    r = api.get("/v1/stats", headers={"Host": "attacker.example:8765"})
    assert r.status_code == 421
    r = api.post("/v1/search", json={"query": "x"}, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403
    assert "access-control-allow-origin" not in r.headers
    assert api.get("/v1/stats", headers={"Host": "localhost"}).status_code == 200


def test_a_configured_cors_origin_is_let_through(cairn: Cairn, port: int,
                                                 uvicorn_server: Any) -> None:
    origin = "http://localhost:5173"
    with serve(cairn, port, uvicorn_server, token=None, cors_origins=(origin,)) as srv:
        r = httpx2.get(f"{srv.url}/v1/stats", headers={"Origin": origin})
        assert r.status_code == 200
        assert httpx2.get(f"{srv.url}/v1/stats",
                          headers={"Origin": "http://localhost:5174"}).status_code == 403


@pytest.mark.parametrize("token", [None, "cors-test-token"])
def test_an_allowed_origin_gets_cors_headers_and_its_preflight_needs_no_token(
        cairn: Cairn, port: int, uvicorn_server: Any, token: str | None) -> None:
    origin, other = "http://localhost:5173", "http://evil.example"
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    with serve(cairn, port, uvicorn_server, token=token, cors_origins=(origin,)) as srv:
        for path, method in (("/healthz", "GET"), ("/v1/search", "POST")):
            r = httpx2.options(f"{srv.url}{path}", headers={
                "Origin": origin, "Access-Control-Request-Method": method,
                "Access-Control-Request-Headers": "authorization, content-type"})
            assert r.status_code == 200, (path, r.status_code, r.text)
            assert r.headers["access-control-allow-origin"] == origin
            assert method in r.headers["access-control-allow-methods"]
            assert "authorization" in r.headers["access-control-allow-headers"].lower()
        r = httpx2.get(f"{srv.url}/healthz", headers={"Origin": origin})
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == origin
        r = httpx2.post(f"{srv.url}/v1/search", json={"query": "compost"},
                        headers={"Origin": origin, **auth})
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == origin
        r = httpx2.options(f"{srv.url}/healthz", headers={
            "Origin": other, "Access-Control-Request-Method": "GET"})
        assert r.status_code >= 400 and "access-control-allow-origin" not in r.headers
        r = httpx2.get(f"{srv.url}/healthz", headers={"Origin": other})
        assert r.status_code == 403 and "access-control-allow-origin" not in r.headers
        if token:
            r = httpx2.get(f"{srv.url}/v1/stats", headers={"Origin": origin})
            assert r.status_code == 401  # the preflight is open, the request is not


def test_no_cors_headers_without_a_configured_origin(api: httpx2.Client) -> None:
    r = api.get("/healthz", headers={"Origin": api.base_url.__str__().rstrip("/")})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers


def test_a_non_loopback_bind_needs_a_token(vault: Any) -> None:
    with pytest.raises(QueryError, match="loopback"):
        Policy.for_bind("0.0.0.0", 8765, token=None)
    with pytest.raises(QueryError, match="empty"):
        Policy.for_bind("0.0.0.0", 8765, token="  ")
    assert Policy.for_bind("0.0.0.0", 8765, token="s3cret").token == "s3cret"
    assert is_loopback("::1") and is_loopback("127.0.0.2") and not is_loopback("10.0.0.1")
    res = CliRunner().invoke(cli, ["serve", "--db", str(vault.db), "--host", "0.0.0.0"],
                             env={"CAIRN_TOKEN": ""})
    assert res.exit_code == 2 and "loopback" in res.output


def test_token_guards_every_route_and_admin_always(cairn: Cairn, port: int,
                                                   uvicorn_server: Any) -> None:
    token = "correct-horse-battery-staple"
    with serve(cairn, port, uvicorn_server, token=token) as srv:
        url = srv.url
        assert httpx2.get(f"{url}/v1/stats").status_code == 401
        assert httpx2.get(f"{url}/v1/stats",
                          headers={"Authorization": f"Bearer {token}x"}).status_code == 401
        assert httpx2.get(f"{url}/v1/stats",
                          headers={"Authorization": f"Basic {token}"}).status_code == 401
        assert httpx2.get(f"{url}/healthz").status_code == 200
        ok = {"Authorization": f"Bearer {token}"}
        assert httpx2.get(f"{url}/v1/stats", headers=ok).status_code == 200
        assert httpx2.post(f"{url}/v1/index").status_code == 401
        r = httpx2.post(f"{url}/v1/index", headers=ok, timeout=60)
        assert r.status_code == 200 and r.json()["unchanged"] > 0
    policy = Policy.for_bind("127.0.0.1", 1, token=token)
    assert policy.token_ok(f"Bearer {token}") and not policy.token_ok(f"Bearer {token[:-1]}")


def test_admin_routes_are_refused_without_a_token(api: httpx2.Client) -> None:
    r = api.post("/v1/index")
    assert r.status_code == 403 and "token" in r.json()["error"]


def test_body_and_query_sizes_are_limited(api: httpx2.Client) -> None:
    big = json.dumps({"query": "x" * 70000})
    r = api.post("/v1/search", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413

    def chunks() -> Iterator[bytes]:
        yield b'{"query": "'
        for _ in range(100):
            yield b"y" * 1000
        yield b'"}'

    r = api.post("/v1/search", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    r = api.get("/v1/graph/neighbors", params={"node": "n" * 5000})
    assert r.status_code == 414 and "query string over 4096" in r.json()["error"]
    r = api.get("/v1/documents/" + "p" * 9000)
    assert r.status_code == 414 and r.json()["error"] == "path over 8192 characters"
    r = api.head("/healthz")
    assert r.status_code == 200 and r.content == b""
    r = api.post("/v1/search", json={"query": "q" * 5000})
    assert r.status_code == 422
    r = api.post("/v1/search", json={"query": "x", "limit": 0})
    assert r.status_code == 422 and r.json()["type"] == "ValidationError"


class _Broken(Cairn):
    """A Cairn whose stats fail unexpectedly (a bug), to see what a client is told."""

    def stats(self) -> dict[str, Any]:
        raise RuntimeError("secret detail /home/someone/notes.db")


def test_a_server_error_is_generic_with_an_id_and_the_details_go_to_the_log(
    cairn: Cairn, port: int, uvicorn_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    broken = _Broken(cairn.config, store=cairn.store)
    policy = Policy.for_bind("127.0.0.1", port, token=None)
    with caplog.at_level(logging.INFO, logger="cairn.http"), \
            uvicorn_server(create_app(broken, policy), port) as srv:
        r = httpx2.get(f"{srv.url}/v1/stats")
    assert r.status_code == 500
    body = r.json()
    assert body["error"] == "internal server error" and body["type"] == "ServerError"
    assert "secret detail" not in r.text and len(body["id"]) == 16
    logged = "\n".join(rec.getMessage() for rec in caplog.records)
    assert body["id"] in logged and "secret detail" in logged


def test_one_json_log_line_per_request(api: httpx2.Client,
                                       caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="cairn.http"):
        api.post("/v1/search", json={"query": "compost"})
        api.get("/v1/units/nope")
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "cairn.http"]
    assert [(x["route"], x["status"]) for x in lines] == [
        ("/v1/search", 200), ("/v1/units/{id}", 404)]
    assert all({"ts", "id", "method", "ms"} <= set(x) for x in lines)


def test_metrics(api: httpx2.Client, cairn: Cairn) -> None:
    api.post("/v1/search", json={"query": "compost"})
    text = api.get("/metrics").text
    assert 'cairn_http_requests_total{method="POST",route="/v1/search",status="200"} 1.0' in text
    assert "cairn_http_request_seconds_bucket" in text
    assert f"cairn_index_documents {float(cairn.stats().documents)}" in text
    assert "cairn_index_last_run_timestamp_seconds" in text


def test_openapi_documents_every_field(api: httpx2.Client) -> None:
    spec = api.get("/openapi.json").json()
    paths = set(spec["paths"])
    assert {"/v1/search", "/v1/units/{id}", "/v1/documents/{id}", "/v1/graph/neighbors",
            "/v1/graph/backlinks", "/v1/graph/path", "/v1/graph/subgraph", "/v1/stats",
            "/v1/roots", "/v1/index", "/healthz", "/metrics"} <= paths
    for name in ("SearchRequest", "SearchOut", "HitOut", "ErrorOut", "TimestampOut"):
        schema = spec["components"]["schemas"][name]
        for field, prop in schema["properties"].items():
            assert prop.get("description"), f"{name}.{field} has no description"
    for path, ops in spec["paths"].items():
        for op in ops.values():
            assert op.get("description") or op.get("summary"), path
            for param in op.get("parameters", []):
                assert param.get("description"), (path, param["name"])
    import dataclasses

    assert list(HitOut.model_fields) == [f.name for f in dataclasses.fields(Hit)]
    assert set(SearchRequest.model_fields) == {"query", "mode", "limit", "offset", "explain",
                                               "alternates", "expand", "sort", "rerank"}
