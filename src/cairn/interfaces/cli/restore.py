"""``cairn restore``: put back bytes that safe write-back kept (every file cairn ever
changed is backed up first). Thin: :meth:`cairn.app.Cairn.restore` and
:meth:`cairn.app.Cairn.backup_list`. Mount with :func:`register`."""

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
    path: Annotated[
        str | None, typer.Option("--path", help="With --list: only backups of this file.")
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Put a backup back (the bytes it replaces are backed up in turn), or --list them.

      cairn restore --list

      cairn restore 20261201T101500123456789Z-1a2b3c4d
    """
    try:
        with common.open_cairn(db) as cairn:
            if list_:
                backups = cairn.backup_list(path)
                if as_json:
                    emit_json([{"id": b.id, "path": str(b.path), "sha256": b.sha256,
                                "time": b.time, "reason": b.reason} for b in backups])
                    return
                for b in backups:
                    out.print(f"{b.id}  {b.path}  {b.reason}", markup=False)
                out.print(f"{len(backups)} backups in {cairn.backups.folder}", markup=False)
                return
            result = cairn.restore(backup_id)
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
