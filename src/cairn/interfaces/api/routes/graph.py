"""The typed graph: neighbours, backlinks, a shortest path and the subgraph around a
node (``cairn graph … --json``); every node is confined to the registered folders."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from cairn.interfaces.api.models import Data
from cairn.interfaces.api.routes.common import ERRORS, Node, Relations, cairn_of
from cairn.model.serialize import to_data

router = APIRouter(tags=["graph"], responses=ERRORS)


@router.get("/v1/graph/neighbors", response_model=Data)
def neighbors(
    request: Request,
    node: Node,
    relations: Relations = None,
    hops: Annotated[int, Query(ge=1, le=3, description="How far to walk")] = 1,
    direction: Annotated[Literal["out", "in", "both"], Query(
        description="out, in or both")] = "both",
    limit: Annotated[int, Query(ge=1, le=500, description="At most this many")] = 100,
) -> JSONResponse:
    """Nodes within ``hops`` of a node: ``cairn graph neighbors --json``."""
    cairn = cairn_of(request)
    return JSONResponse(to_data(cairn.graph.neighbors(
        cairn.doors.confine(node), hops=hops, relations=relations, direction=direction,
        limit=limit)))


@router.get("/v1/graph/backlinks", response_model=Data)
def backlinks(
    request: Request,
    node: Node,
    internal: Annotated[bool, Query(description="Also links from the same "
                                    "document")] = False,
) -> JSONResponse:
    """Who links to a node: ``cairn graph backlinks --json``."""
    cairn = cairn_of(request)
    return JSONResponse(to_data(cairn.graph.backlinks(cairn.doors.confine(node),
                                                      include_internal=internal)))


@router.get("/v1/graph/path", response_model=Data)
def path(
    request: Request,
    source: Node,
    target: Node,
    directed: Annotated[bool, Query(description="Follow links forwards only")] = False,
    max_hops: Annotated[int, Query(ge=1, le=12, description="Longest path tried")] = 6,
) -> JSONResponse:
    """A shortest path between two nodes: ``cairn graph path --json``."""
    cairn = cairn_of(request)
    return JSONResponse(to_data(cairn.graph.path(
        cairn.doors.confine(source), cairn.doors.confine(target),
        direction="out" if directed else "both", max_hops=max_hops)))


@router.get("/v1/graph/subgraph", response_model=Data)
def subgraph(
    request: Request,
    node: Node,
    relations: Relations = None,
    hops: Annotated[int, Query(ge=1, le=3, description="How far around")] = 1,
) -> JSONResponse:
    """The subgraph around a node as node-link JSON: ``cairn graph export --around``."""
    cairn = cairn_of(request)
    return JSONResponse(to_data(cairn.graph.subgraph(
        cairn.doors.confine(node), hops=hops, relations=relations)))
