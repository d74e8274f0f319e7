"""The search page, ``/``, and ``/ui/hits``, the hits fragment it fetches as you type:
one :meth:`cairn.app.Cairn.search` (with its explanation) and the facet counts of the
query, rendered."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from cairn.app import Cairn
from cairn.errors import CairnError
from cairn.interfaces.web.explain import explain_rows, facet_links
from cairn.interfaces.web.render import highlight, note_href
from cairn.interfaces.web.routes.common import Expand, Mode, Q, cairn_of, page
from cairn.model import SEARCH_MODES, SearchRequest

MODES = SEARCH_MODES
HIT_LIMIT = 20

router = APIRouter(include_in_schema=False)


@router.get("/")
def search_page(request: Request, q: Q = "", mode: Mode = "",
                expand: Expand = False) -> HTMLResponse:
    """The search page, with the hits of ``q`` when there is one."""
    return page("search.html", modes=MODES,
                **hits_context(cairn_of(request), q, mode, expand))


@router.get("/ui/hits")
def hits_fragment(request: Request, q: Q = "", mode: Mode = "",
                  expand: Expand = False) -> HTMLResponse:
    """The hits of ``q`` alone, as the search page replaces them."""
    return page("_hits.html", **hits_context(cairn_of(request), q, mode, expand))


def hits_context(cairn: Cairn, q: str, mode: str, expand: bool = False) -> dict[str, Any]:
    """What ``_hits.html`` shows of ``q``: ``{"q", "mode", "expand", "hits", "notes",
    "error", "took_ms", "facets", "facet_basis"}`` — no hits for a blank query, and the
    error's message (no hits) for a query cairn refuses."""
    base: dict[str, Any] = {"q": q, "mode": mode, "expand": expand, "hits": [],
                            "notes": [], "error": None, "took_ms": None, "facets": [],
                            "facet_basis": ""}
    if not q.strip():
        return base
    try:
        res = cairn.search(SearchRequest.of(q, mode=mode or None, limit=HIT_LIMIT,
                                            explain=True, expand=expand))
        facets = cairn.fields.facets(q, mode=mode or None)
    except CairnError as exc:
        return {**base, "error": str(exc)}
    hits = [{"hit": h, "snippet": Markup(highlight(h.snippet, h.highlights)),
             "trail": _trail(h.doc_title, h.outline_path, h.title),
             "explain": explain_rows(h.explain),
             "href": note_href(h.document_id, h.unit_id)} for h in res.hits]
    return {**base, "hits": hits, "notes": list(res.notes), "took_ms": res.took_ms,
            "facets": facet_links(q, facets), "facet_basis": (
                f"counts over the top {facets.depth} candidates"
                if facets.candidates >= facets.depth
                else f"counts over all {facets.candidates} candidate"
                + ("s" * (facets.candidates != 1)))}


def _trail(doc_title: str, outline: tuple[str, ...], title: str) -> list[str]:
    """The outline path shown above a hit: the document title, then the headings above
    the hit (repeats and the hit's own title left out)."""
    out: list[str] = []
    for part in (doc_title, *outline):
        if part and (not out or out[-1] != part):
            out.append(part)
    if out and out[-1] == title:
        out.pop()
    return out if len(out) > 1 or (out and out[0] != title) else []

