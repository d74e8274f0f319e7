"""What the MCP tool modules share: the context a tool runs in, a tool's declaration,
and how a declared function becomes the SDK's tool (cairn's errors as tool errors).

A tool is a plain module-level function whose first parameter is the
:class:`ToolContext`; its other parameters (with their ``Annotated`` pydantic
``Field``s) are the tool's input schema, its return annotation the output schema and
its docstring the description. :meth:`Tool.bind` hides the context parameter, so the
SDK sees exactly the tool's own parameters.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from cairn.app import Cairn
from cairn.errors import CairnError
from cairn.model import UNTRUSTED_NOTICE, DocumentView, ShowView, UnitView
from cairn.model.serialize import to_data


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What every tool runs against.

    Attributes:
        cairn: the open knowledge base.
        lock: the server's lock around anything that changes the index or a file: one
            run at a time; graph reads meanwhile see the graph as it was (see
            :meth:`Cairn.indexing`).
    """

    cairn: Cairn
    lock: threading.Lock


@dataclass(frozen=True, slots=True)
class Tool:
    """One declared tool: its function (name, parameters and docstring become the
    tool's), and whether it changes anything (``write``: listed only when writes are
    enabled)."""

    fn: Callable[..., dict[str, Any]]
    write: bool = False

    @property
    def name(self) -> str:
        """The tool's name: its function's."""
        return self.fn.__name__

    @property
    def description(self) -> str:
        """The tool's description: its function's docstring, without the indentation."""
        return inspect.cleandoc(self.fn.__doc__ or "")

    def bind(self, ctx: ToolContext) -> Callable[..., dict[str, Any]]:
        """The function the SDK registers: this tool over ``ctx``, cairn's errors
        turned into tool errors."""
        return bind(self.fn, ctx, tool_errors)


def bind(fn: Callable[..., Any], ctx: ToolContext,
         errors: Callable[[], AbstractContextManager[None]]) -> Callable[..., Any]:
    """``fn`` with its first parameter (the context) filled in by ``ctx`` and called
    inside ``errors()``; its signature and annotations are ``fn``'s without that
    parameter (resolved, as the SDK and pydantic read them)."""
    sig = inspect.signature(fn, eval_str=True)
    params = list(sig.parameters.values())[1:]

    def call(*args: Any, **kwargs: Any) -> Any:
        with errors():
            return fn(ctx, *args, **kwargs)

    call.__name__ = call.__qualname__ = fn.__name__
    call.__doc__ = fn.__doc__
    call.__module__ = fn.__module__
    call.__annotations__ = {p.name: p.annotation for p in params}
    call.__annotations__["return"] = sig.return_annotation
    setattr(call, "__signature__", sig.replace(parameters=params))  # noqa: B010
    return call


@contextmanager
def tool_errors() -> Iterator[None]:
    """cairn's errors become tool errors with their message (a clear, safe sentence);
    anything else is the SDK's generic error."""
    try:
        yield
    except CairnError as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from exc


def untrusted(data: dict[str, Any], cairn: Cairn, ids: list[str]) -> dict[str, Any]:
    """``data`` marked as quoting notes: ``notice`` and the ``provenance`` of ``ids``."""
    return {**data, "notice": UNTRUSTED_NOTICE, "provenance": to_data(cairn.doors.provenance(ids))}


def view_ids(view: ShowView) -> list[str]:
    """The ids a shown view quotes: the unit, the document, or a file's documents."""
    if isinstance(view, UnitView):
        return [view.unit.id]
    if isinstance(view, DocumentView):
        return [view.document.id]
    return [d.id for d in view.documents]
