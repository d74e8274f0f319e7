"""``cairn search``: calls :meth:`Cairn.search` and prints the hits (or ``--json``)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import (
    MODES,
    DbOpt,
    JsonOpt,
    emit_json,
    err,
    fail,
    out,
    planning_text,
    plural,
)
from cairn.model import Hit

MODE_HELP = (
    "keyword (BM25), semantic (embeddings) or hybrid (both, fused); "
    "default: hybrid when the index has embeddings, else keyword."
)


def explain_table(e: dict[str, Any], score: float) -> Table:
    """One hit's explanation as a small table: each list's rank and raw score, each
    summand, and the total they add up to."""
    table = Table(
        "part", "rank", "raw score", "summand", box=None, padding=(0, 1), title_justify="left"
    )
    sums = dict(e.get("summands", {}))
    kw, sem = e.get("keyword") or {}, e.get("semantic") or {}
    for name, lst, raw_key, summand_keys in (
        ("keyword", kw, "bm25", ("rrf_keyword", "kw", "bm25")),
        ("semantic", sem, "cosine", ("rrf_semantic", "sim", "cosine")),
    ):
        if not lst:
            continue
        key = next((k for k in summand_keys if k in sums), None)
        table.add_row(
            f"{name} ({key})" if key else name,
            str(lst.get("rank", "")),
            f"{lst[raw_key]:.4f}" if raw_key in lst else "",
            f"{sums.pop(key):.6g}" if key else "",
        )
    for name, value in sums.items():
        table.add_row(name, "", "", f"{value:.6g}")
    table.add_row("[bold]score[/bold]", "", "", f"[bold]{e.get('score', score):.6g}[/bold]")
    return table


def _highlighted(snippet: str, spans: tuple[tuple[int, int], ...]) -> Text:
    """A snippet with its match offsets in bold yellow."""
    text = Text(snippet)
    for a, b in spans:
        text.stylize("bold yellow", a, b)
    return text


def _print_explain(score: float, exp: Any) -> None:
    """A hit's explanation (:func:`explain_table`), then the graph edges walked."""
    if not isinstance(exp, dict):
        return
    out.print(explain_table(exp, score))
    graph = exp.get("graph")
    if isinstance(graph, dict):
        for path in graph.get("paths", [])[:3]:
            steps = []
            for e in path.get("edges", []):
                ev = (e.get("evidence") or [{}])[0]
                raw = f" {ev['raw']}" if ev.get("raw") else ""
                steps.append(
                    f"{e['from'].get('title')} —{e.get('relation')}→ {e['to'].get('title')}"
                    f" ({e['to'].get('path')}:{e['to'].get('line')}{raw})"
                )
            line = f"   via {' ; '.join(steps)}  +{path.get('contribution', 0):.6f}"
            out.print(Text(line, style="dim"))


def print_hit(h: Hit, explain: bool) -> None:
    """One hit as a few readable lines: rank, TODO, priority, title, tags; the
    document and outline path; file:line; planning; the snippet; context."""
    parents = list(h.outline_path[:-1])
    if parents and parents[0] == h.doc_title:
        parents = parents[1:]
    crumbs = " › ".join(parents)
    todo = f"[magenta]{h.todo}[/magenta] " if h.todo else ""
    prio = f"[red]\\[#{escape(h.priority)}][/red] " if h.priority else ""
    tags = (" [cyan]:" + escape(":".join(h.tags)) + ":[/cyan]") if h.tags else ""
    title = escape(h.title or h.doc_title)
    out.print(f"[bold]{h.rank}.[/bold] {todo}{prio}[bold]{title}[/bold]{tags}")
    ctx = f"{escape(h.doc_title)}" + (f" › {escape(crumbs)}" if crumbs else "")
    out.print(f"   [dim]{ctx}[/dim]")
    out.print(f"   [blue]{escape(f'{h.abs_path}:{h.line_start}')}[/blue]")
    if h.planning:
        out.print(Text(f"   {planning_text(h.planning)}", style="magenta"))
    out.print(Text("   ").append(_highlighted(h.snippet, h.highlights)))
    if h.kind == "message":
        for line in h.siblings:
            out.print(Text(f"   · {line}", style="dim"))
    if explain:
        _print_explain(h.score, h.explain)


def search(
    query: Annotated[
        list[str],
        typer.Argument(
            help='Words (any may match), "phrases", -exclusions and filters: tag:, '
            "todo:, priority:, path:, format:, source:, type:, prop:KEY=VALUE, before:, "
            'after:, role:, kind:. Quote values with spaces: type:"Big Table".',
        ),
    ],
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Number of hits (default: config, 10)."),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show each hit's score and how it was made.")
    ] = False,
    alternates: Annotated[
        bool,
        typer.Option("--alternates", help="Include chat messages off the canonical branch."),
    ] = False,
    mode: Annotated[str | None, typer.Option("--mode", help=MODE_HELP, show_default=False)] = None,
    expand: Annotated[
        bool | None,
        typer.Option(
            "--expand/--no-expand",
            help="Graph expansion: follow links 1-2 hops from the top hits and re-rank; "
            "--explain then names the edges walked (default: [graph] expand, off).",
            show_default=False,
        ),
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Search the index: hybrid (BM25 keywords fused with meaning) once embeddings
    exist, else keyword (BM25 over title, outline path, tags and body).

    Examples: cairn search "garden compost"; cairn search 'tag:work -tag:done budget';
    cairn search 'todo:open path:projects/'; cairn search --mode keyword 'C++'.
    """
    text = " ".join(query)
    try:
        if mode not in (None, *MODES):
            raise CairnError(f"unknown mode {mode!r}: use keyword, semantic or hybrid")
        with common.open_cairn(db) as cairn:
            res = cairn.search(
                text,
                mode=mode,
                limit=limit,
                explain=explain,
                include_alternates=alternates,
                expand=expand,
            )
            empty = not res.hits and cairn.is_empty()
            where = str(cairn.config.db_path)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if empty:
        err.print(
            f"[yellow]note:[/yellow] the index {escape(where)} is empty; "
            "run [bold]cairn index FOLDER[/bold] first (or pick another with --db)"
        )
    if as_json:
        emit_json({"query": text, "took_ms": res.took_ms, "notes": res.notes, "hits": res.hits})
        return
    for n in res.notes:
        err.print(f"[yellow]note:[/yellow] {escape(n)}")
    if not res.hits:
        out.print("[dim]no hits[/dim]")
        return
    for h in res.hits:
        print_hit(h, explain)
    out.print(f"[dim]{plural(len(res.hits), 'hit')} in {res.took_ms:.1f} ms[/dim]")


def register(app: typer.Typer) -> None:
    """Add ``search`` to ``app``."""
    app.command(context_settings={"ignore_unknown_options": True})(search)
