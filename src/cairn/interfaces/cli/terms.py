"""``cairn terms TERM``: a term across every conversation and note, with counts per
month (calls :meth:`cairn.fields.service.FieldsService.terms`)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, JsonOpt, emit_json, fail, out
from cairn.model.serialize import to_data


def terms(
    term: Annotated[list[str], typer.Argument(help="A word or phrase (several words: a phrase).")],
    limit: Annotated[int, typer.Option("--limit", help="Documents listed (0: all).")] = 20,
    alternates: Annotated[
        bool, typer.Option("--alternates", help="Also chat messages off the canonical branch.")
    ] = False,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show where a term occurs, how often, and when.

    Every conversation and note holding it, how often, and its counts per month over
    time.

    Example: `cairn terms "vector database"`; `--json` lists every document.
    """
    try:
        with common.open_cairn(db) as cairn:
            result = cairn.fields.terms(" ".join(term), include_alternates=alternates)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(to_data(result))
        return
    out.print(
        f"[bold]{escape(result.term)}[/bold]: {result.total} occurrences in "
        f"{result.conversations} conversations and {result.notes} notes"
    )
    if result.months:
        peak = max(result.months.values())
        for month, n in result.months.items():
            bar = "█" * max(1, round(24 * n / peak))
            out.print(f"  {month}  {bar} {n}")
    table = Table("count", "months", "source", "document", box=None)
    shown = result.documents if limit <= 0 else result.documents[:limit]
    for d in shown:
        span = d.first if d.first == d.last else f"{d.first}…{d.last}"
        table.add_row(
            str(d.count), span, d.source, f"{escape(d.title)} [dim]{escape(d.path)}[/dim]"
        )
    if shown:
        out.print(table)
    if len(shown) < len(result.documents):
        out.print(f"[dim]… {len(result.documents) - len(shown)} more (--limit 0 or --json)[/dim]")


def register(app: typer.Typer) -> None:
    """Add ``terms`` to ``app``."""
    app.command("terms")(terms)
