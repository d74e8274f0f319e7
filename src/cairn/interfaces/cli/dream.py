"""``cairn dream``: the maintenance report (stale, broken, orphans, thin, duplicates,
entities, contradictions, integrity, tags) and, with ``--apply``, its fixes.

Thin: one call of :meth:`cairn.maintain.service.MaintainService.run`; Markdown for people, one JSON
document with ``--json``. Mount with :func:`register`.
"""

from __future__ import annotations

import datetime as _dt
import sys
from pathlib import Path
from typing import Annotated

import typer

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError, QueryError
from cairn.interfaces.cli._common import (
    DbOpt,
    JsonOpt,
    emit_json,
    err,
    fail,
    needs,
    plural,
    refuse_together,
)


def dream(
    apply: Annotated[
        bool, typer.Option("--apply", help="Make the proposed fixes (backed up; `cairn restore`).")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the fixes as unified diffs; write nothing.")
    ] = False,
    only: Annotated[
        list[str] | None,
        typer.Option("--only", help="Only these checks (repeatable or comma-separated): "
                     "stale, broken, orphans, thin, duplicates, entities, contradictions, "
                     "integrity, memory (agent-memory bundles), tags."),
    ] = None,
    fix: Annotated[
        list[str] | None,
        typer.Option("--fix", help="With --apply/--dry-run: only fixes of this kind "
                     "(retarget_link, add_org_id, mark_status, create_note, normalise_tag, "
                     "memory_maintain: a memory bundle's maintenance cycle; repeatable)."),
    ] = None,
    proposed: Annotated[
        bool,
        typer.Option("--proposed", help="With --apply/--dry-run: also make the fixes that "
                     "are only proposed (weaker evidence; read them first)."),
    ] = False,
    today: Annotated[
        str | None,
        typer.Option("--today", help="Take this date (YYYY-MM-DD) as today.", show_default=False),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", help="Findings shown per check in Markdown (--json: all).")
    ] = 50,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Find what is stale, broken, orphaned or thin, and mend it.

    The report lists each finding with its file and line and says what is new, what
    persists and what was fixed since the last report (the index keeps the last ones).
    Nothing is written without --apply; --dry-run shows the diffs first. A fix with
    weaker evidence (a similar name, an Org tag's case) is only proposed: --proposed
    makes it too. With --apply, the exit status is 1 when a file was refused.

      cairn dream                      # the report, as Markdown

      cairn dream --only stale,broken --json

      cairn dream --dry-run --fix retarget_link

      cairn dream --apply              # then `cairn restore --list`
    """
    refuse_together(("--apply", apply), ("--dry-run", dry_run))
    needs("--fix", fix, "--apply or --dry-run", apply or dry_run)
    needs("--proposed", proposed, "--apply or --dry-run", apply or dry_run)
    try:
        day = _dt.date.fromisoformat(today) if today else None
    except ValueError:
        raise fail(QueryError(f"--today {today!r} is not a YYYY-MM-DD date"), as_json) from None
    try:
        with common.open_cairn(db) as cairn:
            cairn.maintain.validate(only, fix)  # a bad name is refused before any work
            err.print("[dim]dream: checking the index…[/dim]")
            run = cairn.maintain.run(only=only or None, apply=apply, dry_run=dry_run,
                              fix_kinds=fix or None, today=day, proposed=proposed)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    # with --apply a file left unwritten (a full or unwritable backup folder, a file
    # changed since indexing) is a failure the exit status says (1), not a footnote
    refused = [c for c in run.changes if c.action == "refused"] if run.applied else []
    if as_json:
        emit_json(run.as_data())
        if refused:
            raise typer.Exit(1)
        return
    for c in run.changes:
        if dry_run and c.diff:
            sys.stdout.write(c.diff)
        tag = {"changed": "changed", "created": "created", "planned": "would change",
               "refused": "refused"}.get(c.action, c.action)
        backup = f" (backup {c.backup})" if c.backup else ""
        why = f": {c.reason}" if c.reason else ""
        err.print(f"{tag} {Path(c.path)}{backup}{why}", markup=False)
    if run.changes:
        n = sum(c.action in ("changed", "created") for c in run.changes)
        err.print(f"{plural(n, 'file')} written" if run.applied else
                  f"{plural(len(run.changes), 'file')} would change (nothing written)",
                  markup=False)
    sys.stdout.write(run.markdown(limit=limit))
    sys.stdout.write("\n")
    if refused:
        err.print(f"error: {len(refused)} of {len(run.changes)} files were not changed "
                  "(see `refused` above)", markup=False)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Mount ``cairn dream``."""
    app.command("dream")(dream)
