"""What the route modules share: the open :class:`Cairn` as a dependency, the error
responses they document, and the parameters several of them take."""

from __future__ import annotations

import threading
from typing import Annotated, Any

from fastapi import Depends, Path, Query, Request

from cairn.app import Cairn
from cairn.interfaces.api.models import ErrorOut

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "A bad argument or a refused path"},
    404: {"model": ErrorOut, "description": "Nothing matches"},
}
"""The error answers a route over the notes documents."""


async def _cairn(request: Request) -> Cairn:
    """The application's knowledge base (``create_app`` puts it on ``app.state``).
    A coroutine, so FastAPI calls it on the event loop, not on a worker thread."""
    cairn: Cairn = request.app.state.cairn
    return cairn


async def _index_lock(request: Request) -> threading.Lock:
    """The application's lock: one index run at a time."""
    lock: threading.Lock = request.app.state.index_lock
    return lock


CairnDep = Annotated[Cairn, Depends(_cairn)]
"""A route's parameter for the open knowledge base (not part of the OpenAPI document)."""
IndexLock = Annotated[threading.Lock, Depends(_index_lock)]
"""A route's parameter for the index run lock."""

Id = Annotated[str, Path(min_length=1, max_length=200, description="A unit or document id")]
Node = Annotated[str, Query(min_length=1, max_length=4096,
                            description="A unit or document id, or PATH[:LINE] inside a "
                            "registered folder")]
Relations = Annotated[list[str] | None, Query(alias="relation", max_length=32,
                                              description="Only these relations (repeat)")]
