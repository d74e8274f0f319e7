"""The guard in front of every HTTP route: a request id, the security checks (Host and
Origin allowlist, bearer token, size limits), the JSON log line and the metrics, and
the generic answer to an unexpected error (its details logged under the request id).
``HEAD`` is answered wherever ``GET`` is."""

from __future__ import annotations

import json
import traceback
import uuid

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cairn.interfaces.api.errors import error
from cairn.interfaces.api.observe import Metrics, log, log_request, now
from cairn.interfaces.api.security import Policy

ADMIN_PREFIXES = ("/v1/index",)
"""Routes that change the index: they always need the token."""
OPEN_PATHS = ("/healthz", "/openapi.json")
"""Routes that never need the token (a health probe, the API description)."""
MAX_PATH_CHARS = 8192
"""The longest request path answered (a longer one gets 414)."""


class Guard:
    """ASGI middleware in front of every route: request id, the security checks, the
    log line and the metrics, and the generic answer to an unexpected error."""

    def __init__(self, app: ASGIApp, policy: Policy, metrics: Metrics) -> None:
        self.app, self.policy, self.metrics = app, policy, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = request_id
        method: str = scope["method"]
        if method == "HEAD":  # HEAD answers wherever GET does: the GET, without its body
            scope = {**scope, "method": "GET"}  # a copy: the server's own stays HEAD
        t0 = now()
        state = {"status": 500, "started": False, "done": False}

        def finish() -> None:
            """Count and log the request once, before its last byte goes out (a client
            that has its answer finds the log line written)."""
            if state["done"]:
                return
            state["done"] = True
            name = self._route_name(scope)
            seconds = now() - t0
            status = int(state["status"])
            self.metrics.observe(name, method, status, seconds)
            log_request(request_id, method, name, status, seconds * 1000)

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                state["status"] = int(message["status"])
                state["started"] = True
            elif message["type"] == "http.response.body":
                if method == "HEAD":
                    message = {**message, "body": b""}
                if not message.get("more_body"):
                    finish()
            await send(message)

        refusal = self._refuse(scope)
        try:
            if refusal is not None:
                await refusal(scope, receive, send_wrapper)
            else:
                await self.app(scope, receive, send_wrapper)
        except Exception:
            log.error(json.dumps({"id": request_id, "error": traceback.format_exc()}))
            if not state["started"]:
                await error(500, "internal server error", "ServerError",
                             request_id)(scope, receive, send_wrapper)
        finally:
            finish()

    def _route_name(self, scope: Scope) -> str:
        """The matched route's path template (``/v1/units/{id}``), else ``unmatched``.
        A plain Starlette route FastAPI adds (``/openapi.json``) leaves no ``route``
        in the scope, only its endpoint: it is found by that."""
        name = getattr(scope.get("route"), "path", None)
        endpoint = scope.get("endpoint")
        if not name and endpoint is not None:
            for r in getattr(self.app, "routes", ()):
                if getattr(r, "endpoint", None) is endpoint:
                    name = getattr(r, "path", None)
                    break
        return str(name) if name else "unmatched"

    def _refuse(self, scope: Scope) -> JSONResponse | None:
        """The answer that refuses this request, or ``None`` to let it through."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        p = self.policy
        if not p.host_ok(headers.get("host")):
            return error(421, "this server does not answer for that Host", "Forbidden")
        if not p.origin_ok(headers.get("origin")):
            return error(403, "cross-origin requests from that Origin are refused",
                          "Forbidden")
        path: str = scope.get("path", "")
        if len(path) > MAX_PATH_CHARS:
            return error(414, f"path over {MAX_PATH_CHARS} characters", "TooLarge")
        if len(scope.get("query_string", b"")) > p.max_query_chars:
            return error(414, f"query string over {p.max_query_chars} characters",
                          "TooLarge")
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > p.max_body_bytes:
            return error(413, f"request body over {p.max_body_bytes} bytes", "TooLarge")
        if path in OPEN_PATHS:
            return None
        admin = path.startswith(ADMIN_PREFIXES)
        if p.token is None:
            if admin:
                return error(403, "admin routes need a token: set one (cairn serve reads it "
                              "from $CAIRN_TOKEN, or the variable [serve] token_env names)",
                              "Forbidden")
            return None
        if not p.token_ok(headers.get("authorization")):
            return error(401, "missing or wrong bearer token", "Unauthorized")
        return None
