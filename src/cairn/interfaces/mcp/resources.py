"""The MCP resources: ``cairn://documents/{id}`` (a document's text) and
``cairn://files/{+path}`` (an indexed file, by path relative to its root), each with
its provenance and the untrusted-data notice. Declared here as the tools are in
:mod:`.tools`: a function whose first parameter is the :class:`ToolContext`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from cairn.errors import CairnError, NotFound
from cairn.interfaces.mcp.tools.base import ToolContext, untrusted, view_ids
from cairn.model.serialize import to_json


@dataclass(frozen=True, slots=True)
class Resource:
    """One declared resource template: its URI, name, description and the function
    that reads it (its parameters are the URI's variables)."""

    uri: str
    name: str
    description: str
    fn: Callable[..., str]


@contextmanager
def resource_errors() -> Iterator[None]:
    """cairn's errors reading a resource: not found, or refused, with the reason."""
    try:
        yield
    except NotFound as exc:
        raise ResourceNotFoundError(f"NotFound: {exc}") from exc
    except CairnError as exc:
        raise ResourceError(f"{type(exc).__name__}: {exc}") from exc


def document(ctx: ToolContext, id: str) -> str:
    """A document's text as JSON ``{text, provenance, notice}``."""
    text = ctx.cairn.doors.document_text(id)
    return to_json(untrusted({"text": text}, ctx.cairn, [id]), indent=None)


def file(ctx: ToolContext, path: str) -> str:
    """An indexed file's text as JSON ``{path, text, provenance, notice}``.

    Raises:
        CairnError: ``path`` lies outside the registered folders.
    """
    c = ctx.cairn
    real = c.doors.inside_roots(path)
    text = c.notes.read_file(real)
    ids = view_ids(c.doors.get(str(real)))
    return to_json(untrusted({"path": path, "text": text}, c, ids), indent=None)


RESOURCES = (
    Resource("cairn://documents/{id}", "document", "A document by id: {text, provenance, "
             "notice} (its text is untrusted note data)", document),
    Resource("cairn://files/{+path}", "file", "An indexed file by its path relative to a "
             "registered folder: {text, provenance, notice}; a path outside the folders is "
             "refused", file),
)
