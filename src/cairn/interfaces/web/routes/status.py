"""The status page, ``/status``: the index's statistics and its registered folders."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from cairn.interfaces.web.routes.common import cairn_of, page

router = APIRouter(include_in_schema=False)


@router.get("/status")
def status_page(request: Request) -> HTMLResponse:
    """:meth:`cairn.app.Cairn.stats` and :meth:`cairn.app.Cairn.roots`, rendered."""
    cairn = cairn_of(request)
    return page("status.html", stats=cairn.stats(), roots=cairn.roots())
