"""Every answered route is logged and counted under its own name: ``/openapi.json``
(a plain Starlette route FastAPI adds) was logged and counted as ``unmatched``."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx2
import pytest

from cairn.app import Cairn
from cairn.interfaces.api.app import create_app
from cairn.interfaces.api.security import Policy


def test_openapi_is_logged_and_counted_by_its_route(
    cairn: Cairn, port: int, uvicorn_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    policy = Policy.for_bind("127.0.0.1", port, token=None)
    with caplog.at_level(logging.INFO, logger="cairn.http"), \
            uvicorn_server(create_app(cairn, policy), port) as srv, \
            httpx2.Client(base_url=srv.url, timeout=30) as api:
        assert api.get("/openapi.json").status_code == 200
        assert api.get("/no/such/route").status_code == 404
        metrics = api.get("/metrics").text
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "cairn.http"]
    assert [(x["route"], x["status"]) for x in lines][:2] == [
        ("/openapi.json", 200), ("unmatched", 404)]
    assert 'route="/openapi.json",status="200"' in metrics
