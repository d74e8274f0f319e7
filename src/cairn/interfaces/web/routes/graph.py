"""The graph page, ``/graph/{id}``, and ``/ui/graph.json``, the subgraph it draws
(Cytoscape.js elements around a node, capped by :mod:`..graph_cap`)."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from cairn.errors import CairnError
from cairn.interfaces.web.graph_cap import cap_graph
from cairn.interfaces.web.routes.common import CSP, HEADERS, Hops, Id, cairn_of, page
from cairn.model import DocumentView, UnitView

CYTOSCAPE_STYLE = "'sha256-pgvDUBa4IjFA2yuSJ2cqcyxmNYJMborsd0ORcRv9vw8='"
"""The hash of the one stylesheet Cytoscape.js 3.34.4 adds to the page."""
GRAPH_HEADERS = {**HEADERS, "Content-Security-Policy": CSP.replace(
    "style-src 'self';", f"style-src 'self'; style-src-elem 'self' {CYTOSCAPE_STYLE}; "
    "style-src-attr 'unsafe-inline';")}
"""The graph page's headers: Cytoscape.js adds one stylesheet (allowed by its hash)
and sets ``style`` attributes on the elements it creates, so that page allows inline
style *attributes* — never inline script; note text never reaches that page's HTML
(labels are drawn on a canvas)."""

router = APIRouter(include_in_schema=False)


@router.get("/graph/{id}")
def graph_page(id: Id, request: Request, hops: Hops = 1) -> HTMLResponse:
    """The page that draws the graph around ``id`` (its script fetches the JSON); an
    id the index does not know is a 404 page."""
    try:
        view = cairn_of(request).doors.get(id)
    except CairnError as exc:
        return page("error.html", 404, message=str(exc))
    title = (view.document.title if isinstance(view, DocumentView)
             else view.unit.title if isinstance(view, UnitView) else view.path)
    return page("graph.html", headers=GRAPH_HEADERS, id=id, title=title, hops=hops)


@router.get("/ui/graph.json")
def graph_json(request: Request,
               node: Annotated[str, Query(min_length=1, max_length=4096)],
               hops: Hops = 1) -> Response:
    """The Cytoscape.js elements within ``hops`` of ``node`` (an id or a path in a
    registered folder), capped."""
    cairn = cairn_of(request)
    text = cairn.graph.export("cytoscape", around=cairn.doors.confine(node), hops=hops)
    capped = cap_graph(json.loads(text), node)
    return Response(json.dumps(capped), media_type="application/json", headers=HEADERS)
