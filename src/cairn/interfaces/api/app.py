"""The HTTP API: FastAPI over one :class:`cairn.app.Cairn`, versioned under ``/v1``.

:func:`create_app` only wires: the routers of :mod:`.routes` (one module per resource;
each route calls one ``Cairn`` method and returns its result through
:func:`cairn.model.serialize.to_data`, so ``POST /v1/search`` answers exactly what
``cairn search --json`` prints), the error answers of :mod:`.errors`, the web UI, and
in front of it all :class:`~cairn.interfaces.api.guard.Guard` (Host and Origin
allowlist, bearer token, body and query size limits, the request log and metrics). The
configured CORS origins (``--cors-origin``) are served by Starlette's
``CORSMiddleware`` in front of the guard: their preflights need no token.
"""

from __future__ import annotations

import threading
from functools import partial

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp

from cairn.app import Cairn
from cairn.interfaces.api import errors
from cairn.interfaces.api.guard import Guard
from cairn.interfaces.api.observe import Metrics, index_facts
from cairn.interfaces.api.routes import ROUTERS
from cairn.interfaces.api.security import Policy


def create_app(cairn: Cairn, policy: Policy) -> ASGIApp:
    """The HTTP API over ``cairn``, guarded by ``policy``.

    Returns:
        An ASGI application (serve it with uvicorn, see
        :func:`cairn.interfaces.api.server.serve`).
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
    metrics = Metrics(partial(index_facts, cairn))
    api.state.cairn = cairn
    api.state.metrics = metrics
    api.state.index_lock = threading.Lock()  # one index run at a time
    from cairn.interfaces.web.routes import mount

    mount(api, cairn, editor_url=cairn.config.web.get("editor_url"))
    errors.install(api)
    for router in ROUTERS:
        # their routes, not the routers: FastAPI matches the routes of an included
        # router through a layer of its own on every request. Each route already
        # carries its router's tags and responses, and max_body_size above wraps
        # the whole application, these routes included
        api.router.routes.extend(router.routes)

    from cairn.interfaces.web.login import CookieLogin

    guarded: ASGIApp = Guard(api, policy, metrics)
    if policy.cors:
        # outside the guard: a browser's preflight carries no token, and a refusal the
        # guard answers to an allowed origin must still be readable by its page
        guarded = CORSMiddleware(guarded, allow_origins=sorted(policy.cors),
                                 allow_methods=["GET", "HEAD", "POST"],
                                 allow_headers=["authorization", "content-type"],
                                 max_age=600)
    return CookieLogin(guarded, policy)  # the web UI's login
