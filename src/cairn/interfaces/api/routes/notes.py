"""The notes: one unit, one document (``cairn show --json``), and the documents
changed lately."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from cairn.errors import NotFound
from cairn.interfaces.api.models import Data
from cairn.interfaces.api.routes.common import ERRORS, Id, cairn_of
from cairn.model import DocumentView, UnitView
from cairn.model.serialize import to_data

router = APIRouter(tags=["notes"], responses=ERRORS)


@router.get("/v1/units/{id}", response_model=Data)
def unit(id: Id, request: Request) -> JSONResponse:
    """One unit: ``cairn show UNIT --json`` (``{"kind": "unit", "unit", "document",
    "links", "siblings"}``)."""
    cairn = cairn_of(request)
    view = cairn.doors.get(id)
    if not isinstance(view, UnitView):
        raise NotFound(f"{id}: not a unit id")
    return JSONResponse(to_data(view))


@router.get("/v1/documents/{id}", response_model=Data)
def document(id: Id, request: Request) -> JSONResponse:
    """One document: ``cairn show DOCUMENT --json`` (``{"kind": "document",
    "document", "units", "links", "backlinks"}``)."""
    cairn = cairn_of(request)
    view = cairn.doors.get(id)
    if not isinstance(view, DocumentView):
        raise NotFound(f"{id}: not a document id")
    return JSONResponse(to_data(view))


@router.get("/v1/recent", response_model=Data)
def recent(
    request: Request,
    since: Annotated[str, Query(min_length=1, max_length=64, description="ISO date or "
                                "time (UTC), or an age: 7d, 12h, 30m")],
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many")] = 50,
) -> JSONResponse:
    """Documents whose file changed since a time, newest first."""
    cairn = cairn_of(request)
    return JSONResponse({"since": since,
                         "documents": to_data(cairn.doors.recent(since, limit=limit))})
