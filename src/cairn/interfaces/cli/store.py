"""``cairn store copy``: move the index to another backend (one ``Cairn`` call)."""

from __future__ import annotations

import sys
import time
from typing import Annotated

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, JsonOpt, emit_json, err, fail, out
from cairn.model.serialize import to_data

store_app = typer.Typer(
    help="The index's storage: copy it between SQLite and PostgreSQL.",
    no_args_is_help=True,
)


@store_app.command("copy")
def copy(
    to: Annotated[
        str,
        typer.Option(
            "--to",
            help="The empty target: a PostgreSQL URL (postgresql://user@host/db) or an "
            "index file path.",
            show_default=False,
        ),
    ],
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Copy the index into an empty one on another backend.

    Documents, units, links, vectors, edges …, without re-parsing or re-embedding.

    The source is the index chosen as usual (--db, CAIRN_DB_URL, \\[store]); examples:

      cairn store copy --to postgresql://cairn@db.example/notes

      CAIRN_DB_URL=postgresql://cairn@db.example/notes cairn store copy --to notes.db
    """
    last = [0.0]

    def progress(table: str, rows: int) -> None:
        now = time.monotonic()
        if now - last[0] >= (0.5 if sys.stderr.isatty() else 5.0):
            last[0] = now
            err.print(f"copying {escape(table)}: {rows:,} rows")

    try:
        with common.open_cairn(db) as cairn:
            report = cairn.storage.copy(to, progress=progress)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(to_data(report))
        return
    total = sum(report.rows.values())
    out.print(f"copied {escape(report.source)} → {escape(report.target)}: {total:,} rows "
              f"in {len(report.rows)} tables, {report.seconds:.1f} s")


def register(app: typer.Typer) -> None:
    """Add the ``store`` group to ``app``."""
    app.add_typer(store_app, name="store")
