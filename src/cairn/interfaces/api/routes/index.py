"""The index: its figures, the registered folders, and a re-index run (an admin route:
it always needs the token, see :mod:`cairn.interfaces.api.guard`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from cairn.interfaces.api.models import Data, ErrorOut
from cairn.interfaces.api.routes.common import ERRORS, cairn_of, index_lock
from cairn.model.serialize import to_data

router = APIRouter(tags=["index"])


@router.get("/v1/stats", response_model=Data)
def stats(request: Request) -> JSONResponse:
    """The index at a glance: ``cairn stats --json``."""
    cairn = cairn_of(request)
    return JSONResponse(to_data(cairn.stats()))


@router.get("/v1/roots", response_model=list[Data])
def roots(request: Request) -> JSONResponse:
    """The registered folders: ``cairn roots --json``."""
    cairn = cairn_of(request)
    return JSONResponse(to_data(cairn.roots()))


@router.post("/v1/index", response_model=Data,
             responses={**ERRORS, 401: {"model": ErrorOut, "description": "No token"},
                        403: {"model": ErrorOut, "description": "No token configured"}})
def index(request: Request) -> JSONResponse:
    """Re-index every registered folder (admin: needs the token); the run record as
    ``cairn index --json``. One run at a time; readers go on meanwhile."""
    cairn = cairn_of(request)
    with index_lock(request):  # the run on a thread of its own, at a lower CPU priority
        return JSONResponse(to_data(cairn.background.run()))
