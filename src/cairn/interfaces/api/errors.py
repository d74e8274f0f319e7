"""How the HTTP API answers an error: one JSON shape ``{"error", "type"[, "id"]}``, and
the status each of cairn's errors maps to (:data:`HANDLERS`, installed by
:func:`install`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from cairn.errors import (
    CairnError,
    ChildUnavailable,
    NotFound,
    QueryError,
    StoreError,
    StoreUnwritable,
)
from cairn.interfaces.api.observe import log


def error(status: int, message: str, kind: str, request_id: str | None = None) -> JSONResponse:
    """The answer ``{"error": message, "type": kind[, "id": request_id]}`` with ``status``."""
    body: dict[str, Any] = {"error": message, "type": kind}
    if request_id:
        body["id"] = request_id
    return JSONResponse(body, status_code=status)


def _request_id(request: Request) -> str | None:
    """The id the guard gave this request (the one its log lines carry)."""
    rid: str | None = request.scope.get("state", {}).get("request_id")
    return rid


def not_found(request: Request, exc: Exception) -> JSONResponse:
    """404: nothing matches."""
    return error(404, str(exc), "NotFound")


def bad_request(request: Request, exc: Exception) -> JSONResponse:
    """400: a bad argument or a refused path, with cairn's reason."""
    return error(400, str(exc), type(exc).__name__)


def child_unavailable(request: Request, exc: Exception) -> JSONResponse:
    """503: a child process (the watcher, a worker) is not there to answer."""
    return error(503, str(exc), type(exc).__name__)


def unwritable(request: Request, exc: Exception) -> JSONResponse:
    """503: a full disk or a read-only index; the client is told which file and why."""
    return error(503, str(exc), "StoreUnwritable")


def store_error(request: Request, exc: Exception) -> JSONResponse:
    """503 without the details (they may name internals): logged under the request id."""
    rid = _request_id(request)
    log.error(json.dumps({"id": rid, "error": f"StoreError: {exc}"}))
    return error(503, "the index is unavailable", "StoreError", rid)


def unexpected(request: Request, exc: Exception) -> JSONResponse:
    """500, generic; the guard logs the details under the request id."""
    return error(500, "internal server error", "ServerError", _request_id(request))


def invalid(request: Request, exc: Exception) -> JSONResponse:
    """422: which parameters failed validation and why."""
    assert isinstance(exc, RequestValidationError)
    detail = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")} for e in exc.errors()]
    return JSONResponse({"error": "invalid request", "type": "ValidationError",
                         "detail": detail}, status_code=422)


HANDLERS: tuple[tuple[type[Exception], Callable[[Request, Exception], JSONResponse]], ...] = (
    (NotFound, not_found),
    (QueryError, bad_request),
    (ChildUnavailable, child_unavailable),
    (StoreUnwritable, unwritable),
    (StoreError, store_error),
    (CairnError, bad_request),
    (Exception, unexpected),
    (RequestValidationError, invalid),
)
"""Each error class and its handler (the most specific class of an error wins)."""


def install(api: FastAPI) -> None:
    """Register :data:`HANDLERS` on ``api``."""
    for kind, handler in HANDLERS:
        api.add_exception_handler(kind, handler)
