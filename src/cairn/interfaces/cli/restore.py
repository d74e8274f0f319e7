"""``cairn restore``: put back bytes that safe write-back kept (every file cairn ever
changed is backed up first). Thin: :meth:`cairn.maintain.service.MaintainService.restore` and
:meth:`~cairn.maintain.service.MaintainService.list_backups`. Mount with :func:`register`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import (
    DbOpt,
    JsonOpt,
    emit_json,
    fail,
    needs,
    out,
    plural,
    refuse_together,
)


def restore(
    backup_id: Annotated[
        str | None,
        typer.Argument(
            metavar="[ID]",
            help="A backup id (or a unique prefix): put back that one file. Default: undo "
            "the last dream run or write batch not yet undone (every file it changed or "
            "created).",
        ),
    ] = None,
    run: Annotated[
        str | None,
        typer.Option("--run", help="Undo this write batch (an id from --list, or a unique "
                     "prefix) instead of the last one."),
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
    """Undo the last dream run, or put one backup back.

    With no argument: undo the last dream run whole. --run BATCH picks a run, a
    backup ID puts that one file back, --list shows the backups by batch and
    --prune drops old ones.

    Restoring backs up the bytes it replaces in turn (as a batch of its own, which a
    bare restore never picks); a file the run created is removed while it still holds
    the bytes written, else nothing is done and the file is named.

      cairn restore

      cairn restore --list

      cairn restore --prune --dry-run

      cairn restore 20261201T101500123456789Z-1a2b3c4d
    """
    refuse_together(("--prune", prune), ("--list", list_), ("--run", run), ("ID", backup_id))
    needs("--dry-run", dry_run, "--prune", prune)  # a restore has no dry run: never restore
    needs("--path", path, "--list", list_)
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
                                "time": b.time, "reason": b.reason, "batch": b.batch,
                                "action": b.action} for b in backups])
                    return
                _print_batches(cairn.maintain.list_batches(), backups)
                folder = cairn.maintain.backups.folder
                out.print(f"{len(backups)} backups in {folder}", markup=False)
                return
            if backup_id is None:
                done = cairn.maintain.restore_batch(run)
                _print_restored(done, as_json)
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


def _print_batches(every: list[Any], shown: list[Any]) -> None:
    """The backups of ``shown`` (:class:`cairn.writeback.Backup`), under the batch each
    belongs to (:class:`cairn.writeback.Batch`)."""
    ids = {b.id for b in shown}
    for batch in every:
        mine = [b for b in batch.entries if b.id in ids]
        if not mine:
            continue
        state = (" (a restore's own copies)" if batch.is_restore
                 else " (undone)" if batch.undone else "")
        out.print(f"batch {batch.id}  {batch.time}{state}", markup=False)
        for b in mine:
            what = "created " if b.action == "created" else ""
            out.print(f"  {b.id}  {what}{b.path}  {b.reason}", markup=False)


def _print_restored(done: Any, as_json: bool) -> None:
    """What undoing a batch did (:class:`cairn.writeback.Restored`), one line per file
    (or the JSON document)."""
    if as_json:
        emit_json({"batch": done.batch.id, "files": [
            {"path": str(r.path), "action": "removed" if b.action == "created" else "restored",
             "backup": b.id, "replaced": None if r.backup is None else r.backup.id}
            for b, r in done.results]})
        return
    for b, r in done.results:
        removed = b.action == "created"
        kept = "its bytes are kept as" if removed else "what it replaced is"
        out.print(f"{'removed' if removed else 'restored'} {r.path}"
                  + (f" ({kept} backup {r.backup.id})" if r.backup else ""), markup=False)
    out.print(f"undid batch {done.batch.id} ({plural(len(done.results), 'file')})",
              markup=False)


def register(app: typer.Typer) -> None:
    """Mount ``cairn restore``."""
    app.command("restore")(restore)
