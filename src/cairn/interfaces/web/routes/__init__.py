"""The web UI's routes, one ``APIRouter`` module per page or resource: the search page
and its hits fragment (:mod:`.search`), the note page (:mod:`.notes`), the graph page
and its JSON (:mod:`.graph`), the conversations (:mod:`.conversations`), the live
updates stream (:mod:`.live`), the status page (:mod:`.status`) and the static files
(:mod:`.static`). :data:`ROUTERS` lists them; :func:`mount` adds them to the API's app.

Each page calls the :class:`cairn.app.Cairn` of its request and renders the typed
result with a Jinja2 template (autoescaping on); note text is rendered by
:mod:`cairn.interfaces.web.render` and sanitised there. Every HTML answer carries
:data:`.common.CSP` — scripts only from ``/static/``, no inline script or style, nothing
from another origin — and the pages pass the same
:class:`~cairn.interfaces.api.guard.Guard` as the API (Host/Origin allowlist, token).
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI

from cairn.app import Cairn
from cairn.interfaces.web.routes import (
    conversations,
    graph,
    live,
    notes,
    search,
    static,
    status,
)

ROUTERS: tuple[APIRouter, ...] = (
    search.router, notes.router, graph.router, conversations.router, live.router,
    status.router, static.router,
)
"""Every router of the web UI, in the order the app matches them."""


def mount(api: FastAPI, cairn: Cairn, *, editor_url: str | None = None) -> None:
    """Add the web UI's routes to ``api`` (none is in its OpenAPI description).

    Args:
        api: the HTTP API's app (:func:`cairn.interfaces.api.app.create_app`).
        cairn: the open index every page reads (put on ``api.state.cairn``).
        editor_url: the ``[web] editor_url`` template of "open in editor" links
            (``{path}``, ``{line}``), or ``None`` for none.
    """
    api.state.cairn = cairn
    api.state.editor_url = editor_url
    for router in ROUTERS:
        # the routes, not the routers: an included router adds a layer of matching
        # to every request (as create_app does with the API's)
        api.router.routes.extend(router.routes)
