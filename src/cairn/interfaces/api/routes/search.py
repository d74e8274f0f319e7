"""``POST /v1/search``: the same parameters and the same JSON as ``cairn search --json``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Request
from fastapi.responses import JSONResponse

from cairn.interfaces.api.models import SearchOut, SearchRequest
from cairn.interfaces.api.routes.common import ERRORS, cairn_of
from cairn.model.search_body import search_body

router = APIRouter(tags=["search"])


@router.post("/v1/search", response_model=SearchOut, responses=ERRORS)
def search(req: Annotated[SearchRequest, Body()], request: Request) -> JSONResponse:
    """Search: the same parameters and the same JSON as ``cairn search --json``."""
    cairn = cairn_of(request)
    res = cairn.search(req.to_request())
    return JSONResponse(search_body(req.query, res))
