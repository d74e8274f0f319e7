"""The files the pages load, ``/static/{name}`` (shipped in ``web/static``, nothing
fetched at run time), and ``/favicon.ico`` (none)."""

from __future__ import annotations

from importlib.resources import files
from typing import Annotated

from fastapi import APIRouter, Path
from fastapi.responses import Response

from cairn.errors import NotFound

STATIC = files("cairn.interfaces.web") / "static"
STATIC_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png",
                ".svg": "image/svg+xml", ".txt": "text/plain"}

router = APIRouter(include_in_schema=False)


@router.get("/favicon.ico")
def favicon() -> Response:
    """No content: there is no icon, and no 404 in the browser's console."""
    return Response(status_code=204)


@router.get("/static/{name}")
def static_file(name: Annotated[str, Path(pattern=r"^[a-z0-9][a-z0-9_.-]*$")]) -> Response:
    """One file of ``web/static`` by its lower-case name, with its media type.

    Raises:
        NotFound: no such file, or a kind of file the UI does not serve.
    """
    suffix = name[name.rfind("."):] if "." in name else ""
    item = STATIC / name
    if suffix not in STATIC_TYPES or not item.is_file():
        raise NotFound(f"{name}: no such file")
    return Response(item.read_bytes(), media_type=STATIC_TYPES[suffix],
                    headers={"X-Content-Type-Options": "nosniff",
                             "Cache-Control": "max-age=300"})
