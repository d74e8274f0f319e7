"""The agent-memory tools of the MCP server: remember, recall, consolidate, maintain,
pin, forget, relate, supersede and verify on a memory bundle (one ``cairn.memory.*``
call each). They change files (or, for recall, the access log), so they are listed only
when writes are enabled; the bundle must lie inside a registered folder
(``Cairn.doors.inside_roots``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from cairn.app import Cairn
from cairn.errors import CairnError
from cairn.model.serialize import to_data


@contextmanager
def _tool_errors() -> Iterator[None]:
    """cairn's errors become tool errors with their message (as the server's tools)."""
    try:
        yield
    except CairnError as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from exc

Bundle = Annotated[str, Field(
    description="The memory bundle folder, inside a registered folder", max_length=4096)]
Name = Annotated[str, Field(description="A concept or memory: file path, name or stem",
                            max_length=4096)]


def memory_tools(cairn: Cairn, lock: threading.Lock) -> list[Callable[..., dict[str, Any]]]:
    """The memory tools over ``cairn`` (all write tools: the server lists them only when
    writes are enabled); ``lock`` is the server's index run lock."""

    def where(bundle: str) -> str:
        return str(cairn.doors.inside_roots(bundle))

    def memory_remember(
        bundle: Bundle,
        text: Annotated[str, Field(description="The event, in prose", max_length=100_000)],
        memory_type: Annotated[str, Field(
            description="FACT, INSIGHT, AXIOM or CONJECTURE")] = "FACT",
        scope: Annotated[str, Field(
            description="INCARNATION, UNIVERSAL, USER or PERSONA")] = "INCARNATION",
        tags: Annotated[list[str], Field(description="Tags", max_length=64)] = [],  # noqa: B006
    ) -> dict[str, Any]:
        """Write a layer-1 memory (sealed) into the bundle and index it at once."""
        with _tool_errors(), lock:
            return dict(to_data(cairn.memory.remember(
                where(bundle), text, memory_type=memory_type, scope=scope, tags=tags)))

    def memory_recall(
        bundle: Bundle,
        query: Annotated[str, Field(description="What to recall", max_length=4096)],
        limit: Annotated[int, Field(ge=1, le=100, description="Number of hits")] = 10,
    ) -> dict[str, Any]:
        """Search the bundle's concepts and unconsolidated memories, follow concept
        relations one hop, and record the recall (Hebbian decay counts it)."""
        with _tool_errors():
            return dict(to_data(cairn.memory.recall(where(bundle), query, limit=limit)))

    def memory_consolidate(
        bundle: Bundle,
        dry_run: Annotated[bool, Field(description="Only return the diffs")] = False,
    ) -> dict[str, Any]:
        """Turn new memories into concepts (merged into similar ones) and move them to
        memories/subsumed/."""
        with _tool_errors(), lock:
            res, change = cairn.memory.consolidate(where(bundle), dry_run=dry_run)
            return {**to_data(res), "dry_run": dry_run, "diffs": list(change.diffs)}

    def memory_maintain(
        bundle: Bundle,
        dry_run: Annotated[bool, Field(description="Only return the diffs")] = False,
    ) -> dict[str, Any]:
        """One maintenance cycle: seals, symmetry, truth maintenance, Hebbian decay."""
        with _tool_errors(), lock:
            return dict(to_data(cairn.memory.maintain(where(bundle), dry_run=dry_run)))

    def memory_pin(bundle: Bundle, concept: Name,
                   pinned: Annotated[bool, Field(description="False: unpin")] = True
                   ) -> dict[str, Any]:
        """Pin a concept so it never decays (or unpin it)."""
        with _tool_errors(), lock:
            return dict(to_data(cairn.memory.pin(where(bundle), concept, pinned=pinned)))

    def memory_forget(bundle: Bundle, name: Name) -> dict[str, Any]:
        """Move a memory or concept to its archive folder (never deletes)."""
        with _tool_errors(), lock:
            return dict(to_data(cairn.memory.forget(where(bundle), name)))

    def memory_relate(
        bundle: Bundle, source: Name,
        relation: Annotated[str, Field(
            description="refines, depends_on, supports, contradicts or related")],
        target: Name,
        confidence: Annotated[float, Field(ge=0, le=1, description="0-1")] = 1.0,
    ) -> dict[str, Any]:
        """Add a typed relation between two concepts."""
        with _tool_errors(), lock:
            return dict(to_data(cairn.memory.relate(
                where(bundle), source, relation, target, confidence=confidence)))

    def memory_supersede(bundle: Bundle, concept: Name) -> dict[str, Any]:
        """Mark a concept superseded; the next maintenance supersedes its dependants."""
        with _tool_errors(), lock:
            return dict(to_data(cairn.memory.supersede(where(bundle), concept)))

    def memory_verify(bundle: Bundle) -> dict[str, Any]:
        """Recompute every memory's seal and check the bundle: name files changed
        outside cairn, memories in two folders or gone, a write left half done."""
        with _tool_errors():
            rep = cairn.memory.verify(where(bundle))
            return {**to_data(rep), "ok": rep.ok}

    return [
        memory_remember, memory_recall, memory_consolidate, memory_maintain, memory_pin,
        memory_forget, memory_relate, memory_supersede, memory_verify,
    ]
