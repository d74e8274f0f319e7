"""The maintenance tools: the dream report (read-only) and its fixes made in the note
files (``dream_apply``, a write tool: atomic, backed up, dry run by default)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from cairn.interfaces.mcp.tools.base import Tool, ToolContext
from cairn.model import UNTRUSTED_NOTICE


def dream_report(
    ctx: ToolContext,
    only: Annotated[list[str] | None, Field(
        description="Only these checks: stale, broken, orphans, thin, duplicates, "
        "entities, contradictions, integrity, tags (default: all).")] = None,
) -> dict[str, Any]:
    """The maintenance report of the notes (never changes a note): stale tasks and
    OKF concepts, broken links with candidates, orphans, thin sections, duplicates,
    missing entity notes, contradictions, integrity problems, tag spellings — each
    with file, line, evidence and a proposed fix; new / persists / fixed since the
    last stored report (this look is not stored: it changes nothing)."""
    report = ctx.cairn.maintain.run(only=only, save=False).report.as_data()
    return {**report, "notice": UNTRUSTED_NOTICE}


def dream_apply(
    ctx: ToolContext,
    only: Annotated[list[str] | None, Field(
        description="Only the fixes of these checks (default: all).")] = None,
    fix: Annotated[list[str] | None, Field(
        description="Only fixes of these kinds: retarget_link, add_org_id, mark_status, "
        "create_note, normalise_tag (default: all).")] = None,
    dry_run: Annotated[bool, Field(
        description="Only return the unified diffs; write nothing.")] = True,
    proposed: Annotated[bool, Field(
        description="Also the fixes that are only proposed (weaker evidence: a "
        "similar name, an Org tag's case); default: only the sure ones.")] = False,
) -> dict[str, Any]:
    """Make the dream report's proposed fixes in the user's note files (atomic,
    refused for a file changed since indexing, backed up: `cairn restore` undoes
    each). With dry_run (the default) only the diffs are returned."""
    with ctx.lock, ctx.cairn.background.indexing():
        run = ctx.cairn.maintain.run(only=only, fix_kinds=fix, apply=not dry_run,
                                     dry_run=dry_run, proposed=proposed)
        return run.as_data()


TOOLS = (Tool(dream_report), Tool(dream_apply, write=True))
