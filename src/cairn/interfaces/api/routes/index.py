"""The index: its figures, the registered folders, and a re-index run (an admin route:
it always needs the token, see :mod:`cairn.interfaces.api.guard`)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from cairn.interfaces.api.models import Data, ErrorOut
from cairn.interfaces.api.routes.common import ERRORS, CairnDep, IndexLock
from cairn.model.serialize import to_data

router = APIRouter(tags=["index"])


@router.get("/v1/stats", response_model=Data)
def stats(cairn: CairnDep) -> JSONResponse:
    """The index at a glance: ``cairn stats --json``."""
    return JSONResponse(to_data(cairn.stats()))


@router.get("/v1/roots", response_model=list[Data])
def roots(cairn: CairnDep) -> JSONResponse:
    """The registered folders: ``cairn roots --json``."""
    return JSONResponse(to_data(cairn.roots()))


@router.post("/v1/index", response_model=Data,
             responses={**ERRORS, 401: {"model": ErrorOut, "description": "No token"},
                        403: {"model": ErrorOut, "description": "No token configured"}})
def index(cairn: CairnDep, lock: IndexLock) -> JSONResponse:
    """Re-index every registered folder (admin: needs the token); the run record as
    ``cairn index --json``. One run at a time; readers go on meanwhile."""
    with lock:  # the run on a thread of its own, at a lower CPU priority
        return JSONResponse(to_data(cairn.index_in_background()))
