"""``cairn show``: calls :meth:`Cairn.show` and prints the view (or ``--json``)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import (
    DbOpt,
    JsonOpt,
    emit_json,
    fail,
    out,
    planning_text,
    plural,
)
from cairn.interfaces.cli._plain import quote_path
from cairn.model import CODE, MESSAGE, DocumentView, StoredDocument, StoredUnit, UnitView


def _short(text: str, width: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def outline_label(u: StoredUnit) -> str:
    """How a unit reads in a document's outline: a heading's title; a code block with
    the heading it sits under; a chat message as ``role · time: its text``, marked
    ``(alternate)`` when it is off the canonical branch."""
    if u.kind == CODE and u.outline_path:
        return f"{u.title} under {u.outline_path[-1]}"
    if u.kind == MESSAGE:
        label = f"{u.title}: {_short(u.body)}" if u.body.strip() else u.title
        return f"{label} (alternate)" if u.extra.get("alternate") else label
    return u.title


def _print_document_head(d: StoredDocument) -> None:
    out.print(f"[bold]{escape(d.title)}[/bold]  [dim]{d.format}  {d.id}[/dim]")
    out.print(f"[blue]{escape(quote_path(d.abs_path))}[/blue]")
    if d.tags:
        out.print(f"tags: {escape(', '.join(d.tags))}")
    for w in d.warnings:
        out.print(f"[yellow]warning[/yellow] {escape(w.message)}")


def _print_unit(view: UnitView) -> None:
    u, d = view.unit, view.document
    out.print(f"[bold]{escape(u.title or '(untitled)')}[/bold]  [dim]{u.kind}[/dim]")
    out.print(f"[dim]{escape(' › '.join(u.outline_path))}[/dim]")
    if d:
        out.print(f"[blue]{escape(quote_path(d.abs_path))}:{u.line_start}-{u.line_end}[/blue]")
    if view.siblings:  # the headings beside it (a chat message: the messages around it)
        label = "around" if u.kind == MESSAGE else "siblings"
        shown = [_short(t, 60) for t in view.siblings]
        out.print(f"[dim]{label}:[/dim] {escape(' · '.join(shown))}")
    if view.block is not None:
        b = view.block
        lines = f"lines {b.line_start}-{b.line_end}"
        out.print(f"block [bold]^{escape(b.id)}[/bold]  [dim]{lines}[/dim]")
        out.print(escape(b.text))
        out.print("[dim]in the section:[/dim]")
    for key, value in (
        ("todo", u.todo),
        ("priority", u.priority),
        ("org_id", u.org_id),
        ("custom_id", u.custom_id),
        ("language", u.language),
        ("role", u.extra.get("role")),
        ("time", u.extra.get("time")),
    ):
        if value:
            out.print(f"{key}: {escape(str(value))}")
    if u.extra.get("alternate"):
        out.print("[yellow]alternate[/yellow]: off the canonical branch of the conversation")
    if u.planning:
        out.print(f"[magenta]{escape(planning_text(u.planning))}[/magenta]")
    if u.tags or u.inherited_tags:
        out.print(
            f"tags: {escape(':'.join(u.tags))}  inherited: {escape(':'.join(u.inherited_tags))}"
        )
    for k, v in u.properties.items():
        out.print(f"  :{escape(k)}: {escape(str(v))}")
    out.print(escape(u.body))


def _print_thread(view: DocumentView, mark: str | None = None) -> None:
    """A conversation as its user read it: every message in :func:`reading_order`
    (the order ``DocumentView.units`` holds), a header line with role, time and
    ``alternate`` for a message off the canonical branch, then its whole text; ``mark``
    (a unit id) flags one message."""
    _print_document_head(view.document)
    for u in view.units:
        if u.kind != MESSAGE:
            continue
        role = str(u.extra.get("role") or "message")
        time = str(u.extra.get("time") or "")
        head = f"[bold]{escape(role)}[/bold]"
        if time:
            head += f"  [dim]{escape(time[:16].replace('T', ' '))}[/dim]"
        if u.extra.get("alternate"):
            head += "  [yellow](alternate)[/yellow] off the canonical branch"
        if u.id == mark:
            head += "  [green]◀ this message[/green]"
        out.print()
        out.print(head)
        out.print(escape(u.body))


def _print_document(view: DocumentView) -> None:
    if any(u.kind == MESSAGE for u in view.units):
        _print_thread(view)
        return
    _print_document_head(view.document)
    table = Table("line", "outline", "todo", "tags", box=None)
    for u in view.units:
        indent = "  " * max(0, u.level - 1)
        todo = " ".join(x for x in (u.todo, f"[#{u.priority}]" if u.priority else None) if x)
        if u.planning:
            todo = f"{todo} {planning_text(u.planning)}".strip()
        table.add_row(
            str(u.line_start),
            escape(indent + outline_label(u)),
            escape(todo),
            escape(":".join(u.tags)),
        )
    out.print(table)
    out.print(f"{plural(len(view.links), 'link')} out, {plural(len(view.backlinks), 'backlink')}")


def show(
    ref: Annotated[
        str, typer.Argument(help="A unit or document id (or a unique prefix), or PATH[:LINE].")
    ],
    db: DbOpt = None,
    as_json: JsonOpt = False,
    thread: Annotated[
        bool,
        typer.Option(
            "--thread",
            help="For a chat message: print its whole conversation, this message marked.",
        ),
    ] = False,
) -> None:
    """Show a document, a conversation's thread or one unit.

    A document: its metadata, outline, links and backlinks; a conversation: every
    message in the order its user read it.
    """
    mark = None
    try:
        with common.open_cairn(db) as cairn:
            view = cairn.show(ref)
            # a chat message, or a code block of one (its extra names the role)
            if thread and isinstance(view, UnitView) and view.unit.extra.get("role"):
                u = view.unit
                mark = u.id if u.kind == MESSAGE else u.parent_id
                view = cairn.show(u.document_id)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if isinstance(view, DocumentView) and mark is not None and not as_json:
        _print_thread(view, mark)
        return
    if as_json:
        emit_json(view)
    elif isinstance(view, UnitView):
        _print_unit(view)
    elif isinstance(view, DocumentView):
        _print_document(view)
    else:
        for d in view.documents:
            _print_document_head(d)
        out.print(
            f"[dim]{plural(len(view.documents), 'document')} in {escape(quote_path(view.path))}; "
            "show one with `cairn show ID`[/dim]"
        )


def register(app: typer.Typer) -> None:
    """Add ``show`` to ``app``."""
    app.command()(show)
