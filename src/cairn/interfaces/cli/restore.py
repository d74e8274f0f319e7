"""``cairn restore``: put back bytes that safe write-back kept (every file cairn ever
changed is backed up first). Thin: :meth:`cairn.maintain.service.MaintainService.restore` and
:meth:`~cairn.maintain.service.MaintainService.list_backups`. Mount with :func:`register`."""

from __future__ import annotations

from typing import Annotated

import typer

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, JsonOpt, emit_json, fail, out


def restore(
    backup_id: Annotated[
        str | None,
        typer.Argument(
            metavar="[ID]", help="A backup id (or a unique prefix); default: the newest."
        ),
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the backups instead.")] = False,
    prune: Annotated[
        bool,
        typer.Option(
            "--prune",
            help="Drop old backups instead, by \\[writeback] keep_days and keep_per_file "
            "(the newest copy of each file stays).",
        ),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="With --prune: say what would go; change nothing.")
    ] = False,
    path: Annotated[
        str | None, typer.Option("--path", help="With --list: only backups of this file.")
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Put a backup back, --list the backups, or --prune old ones.

    Putting one back backs up the bytes it replaces in turn.

      cairn restore --list

      cairn restore --prune --dry-run

      cairn restore 20261201T101500123456789Z-1a2b3c4d
    """
    try:
        with common.open_cairn(db) as cairn:
            if prune:
                pruned = cairn.maintain.prune_backups(dry_run=dry_run)
                if as_json:
                    emit_json({"removed": [b.id for b in pruned.removed], "kept": pruned.kept,
                               "freed_bytes": pruned.freed_bytes, "dry_run": pruned.dry_run})
                    return
                verb = "would remove" if dry_run else "removed"
                out.print(f"{verb} {len(pruned.removed)} backups ({pruned.freed_bytes} bytes), "
                          f"kept {pruned.kept} in {cairn.maintain.backups.folder}", markup=False)
                return
            if list_:
                backups = cairn.maintain.list_backups(path)
                if as_json:
                    emit_json([{"id": b.id, "path": str(b.path), "sha256": b.sha256,
                                "time": b.time, "reason": b.reason} for b in backups])
                    return
                for b in backups:
                    out.print(f"{b.id}  {b.path}  {b.reason}", markup=False)
                folder = cairn.maintain.backups.folder
                out.print(f"{len(backups)} backups in {folder}", markup=False)
                return
            result = cairn.maintain.restore(backup_id)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json({"path": str(result.path), "sha256": result.sha256,
                   "previous_sha256": result.previous_sha256,
                   "backup": None if result.backup is None else result.backup.id})
        return
    out.print(f"restored {result.path}"
              + (f" (what it replaced is backup {result.backup.id})" if result.backup else ""),
              markup=False)


def register(app: typer.Typer) -> None:
    """Mount ``cairn restore``."""
    app.command("restore")(restore)
