"""What the route modules share: the open :class:`Cairn` of a request, the error
responses they document, and the parameters several of them take."""

from __future__ import annotations

import threading
from typing import Annotated, Any

from fastapi import Path, Query, Request

from cairn.app import Cairn
from cairn.interfaces.api.models import ErrorOut

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "A bad argument or a refused path"},
    404: {"model": ErrorOut, "description": "Nothing matches"},
}
"""The error answers a route over the notes documents."""


def cairn_of(request: Request) -> Cairn:
    """The application's knowledge base (``create_app`` puts it on ``app.state``).

    A route takes the ``Request`` and calls this rather than declaring a FastAPI
    dependency: a dependency is resolved on every request, and this is the hot path."""
    cairn: Cairn = request.app.state.cairn
    return cairn


def index_lock(request: Request) -> threading.Lock:
    """The application's lock: one index run at a time."""
    lock: threading.Lock = request.app.state.index_lock
    return lock


Id = Annotated[str, Path(min_length=1, max_length=200, description="A unit or document id")]
Node = Annotated[str, Query(min_length=1, max_length=4096,
                            description="A unit or document id, or PATH[:LINE] inside a "
                            "registered folder")]
Relations = Annotated[list[str] | None, Query(alias="relation", max_length=32,
                                              description="Only these relations (repeat)")]
