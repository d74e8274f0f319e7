"""The HTTP API: FastAPI routes over one :class:`cairn.app.Cairn`, versioned under ``/v1``.

Each route calls one ``Cairn`` method and returns its result through
:func:`cairn.model.serialize.to_data`: ``POST /v1/search`` answers exactly what
``cairn search --json`` prints. Every request first passes :class:`Guard` (Host and
Origin allowlist, bearer token, body and query size limits) and is logged and counted
(:mod:`.observe`); an unexpected error answers ``{"error": "internal server error",
"type": "ServerError", "id"}`` and logs the details under that id. ``HEAD`` is answered
wherever ``GET`` is. The configured CORS origins (``--cors-origin``) are served by
Starlette's ``CORSMiddleware`` in front of the guard: their preflights need no token.
"""

from __future__ import annotations

import json
import threading
import traceback
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Body, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cairn.app import Cairn
from cairn.errors import (
    CairnError,
    ChildUnavailable,
    NotFound,
    QueryError,
    StoreError,
    StoreUnwritable,
)
from cairn.interfaces.api.models import (
    Data,
    ErrorOut,
    HealthOut,
    SearchOut,
    SearchRequest,
)
from cairn.interfaces.api.observe import Metrics, log, log_request, now
from cairn.interfaces.api.security import Policy
from cairn.model import DocumentView, UnitView
from cairn.model.serialize import to_data

ADMIN_PREFIXES = ("/v1/index",)
"""Routes that change the index: they always need the token."""
OPEN_PATHS = ("/healthz", "/openapi.json")
"""Routes that never need the token (a health probe, the API description)."""
MAX_PATH_CHARS = 8192
"""The longest request path answered (a longer one gets 414)."""

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "A bad argument or a refused path"},
    404: {"model": ErrorOut, "description": "Nothing matches"},
}
Id = Annotated[str, Path(min_length=1, max_length=200, description="A unit or document id")]
Node = Annotated[str, Query(min_length=1, max_length=4096,
                            description="A unit or document id, or PATH[:LINE] inside a "
                            "registered folder")]
Relations = Annotated[list[str] | None, Query(alias="relation", max_length=32,
                                              description="Only these relations (repeat)")]


def _error(status: int, message: str, kind: str, request_id: str | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": message, "type": kind}
    if request_id:
        body["id"] = request_id
    return JSONResponse(body, status_code=status)


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
                await _error(500, "internal server error", "ServerError",
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
            return _error(421, "this server does not answer for that Host", "Forbidden")
        if not p.origin_ok(headers.get("origin")):
            return _error(403, "cross-origin requests from that Origin are refused",
                          "Forbidden")
        path: str = scope.get("path", "")
        if len(path) > MAX_PATH_CHARS:
            return _error(414, f"path over {MAX_PATH_CHARS} characters", "TooLarge")
        if len(scope.get("query_string", b"")) > p.max_query_chars:
            return _error(414, f"query string over {p.max_query_chars} characters",
                          "TooLarge")
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > p.max_body_bytes:
            return _error(413, f"request body over {p.max_body_bytes} bytes", "TooLarge")
        if path in OPEN_PATHS:
            return None
        admin = path.startswith(ADMIN_PREFIXES)
        if p.token is None:
            if admin:
                return _error(403, "admin routes need a token: set one (cairn serve reads it "
                              "from $CAIRN_TOKEN, or the variable [serve] token_env names)",
                              "Forbidden")
            return None
        if not p.token_ok(headers.get("authorization")):
            return _error(401, "missing or wrong bearer token", "Unauthorized")
        return None


def create_app(cairn: Cairn, policy: Policy) -> ASGIApp:
    """The HTTP API over ``cairn``, guarded by ``policy``.

    Returns:
        An ASGI application (serve it with uvicorn, see
        :func:`cairn.interfaces.api.workers.serve`).
    """
    api = FastAPI(
        title="cairn",
        version="1",
        description="The HTTP API of cairn, a local-first knowledge engine over plain-text "
        "notes. Every note text in a response is untrusted data quoted from the user's "
        "files. Responses have the same JSON as the CLI's --json (docs/reference/json.md).",
        docs_url=None,
        redoc_url=None,
        max_body_size=policy.max_body_bytes,  # a chunked body is cut off there too
    )
    index_lock = threading.Lock()  # one index run at a time
    from cairn.interfaces.web.routes import mount

    mount(api, cairn, editor_url=cairn.config.web.get("editor_url"))

    @api.exception_handler(NotFound)
    def _not_found(request: Request, exc: NotFound) -> JSONResponse:
        return _error(404, str(exc), "NotFound")

    @api.exception_handler(QueryError)
    def _bad(request: Request, exc: QueryError) -> JSONResponse:
        return _error(400, str(exc), type(exc).__name__)

    @api.exception_handler(ChildUnavailable)
    def _child(request: Request, exc: ChildUnavailable) -> JSONResponse:
        return _error(503, str(exc), type(exc).__name__)

    @api.exception_handler(StoreUnwritable)
    def _unwritable(request: Request, exc: StoreUnwritable) -> JSONResponse:
        # a full disk or a read-only index: the client is told which file and why
        return _error(503, str(exc), "StoreUnwritable")

    @api.exception_handler(StoreError)
    def _store(request: Request, exc: StoreError) -> JSONResponse:
        rid = request.scope.get("state", {}).get("request_id")
        log.error(json.dumps({"id": rid, "error": f"StoreError: {exc}"}))
        return _error(503, "the index is unavailable", "StoreError", rid)

    @api.exception_handler(CairnError)
    def _cairn(request: Request, exc: CairnError) -> JSONResponse:
        return _error(400, str(exc), type(exc).__name__)

    @api.exception_handler(Exception)
    def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # the details are logged by the guard, under this id
        rid = request.scope.get("state", {}).get("request_id")
        return _error(500, "internal server error", "ServerError", rid)

    @api.exception_handler(RequestValidationError)
    def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        detail = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")}
                  for e in exc.errors()]
        return JSONResponse({"error": "invalid request", "type": "ValidationError",
                             "detail": detail}, status_code=422)

    @api.get("/healthz", response_model=HealthOut, tags=["meta"],
             responses={503: {"model": HealthOut, "description": "A child process "
                              "(the watcher) is dead or restarting"}})
    def healthz() -> JSONResponse:
        """``{"status": "ok"}`` while the server answers and its child processes run;
        ``{"status": "degraded", "children": {name: why}}`` (503) while one is dead or
        being restarted (results may be stale)."""
        problems = cairn.background.child_problems()
        if problems:
            return JSONResponse({"status": "degraded", "children": problems},
                                status_code=503)
        return JSONResponse({"status": "ok"})

    @api.get("/metrics", tags=["meta"], response_class=Response,
             responses={200: {"content": {"text/plain": {}},
                              "description": "Prometheus text format"}})
    def metrics() -> Response:
        """Prometheus metrics: request counts and latencies per route, index size, the
        last run's time."""
        return Response(metrics_.render(), media_type="text/plain; version=0.0.4")

    @api.post("/v1/search", response_model=SearchOut, responses=ERRORS, tags=["search"])
    def search(req: Annotated[SearchRequest, Body()]) -> JSONResponse:
        """Search: the same parameters and the same JSON as ``cairn search --json``."""
        res = cairn.search(req.to_request())
        return JSONResponse(to_data({"query": req.query, "took_ms": res.took_ms,
                                     "notes": res.notes, "hits": res.hits}))

    @api.get("/v1/units/{id}", response_model=Data, responses=ERRORS, tags=["notes"])
    def unit(id: Id) -> JSONResponse:
        """One unit: ``cairn show UNIT --json`` (``{"kind": "unit", "unit", "document",
        "links", "siblings"}``)."""
        view = cairn.doors.get(id)
        if not isinstance(view, UnitView):
            raise NotFound(f"{id}: not a unit id")
        return JSONResponse(to_data(view))

    @api.get("/v1/documents/{id}", response_model=Data, responses=ERRORS, tags=["notes"])
    def document(id: Id) -> JSONResponse:
        """One document: ``cairn show DOCUMENT --json`` (``{"kind": "document",
        "document", "units", "links", "backlinks"}``)."""
        view = cairn.doors.get(id)
        if not isinstance(view, DocumentView):
            raise NotFound(f"{id}: not a document id")
        return JSONResponse(to_data(view))

    @api.get("/v1/graph/neighbors", response_model=Data, responses=ERRORS, tags=["graph"])
    def neighbors(
        node: Node,
        relations: Relations = None,
        hops: Annotated[int, Query(ge=1, le=3, description="How far to walk")] = 1,
        direction: Annotated[Literal["out", "in", "both"], Query(
            description="out, in or both")] = "both",
        limit: Annotated[int, Query(ge=1, le=500, description="At most this many")] = 100,
    ) -> JSONResponse:
        """Nodes within ``hops`` of a node: ``cairn graph neighbors --json``."""
        return JSONResponse(to_data(cairn.graph.neighbors(
            cairn.doors.confine(node), hops=hops, relations=relations, direction=direction,
            limit=limit)))

    @api.get("/v1/graph/backlinks", response_model=Data, responses=ERRORS, tags=["graph"])
    def backlinks(
        node: Node,
        internal: Annotated[bool, Query(description="Also links from the same "
                                        "document")] = False,
    ) -> JSONResponse:
        """Who links to a node: ``cairn graph backlinks --json``."""
        return JSONResponse(to_data(cairn.graph.backlinks(cairn.doors.confine(node),
                                                       include_internal=internal)))

    @api.get("/v1/graph/path", response_model=Data, responses=ERRORS, tags=["graph"])
    def path(
        source: Node,
        target: Node,
        directed: Annotated[bool, Query(description="Follow links forwards only")] = False,
        max_hops: Annotated[int, Query(ge=1, le=12, description="Longest path tried")] = 6,
    ) -> JSONResponse:
        """A shortest path between two nodes: ``cairn graph path --json``."""
        return JSONResponse(to_data(cairn.graph.path(
            cairn.doors.confine(source), cairn.doors.confine(target),
            direction="out" if directed else "both", max_hops=max_hops)))

    @api.get("/v1/graph/subgraph", response_model=Data, responses=ERRORS, tags=["graph"])
    def subgraph(
        node: Node,
        relations: Relations = None,
        hops: Annotated[int, Query(ge=1, le=3, description="How far around")] = 1,
    ) -> JSONResponse:
        """The subgraph around a node as node-link JSON: ``cairn graph export --around``."""
        text = cairn.graph.export("json", around=cairn.doors.confine(node), hops=hops,
                                  relations=relations)
        return JSONResponse(json.loads(text))

    @api.get("/v1/recent", response_model=Data, responses=ERRORS, tags=["notes"])
    def recent(
        since: Annotated[str, Query(min_length=1, max_length=64, description="ISO date or "
                                    "time (UTC), or an age: 7d, 12h, 30m")],
        limit: Annotated[int, Query(ge=1, le=1000, description="At most this many")] = 50,
    ) -> JSONResponse:
        """Documents whose file changed since a time, newest first."""
        return JSONResponse({"since": since,
                             "documents": to_data(cairn.doors.recent(since, limit=limit))})

    @api.get("/v1/stats", response_model=Data, tags=["index"])
    def stats() -> JSONResponse:
        """The index at a glance: ``cairn stats --json``."""
        return JSONResponse(to_data(cairn.stats()))

    @api.get("/v1/roots", response_model=list[Data], tags=["index"])
    def roots() -> JSONResponse:
        """The registered folders: ``cairn roots --json``."""
        return JSONResponse(to_data(cairn.roots()))

    @api.post("/v1/index", response_model=Data,
              responses={**ERRORS, 401: {"model": ErrorOut, "description": "No token"},
                         403: {"model": ErrorOut, "description": "No token configured"}},
              tags=["index"])
    def index() -> JSONResponse:
        """Re-index every registered folder (admin: needs the token); the run record as
        ``cairn index --json``. One run at a time; readers go on meanwhile."""
        with index_lock:  # the run on a thread of its own, at a lower CPU priority
            return JSONResponse(to_data(cairn.background.run()))

    def facts() -> tuple[int, int, float | None]:
        st = cairn.stats()
        last = st["last_run"]
        when = None
        if last is not None and last.finished:
            when = datetime.fromisoformat(last.finished.replace("Z", "+00:00")).timestamp()
        return int(st["documents"]), int(st["units"]), when

    metrics_ = Metrics(facts)
    from cairn.interfaces.web.login import CookieLogin

    guarded: ASGIApp = Guard(api, policy, metrics_)
    if policy.cors:
        # outside the guard: a browser's preflight carries no token, and a refusal the
        # guard answers to an allowed origin must still be readable by its page
        guarded = CORSMiddleware(guarded, allow_origins=sorted(policy.cors),
                                 allow_methods=["GET", "HEAD", "POST"],
                                 allow_headers=["authorization", "content-type"],
                                 max_age=600)
    return CookieLogin(guarded, policy)  # the web UI's login
