"""``cairn agenda``: deadlines, scheduled items and timestamps of every Org file, day
by day (:meth:`cairn.agenda.service.AgendaService.days`)."""

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
    tags: Annotated[
        list[str] | None,
        typer.Option(
            "--tag",
            metavar="TAG",
            help="Only headings with this tag, own or inherited (as tag: in a search); "
            "repeat for any of several: --tag work --tag home.",
            show_default=False,
        ),
    ] = None,
    files: Annotated[
        list[str] | None,
        typer.Option(
            "--file",
            metavar="PATH",
            help="Only headings of this file: a file or folder on disk (~/org/work.org, "
            "~/org/projects), a glob on the path from its root or the file name "
            "('*.org', 'work/*'), or a part of that path (as path:). Repeat for any of "
            "several.",
            show_default=False,
        ),
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    r"""Show the Org agenda of every indexed Org file.

    Deadlines, scheduled items and active timestamps on their days (repeaters
    expanded); on today also what is overdue, due soon (within its -Nd warning,
    else 14 days) or scheduled earlier and still open. Done tasks show only on
    their own days.

    Each line: time, kind, TODO keyword, \[#priority], title, :tags:, file:line.

    Examples:

      cairn agenda                                # this week, every Org file

      cairn agenda --days 1 --tag work            # today, headings tagged work

      cairn agenda --file ~/org/work.org --file ~/org/home.org

      cairn agenda --from 2024-03-01 --days 31 --json
    """
    try:
        with common.open_cairn(db) as cairn:
            result = cairn.agenda.days(days=days, start=start, tags=tags or (), files=files or ())
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
