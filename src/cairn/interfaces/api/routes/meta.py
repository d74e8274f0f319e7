"""``/healthz`` and ``/metrics``: is the server well, and its Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from cairn.interfaces.api.models import HealthOut
from cairn.interfaces.api.observe import Metrics
from cairn.interfaces.api.routes.common import cairn_of

router = APIRouter(tags=["meta"])


@router.get("/healthz", response_model=HealthOut,
            responses={503: {"model": HealthOut, "description": "A child process "
                             "(the watcher) is dead or restarting"}})
def healthz(request: Request) -> JSONResponse:
    """``{"status": "ok"}`` while the server answers and its child processes run;
    ``{"status": "degraded", "children": {name: why}}`` (503) while one is dead or
    being restarted (results may be stale)."""
    cairn = cairn_of(request)
    problems = cairn.background.child_problems()
    if problems:
        return JSONResponse({"status": "degraded", "children": problems}, status_code=503)
    return JSONResponse({"status": "ok"})


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {"text/plain": {}},
                             "description": "Prometheus text format"}})
def metrics(request: Request) -> Response:
    """Prometheus metrics: request counts and latencies per route, index size, the
    last run's time."""
    registry: Metrics = request.app.state.metrics
    return Response(registry.render(), media_type="text/plain; version=0.0.4")
