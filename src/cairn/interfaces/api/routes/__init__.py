"""The HTTP API's routes, one ``APIRouter`` module per resource; :data:`ROUTERS` is the
list ``create_app`` includes, in the order the OpenAPI document lists them. A new route
goes into its resource's module; a new resource is a module added here."""

from __future__ import annotations

from fastapi import APIRouter

from cairn.interfaces.api.routes import graph, index, meta, notes, search

ROUTERS: tuple[APIRouter, ...] = (
    meta.router, search.router, notes.router, graph.router, index.router,
)
"""Every router of the API."""
