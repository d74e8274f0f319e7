"""The ``cairn`` command (Typer + Rich). Thin: each command calls one method of Cairn.

Every command takes ``--json`` and then prints exactly one JSON document on stdout.
Errors print ``error: <reason>`` on stderr and exit with status 2 (or 1 for
"not found").
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from cairn.app import Cairn, hit_dict, run_dict
from cairn.errors import CairnError
from cairn.interfaces._output import emit_json as _emit_json
from cairn.interfaces._output import err, out
from cairn.interfaces._output import fail as _fail

app = typer.Typer(
    name="cairn",
    help=(
        "cairn: a local-first knowledge engine over your plain-text notes.\n\n"
        "Index folders of Org, Markdown and text notes into one SQLite file, then search "
        "them.\n\nQuick start:\n\n"
        "  cairn index ~/notes          # register and index a folder\n\n"
        "  cairn search 'budget review' # BM25 keyword search\n\n"
        "  cairn search 'tag:work todo:open'\n\n"
        "  cairn show notes/plan.org:12 # the heading at that line\n\n"
        "The index lives in your data folder (see `cairn stats`); use --db or CAIRN_DB "
        "to choose another file."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
)


DbOpt = Annotated[
    Path | None,
    typer.Option(
        "--db",
        envvar="CAIRN_DB",
        help="Index file (default: user data dir/cairn.db).",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]


class _State:
    db: Path | None = None
    config: Path | None = None


_state = _State()


@app.callback()
def _main(
    db: DbOpt = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="cairn.toml to read (default: $CAIRN_CONFIG, else the "
            "user config dir's cairn.toml).",
        ),
    ] = None,
) -> None:
    _state.db = db
    _state.config = config


def _open(db: Path | None, *, create: bool = False) -> Cairn:
    """Open the index; read-only commands pass ``create=False`` so a mistyped path is
    an error, not an empty result."""
    return Cairn.open(db=db or _state.db, config_file=_state.config, create=create)


def _highlighted(snippet: str, spans: tuple[tuple[int, int], ...]) -> Text:
    """A snippet with its match offsets in bold yellow."""
    text = Text(snippet)
    for a, b in spans:
        text.stylize("bold yellow", a, b)
    return text


def _print_explain(score: float, exp: Any) -> None:
    """A hit's explanation: each list's rank and raw score, each fused summand and the
    score they add up to (:func:`cairn.interfaces.cli_search.explain_table`), then the
    graph edges walked, if any."""
    from cairn.interfaces.cli_search import explain_table

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


@app.command()
def index(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Folders (or a single export file) to register and index. "
            "Without any, re-index every registered folder.",
            show_default=False,
        ),
    ] = None,
    include: Annotated[
        list[str] | None,
        typer.Option("--include", "-i", help="Only files matching this glob (repeatable)."),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", "-x", help="Skip files and folders matching this glob."),
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    no_embed: Annotated[
        bool,
        typer.Option(
            "--no-embed",
            help="Skip embeddings: keyword search only until a later run embeds.",
        ),
    ] = False,
) -> None:
    """Index folders of notes: only new and changed files are parsed again.

    Hidden folders, .git, node_modules, .obsidian and .trash are skipped.

    Files that cannot be read or parsed are listed with the reason; everything else is
    indexed.
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    try:
        with _open(db, create=True) as cairn:
            show_bar = not (as_json or quiet) and err.is_terminal
            if show_bar:
                with Progress(
                    TextColumn("[bold]indexing"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TimeRemainingColumn(),
                    TextColumn("{task.fields[file]}", style="dim"),
                    console=err,
                    transient=True,
                ) as bar:
                    task = bar.add_task("index", total=None, file="")

                    def progress(done: int, total: int, rel: str) -> None:
                        bar.update(task, completed=done, total=total, file=rel[-50:])

                    embed_task = bar.add_task("embed", total=None, file="", visible=False)

                    def embed_progress(done: int, total: int, what: str) -> None:
                        bar.update(
                            embed_task,
                            visible=True,
                            completed=done,
                            total=total,
                            file=f"embedding {what}"[-50:],
                        )

                    run = cairn.index(
                        paths,
                        include=include or (),
                        exclude=exclude or (),
                        progress=progress,
                        embed=not no_embed,
                        embed_progress=embed_progress,
                    )
            else:
                run = cairn.index(
                    paths, include=include or (), exclude=exclude or (), embed=not no_embed
                )
            if as_json:
                _emit_json(run_dict(run))
                return
            out.print(
                f"[bold]{run.seen}[/bold] files: [green]{run.added} added[/green], "
                f"{run.changed} changed, {run.unchanged} unchanged, {run.removed} removed, "
                f"[red]{run.failed} failed[/red], {run.skipped} skipped "
                f"in {run.seconds:.2f} s"
            )
            for f in run.failures:
                where = f"{f.path}:{f.line}" if f.line else f.path
                out.print(f"  [red]failed[/red] {escape(where)}: {escape(f.reason)}")
            if cairn.last_embed is not None and cairn.last_embed.chunks_added:
                e = cairn.last_embed
                out.print(
                    f"  embedded {e.embedded} chunks ({e.cached} from cache, "
                    f"{e.chunks_added} new) in {e.seconds:.1f} s"
                )
            for w in run.warnings:
                if w.severity == "info" and not w.path:
                    out.print(f"  [cyan]note[/cyan] {escape(w.message)}")
            warns = [w for w in run.warnings if w.severity == "warning"]
            for w in warns[:20]:
                where = f"{w.path}:{w.line}" if w.line else w.path
                out.print(f"  [yellow]warning[/yellow] {escape(where)}: {escape(w.message)}")
            if len(warns) > 20:
                out.print(f"  … and {len(warns) - 20} more warnings (cairn stats --json)")
    except CairnError as exc:
        raise _fail(exc, as_json) from None


@app.command(context_settings={"ignore_unknown_options": True})
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
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            help="keyword (BM25), semantic (embeddings) or hybrid (both, fused); "
            "default: hybrid when the index has embeddings, else keyword.",
            show_default=False,
        ),
    ] = None,
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
    """Search the index (BM25 over title, outline path, tags and body).

    Examples: cairn search "garden compost"; cairn search 'tag:work -tag:done budget';
    cairn search 'todo:open path:projects/'.
    """
    text = " ".join(query)
    try:
        with _open(db) as cairn:
            if mode not in (None, "keyword", "semantic", "hybrid"):
                raise CairnError(f"unknown mode {mode!r}: use keyword, semantic or hybrid")
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
        raise _fail(exc, as_json) from None
    if empty:
        err.print(
            f"[yellow]note:[/yellow] the index {escape(where)} is empty; "
            "run [bold]cairn index FOLDER[/bold] first (or pick another with --db)"
        )
    if as_json:
        _emit_json(
            {
                "query": text,
                "took_ms": res.took_ms,
                "notes": list(res.notes),
                "hits": [hit_dict(h) for h in res.hits],
            }
        )
        return
    for n in res.notes:
        err.print(f"[yellow]note:[/yellow] {escape(n)}")
    if not res.hits:
        out.print("[dim]no hits[/dim]")
        return
    for h in res.hits:
        parents = list(h.outline_path[:-1])
        if parents and parents[0] == h.doc_title:
            parents = parents[1:]
        crumbs = " › ".join(parents)
        todo = f"[magenta]{h.todo}[/magenta] " if h.todo else ""
        tags = (" [cyan]:" + escape(":".join(h.tags)) + ":[/cyan]") if h.tags else ""
        title = escape(h.title or h.doc_title)
        out.print(f"[bold]{h.rank}.[/bold] {todo}[bold]{title}[/bold]{tags}")
        where = f"{h.abs_path}:{h.line_start}"
        ctx = f"{escape(h.doc_title)}" + (f" › {escape(crumbs)}" if crumbs else "")
        out.print(f"   [dim]{ctx}[/dim]")
        out.print(f"   [blue]{escape(where)}[/blue]")
        out.print(Text("   ").append(_highlighted(h.snippet, h.highlights)))
        if h.kind == "message":
            for line in h.siblings:
                out.print(Text(f"   · {line}", style="dim"))
        if explain:
            _print_explain(h.score, h.explain)
    count = len(res.hits)
    noun = "hit" if count == 1 else "hits"
    out.print(f"[dim]{count} {noun} in {res.took_ms:.1f} ms[/dim]")


@app.command()
def show(
    ref: Annotated[str, typer.Argument(help="A unit or document id, or PATH[:LINE].")],
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a document (metadata, outline, links, backlinks) or one unit."""
    try:
        with _open(db) as cairn:
            view = cairn.show(ref)
    except CairnError as exc:
        raise _fail(exc, as_json) from None
    if as_json:
        _emit_json(view)
        return
    if view["kind"] == "unit":
        u, d = view["unit"], view["document"]
        out.print(f"[bold]{escape(u['title'] or '(untitled)')}[/bold]  [dim]{u['kind']}[/dim]")
        out.print(f"[dim]{escape(' › '.join(u['outline_path']))}[/dim]")
        if d:
            out.print(f"[blue]{escape(d['abs_path'])}:{u['line_start']}-{u['line_end']}[/blue]")
        for key in ("todo", "priority", "org_id", "custom_id", "language"):
            if u.get(key):
                out.print(f"{key}: {escape(str(u[key]))}")
        if u["tags"] or u["inherited_tags"]:
            out.print(f"tags: {u['tags']}  inherited: {u['inherited_tags']}")
        for k, v in u["properties"].items():
            out.print(f"  :{escape(k)}: {escape(str(v))}")
        out.print(escape(u["body"]))
        return
    docs = view["documents"] if view["kind"] == "file" else [view["document"]]
    for d in docs:
        out.print(f"[bold]{escape(d['title'])}[/bold]  [dim]{d['format']}  {d['id']}[/dim]")
        out.print(f"[blue]{escape(d['abs_path'])}[/blue]")
        if d["tags"]:
            out.print(f"tags: {', '.join(d['tags'])}")
        for w in d["warnings"]:
            out.print(f"[yellow]warning[/yellow] {escape(w['message'])}")
    if view["kind"] == "document":
        table = Table("line", "outline", "todo", "tags", box=None)
        for u in view["units"]:
            indent = "  " * max(0, u["level"] - 1)
            table.add_row(
                str(u["line_start"]),
                escape(indent + (u["title"] or "")),
                u["todo"] or "",
                ":".join(u["tags"]),
            )
        out.print(table)
        out.print(f"{len(view['links'])} links out, {len(view['backlinks'])} backlinks")


@app.command()
def stats(db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Counts per format, the last run, and files that failed."""
    try:
        with _open(db) as cairn:
            data = cairn.stats()
    except CairnError as exc:
        raise _fail(exc, as_json) from None
    if as_json:
        _emit_json(data)
        return
    out.print(f"index: {escape(data['db'])} (schema v{data['schema_version']})")
    out.print(
        f"{data['roots']} roots, {data['documents']} documents, {data['units']} units, "
        f"{data['links']} links ({data['links_unresolved']} unresolved)"
    )
    table = Table("format", "documents", "units", box=None)
    for fmt, c in data["formats"].items():
        table.add_row(fmt, str(c["documents"]), str(c["units"]))
    out.print(table)
    run = data["last_run"]
    if run:
        out.print(
            f"last run {run['finished']}: {run['seen']} seen, {run['added']} added, "
            f"{run['changed']} changed, {run['removed']} removed, {run['failed']} failed"
        )
    for f in data["failed_files"]:
        out.print(f"[red]failed[/red] {escape(f['path'])}: {escape(f['reason'] or '')}")
    if data["warnings"]:
        out.print(f"{len(data['warnings'])} document warnings (see --json)")


@app.command()
def roots(
    remove: Annotated[
        Path | None,
        typer.Option(
            "--remove",
            help="Forget this folder and everything indexed from it (your files are not touched).",
        ),
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the registered source roots, or remove one."""
    try:
        with _open(db) as cairn:
            removed = cairn.remove_root(remove) if remove is not None else None
            rs = cairn.roots()
    except CairnError as exc:
        raise _fail(exc, as_json) from None
    if as_json:
        data: dict[str, Any] = {
            "roots": [
                {"id": r.id, "path": r.path, "include": r.include, "exclude": r.exclude} for r in rs
            ]
        }
        if removed is not None:
            data["removed_documents"] = removed
        _emit_json(data if removed is not None else data["roots"])
        return
    if removed is not None:
        out.print(f"removed {escape(str(remove))}: {removed} documents forgotten")
    for r in rs:
        extra = f"  include={list(r.include)}" if r.include else ""
        extra += f"  exclude={list(r.exclude)}" if r.exclude else ""
        out.print(f"{escape(r.path)}{escape(extra)}")


@app.command()
def validate(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Registered folders to check (default: all).", show_default=False),
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check notes against types.yaml and OKF bundles against the OKF v0.2 rules.

    Reports, per note, unknown types, missing required fields and malformed values
    (warnings), and OKF conformance failures (errors). Exits 1 when there are errors.
    """
    try:
        with _open(db) as cairn:
            found = cairn.validate(paths)
    except CairnError as exc:
        raise _fail(exc, as_json) from None
    errors = sum(1 for d in found if d["severity"] == "error")
    if as_json:
        _emit_json({"ok": errors == 0, "errors": errors, "diagnostics": found})
    else:
        colour = {"error": "red", "warning": "yellow", "info": "dim"}
        for d in found:
            where = f"{d['path']}:{d['line']}" if d["line"] else d["path"]
            c = colour.get(d["severity"], "white")
            out.print(f"[{c}]{d['severity']}[/{c}] {escape(where)}: {escape(d['message'])}")
        out.print(f"{errors} errors, {len(found) - errors} warnings and notes")
    if errors:
        raise typer.Exit(1)


@app.command()
def check(db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Check the index's integrity (SQLite, FTS5 and cairn's own consistency)."""
    try:
        with _open(db) as cairn:
            problems = cairn.check()
    except CairnError as exc:
        raise _fail(exc, as_json) from None
    if as_json:
        _emit_json({"ok": not problems, "problems": problems})
    elif problems:
        for p in problems:
            out.print(f"[red]problem[/red] {escape(p)}")
    else:
        out.print("[green]ok[/green]")
    if problems:
        raise typer.Exit(1)


def _mount() -> None:
    from cairn.interfaces.cli_graph import graph_app
    from cairn.interfaces.cli_search import register

    app.add_typer(graph_app, name="graph")
    register(app, lambda db: _open(db, create=True))


_mount()


def main() -> None:
    """Entry point of the ``cairn`` console script.

    Usage errors print a JSON error document when ``--json`` was given; a damaged index
    file gives one clear line instead of a traceback.
    """
    import sqlite3

    as_json = "--json" in sys.argv[1:]
    try:
        rc = app(standalone_mode=False)
    except BrokenPipeError:  # `cairn search x | head`
        sys.stderr.close()
        raise SystemExit(0) from None
    except typer.Abort:
        err.print("aborted")
        raise SystemExit(130) from None
    except typer.TyperException as exc:  # usage errors: bad option, missing argument
        code = int(getattr(exc, "exit_code", 2))
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        if as_json:
            _emit_json({"error": message, "type": type(exc).__name__})
        elif hasattr(exc, "show"):
            exc.show()
        else:
            err.print(f"[red]error:[/red] {escape(message)}")
        raise SystemExit(code) from None
    except sqlite3.DatabaseError as exc:
        msg = (
            f"the index file is damaged or not an index ({exc}); run `cairn check`, or "
            "delete it and run `cairn index` again: it is rebuilt from your files"
        )
        if as_json:
            _emit_json({"error": msg, "type": "StoreError"})
        else:
            err.print(f"[red]error:[/red] {escape(msg)}")
        raise SystemExit(2) from None
    if isinstance(rc, int) and rc:
        raise SystemExit(rc)


if __name__ == "__main__":
    main()
