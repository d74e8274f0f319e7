"""``cairn agenda``: deadlines, scheduled items and timestamps of every Org file, day
by day (:meth:`cairn.app.Cairn.agenda`)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, JsonOpt, emit_json, fail, out

_LABEL = {
    "deadline": "Deadline:",
    "scheduled": "Scheduled:",
    "timestamp": "",
    "warning": "In {n} d.:",
    "overdue": "{n} d. ago:",
    "scheduled-past": "Sched.{n}x:",
}


def agenda(
    days: Annotated[
        int, typer.Option("--days", min=1, max=366, help="Days to show, from --from.")
    ] = 7,
    start: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="First day, YYYY-MM-DD (default: today, or $CAIRN_TODAY when set).",
            show_default=False,
        ),
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the Org agenda of every indexed Org file.

    Deadlines, scheduled items and active timestamps on their days (repeaters
    expanded), and on today what is overdue, due soon (within its -Nd warning, else 14
    days) or scheduled earlier and still open.

    Each line: time, kind, TODO keyword, [#priority], title, :tags:, file:line.
    Examples: cairn agenda; cairn agenda --days 1; cairn agenda --from 2024-03-01 --days 31.
    """
    try:
        with common.open_cairn(db) as cairn:
            result = cairn.agenda(days=days, start=start)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(result)
        return
    for day in result.agenda:
        head = f"{day.weekday:<10} {day.date}" + ("  (today)" if day.today else "")
        out.print(f"[bold]{escape(head)}[/bold]")
        for i in day.items:
            label = _LABEL.get(i.kind, i.kind).format(n=abs(i.days))
            parts = [
                f"{i.time or '':>5}",
                f"{label:<12}",
                i.todo or "",
                f"[#{i.priority}]" if i.priority else "",
                i.title,
                f":{':'.join(i.tags)}:" if i.tags else "",
            ]
            text = " ".join(p for p in parts if p)
            out.print(f"  {escape(text)}  [dim]{escape(i.abs_path)}:{i.line}[/dim]")


def register(app: typer.Typer) -> None:
    """Add ``agenda`` to ``app``."""
    app.command()(agenda)
