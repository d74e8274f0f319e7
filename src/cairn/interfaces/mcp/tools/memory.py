"""The agent-memory tools: remember, recall, consolidate, maintain, pin, forget,
relate, supersede and verify on a memory bundle (one ``cairn.memory.*`` call each).
They change files (or, for recall, the access log), so they are all write tools, listed
only when writes are enabled; the bundle must lie inside a registered folder."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from cairn.interfaces.mcp.tools.base import Tool, ToolContext
from cairn.model.serialize import to_data

Bundle = Annotated[str, Field(
    description="The memory bundle folder, inside a registered folder", max_length=4096)]
Name = Annotated[str, Field(description="A concept or memory: file path, name or stem",
                            max_length=4096)]


def _where(ctx: ToolContext, bundle: str) -> str:
    """The bundle's real path, refused outside the registered folders."""
    return str(ctx.cairn.doors.inside_roots(bundle))


def memory_remember(
    ctx: ToolContext,
    bundle: Bundle,
    text: Annotated[str, Field(description="The event, in prose", max_length=100_000)],
    memory_type: Annotated[str, Field(
        description="FACT, INSIGHT, AXIOM or CONJECTURE")] = "FACT",
    scope: Annotated[str, Field(
        description="INCARNATION, UNIVERSAL, USER or PERSONA")] = "INCARNATION",
    tags: Annotated[list[str], Field(description="Tags", max_length=64)] = [],  # noqa: B006
) -> dict[str, Any]:
    """Write a layer-1 memory (sealed) into the bundle and index it at once."""
    with ctx.lock:
        return dict(to_data(ctx.cairn.memory.remember(
            _where(ctx, bundle), text, memory_type=memory_type, scope=scope, tags=tags)))


def memory_recall(
    ctx: ToolContext,
    bundle: Bundle,
    query: Annotated[str, Field(description="What to recall", max_length=4096)],
    limit: Annotated[int, Field(ge=1, le=100, description="Number of hits")] = 10,
) -> dict[str, Any]:
    """Search the bundle's concepts and unconsolidated memories, follow concept
    relations one hop, and record the recall (Hebbian decay counts it)."""
    return dict(to_data(ctx.cairn.memory.recall(_where(ctx, bundle), query, limit=limit)))


def memory_consolidate(
    ctx: ToolContext,
    bundle: Bundle,
    dry_run: Annotated[bool, Field(description="Only return the diffs")] = False,
) -> dict[str, Any]:
    """Turn new memories into concepts (merged into similar ones) and move them to
    memories/subsumed/."""
    with ctx.lock:
        res, change = ctx.cairn.memory.consolidate(_where(ctx, bundle), dry_run=dry_run)
        return {**to_data(res), "dry_run": dry_run, "diffs": list(change.diffs)}


def memory_maintain(
    ctx: ToolContext,
    bundle: Bundle,
    dry_run: Annotated[bool, Field(description="Only return the diffs")] = False,
) -> dict[str, Any]:
    """One maintenance cycle: seals, symmetry, truth maintenance, Hebbian decay."""
    with ctx.lock:
        return dict(to_data(ctx.cairn.memory.maintain(_where(ctx, bundle), dry_run=dry_run)))


def memory_pin(
    ctx: ToolContext, bundle: Bundle, concept: Name,
    pinned: Annotated[bool, Field(description="False: unpin")] = True,
) -> dict[str, Any]:
    """Pin a concept so it never decays (or unpin it)."""
    with ctx.lock:
        return dict(to_data(ctx.cairn.memory.pin(_where(ctx, bundle), concept,
                                                 pinned=pinned)))


def memory_forget(ctx: ToolContext, bundle: Bundle, name: Name) -> dict[str, Any]:
    """Move a memory or concept to its archive folder (never deletes)."""
    with ctx.lock:
        return dict(to_data(ctx.cairn.memory.forget(_where(ctx, bundle), name)))


def memory_relate(
    ctx: ToolContext, bundle: Bundle, source: Name,
    relation: Annotated[str, Field(
        description="refines, depends_on, supports, contradicts or related")],
    target: Name,
    confidence: Annotated[float, Field(ge=0, le=1, description="0-1")] = 1.0,
) -> dict[str, Any]:
    """Add a typed relation between two concepts."""
    with ctx.lock:
        return dict(to_data(ctx.cairn.memory.relate(
            _where(ctx, bundle), source, relation, target, confidence=confidence)))


def memory_supersede(ctx: ToolContext, bundle: Bundle, concept: Name) -> dict[str, Any]:
    """Mark a concept superseded; the next maintenance supersedes its dependants."""
    with ctx.lock:
        return dict(to_data(ctx.cairn.memory.supersede(_where(ctx, bundle), concept)))


def memory_verify(ctx: ToolContext, bundle: Bundle) -> dict[str, Any]:
    """Recompute every memory's seal and check the bundle: name files changed
    outside cairn, memories in two folders or gone, a write left half done."""
    rep = ctx.cairn.memory.verify(_where(ctx, bundle))
    return {**to_data(rep), "ok": rep.ok}


TOOLS = tuple(Tool(fn, write=True) for fn in (
    memory_remember, memory_recall, memory_consolidate, memory_maintain, memory_pin,
    memory_forget, memory_relate, memory_supersede, memory_verify,
))
