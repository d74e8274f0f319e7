"""CLI commands for semantic/hybrid search and BEIR evaluation (Typer + Rich).

Thin: each command calls one method of ``Cairn`` — ``search(text, mode=…, …)`` and
``evaluate(folder, modes=…, split=…)``, which delegate to
:class:`cairn.search.service.SemanticService`. Mount them on the main app with::

    from cairn.interfaces import cli_search
    cli_search.register(app, _open)     # adds `eval` and replaces `search`

``cairn search --mode keyword|semantic|hybrid --explain [--json]`` prints, per hit, the
rank and raw score in each list, every fused summand and the final score (a table, or
the hit's ``explain`` object in JSON). ``cairn eval DIR [--mode …] [--json]`` indexes a
BEIR folder into a throwaway store and prints nDCG@10, Recall@100 and MRR@10 per mode.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from cairn.errors import CairnError, NotFound

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False)

MODE_HELP = "keyword (BM25), semantic (embeddings) or hybrid (both, fused); default: hybrid "
MODE_HELP += "when embeddings exist, else keyword."


def _emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def _fail(exc: CairnError, as_json: bool) -> typer.Exit:
    code = 1 if isinstance(exc, NotFound) else 2
    if as_json:
        _emit_json({"error": str(exc), "type": type(exc).__name__})
    else:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
    return typer.Exit(code)


def hit_json(hit: Any) -> dict[str, Any]:
    """A hit as JSON-ready data (lists for tuples)."""
    d = asdict(hit)
    for key in ("outline_path", "tags", "siblings"):
        d[key] = list(d.get(key) or ())
    return d


def explain_rows(hits: Any) -> tuple[list[str], list[list[str]]]:
    """``(columns, rows)`` of the explain table: rank, title, each list's rank and raw
    score, every summand that occurs, and the score."""
    summand_names: list[str] = []
    for h in hits:
        for name in h.explain.get("summands", {}):
            if name not in summand_names:
                summand_names.append(name)
    cols = ["#", "title", "kw rank", "bm25", "sem rank", "cosine", *summand_names, "score"]
    rows: list[list[str]] = []
    for h in hits:
        e = h.explain
        kw = e.get("keyword") or {}
        sem = e.get("semantic") or {}
        sums = e.get("summands", {})
        rows.append(
            [
                str(h.rank),
                (h.title or h.doc_title)[:40],
                str(kw.get("rank", "")),
                f"{kw['bm25']:.4f}" if "bm25" in kw else "",
                str(sem.get("rank", "")),
                f"{sem['cosine']:.4f}" if "cosine" in sem else "",
                *[f"{sums[n]:.6g}" if n in sums else "" for n in summand_names],
                f"{e.get('score', h.score):.6f}",
            ]
        )
    return cols, rows


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


def run_search(
    cairn: Any,
    text: str,
    *,
    mode: str | None = None,
    limit: int = 10,
    explain: bool = False,
    alternates: bool = False,
    as_json: bool = False,
) -> None:
    """Search with ``cairn.search(text, mode=…)`` and print hits (or one JSON document)."""
    res = cairn.search(text, mode=mode, limit=limit, explain=explain, include_alternates=alternates)
    if as_json:
        _emit_json(
            {
                "query": text,
                "mode": (res.hits[0].explain.get("mode") if explain and res.hits else mode),
                "took_ms": res.took_ms,
                "notes": list(res.notes),
                "hits": [hit_json(h) for h in res.hits],
            }
        )
        return
    for n in res.notes:
        err.print(f"[yellow]note:[/yellow] {escape(n)}")
    if not res.hits:
        out.print("[dim]no hits[/dim]")
        return
    for h in res.hits:
        crumbs = " › ".join(h.outline_path[:-1])
        title = escape(h.title or h.doc_title)
        out.print(f"[bold]{h.rank}.[/bold] [bold]{title}[/bold]  [dim]{h.score:.4f}[/dim]")
        ctx = escape(h.doc_title) + (f" › {escape(crumbs)}" if crumbs else "")
        out.print(f"   [dim]{ctx}[/dim]")
        out.print(f"   [blue]{escape(h.abs_path)}:{h.line_start}[/blue]")
        snippet = Text("   ").append(Text(h.snippet))
        for a, b in getattr(h, "highlights", ()):
            snippet.stylize("bold yellow", a + 3, b + 3)
        out.print(snippet)
        if explain:
            out.print(explain_table(h.explain, h.score))
    out.print(f"[dim]{len(res.hits)} hits in {res.took_ms:.1f} ms[/dim]")


def run_eval(
    cairn: Any, folder: Path, *, modes: list[str], split: str = "test", as_json: bool = False
) -> None:
    """Evaluate with ``cairn.evaluate(folder, modes=…, split=…)`` and print the measures."""
    report = cairn.evaluate(folder, modes=modes, split=split)
    data = report.as_dict()
    if as_json:
        _emit_json(data)
        return
    out.print(
        f"[bold]{escape(data['dataset'])}[/bold]: {data['documents']} documents, "
        f"{data['queries']} queries, {data['chunks']} chunks, model {escape(data['provider'])}"
    )
    table = Table("mode", "nDCG@10", "Recall@100", "MRR@10", "p50 ms", "p95 ms", box=None)
    for r in data["results"]:
        table.add_row(
            r["mode"],
            f"{r['ndcg@10']:.4f}",
            f"{r['recall@100']:.4f}",
            f"{r['mrr@10']:.4f}",
            f"{r['p50_ms']:.1f}",
            f"{r['p95_ms']:.1f}",
        )
    out.print(table)
    for n in data["notes"]:
        err.print(f"[yellow]note:[/yellow] {escape(n)}")


def register(
    app: typer.Typer, opener: Callable[[Path | None], Any], *, replace_search: bool = True
) -> None:
    """Add ``eval`` (and, with ``replace_search``, the mode-aware ``search``) to ``app``.

    Args:
        app: the main Typer app.
        opener: ``opener(db) -> Cairn`` (a context manager), as the main CLI's ``_open``.
        replace_search: replace ``app``'s ``search`` command with this module's.
    """
    drop = {"search", "eval"} if replace_search else {"eval"}
    app.registered_commands[:] = [
        c
        for c in app.registered_commands
        if (c.name or getattr(c.callback, "__name__", "")) not in drop
    ]
    if replace_search:
        _add_search(app, opener)
    _add_eval(app, opener)


def _add_search(app: typer.Typer, opener: Callable[[Path | None], Any]) -> None:
    @app.command("search")
    def search(
        query: Annotated[
            list[str],
            typer.Argument(
                help='Words (any may match), "phrases", -exclusions and filters: tag:, '
                "todo:, path:, format:, type:, priority:, prop:KEY=VALUE, before:, after:.",
            ),
        ],
        mode: Annotated[str | None, typer.Option("--mode", "-m", help=MODE_HELP)] = None,
        limit: Annotated[int, typer.Option("--limit", "-n", help="Number of hits.")] = 10,
        explain: Annotated[
            bool,
            typer.Option(
                "--explain",
                help="Show each list's rank and score, every summand and the final score.",
            ),
        ] = False,
        alternates: Annotated[
            bool,
            typer.Option("--alternates", help="Include chat messages off the canonical branch."),
        ] = False,
        db: Annotated[
            Path | None, typer.Option("--db", envvar="CAIRN_DB", help="Index file.")
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    ) -> None:
        """Search by keywords, meaning, or both (hybrid, the default once embedded)."""
        if mode is not None and mode not in ("keyword", "semantic", "hybrid"):
            raise _fail(
                CairnError(f"--mode must be keyword, semantic or hybrid, not {mode!r}"), as_json
            )
        try:
            with opener(db) as cairn:
                run_search(
                    cairn,
                    " ".join(query),
                    mode=mode,
                    limit=limit,
                    explain=explain,
                    alternates=alternates,
                    as_json=as_json,
                )
        except CairnError as exc:
            raise _fail(exc, as_json) from None


def _add_eval(app: typer.Typer, opener: Callable[[Path | None], Any]) -> None:
    @app.command("eval")
    def eval_(
        folder: Annotated[
            Path, typer.Argument(help="A BEIR folder: corpus.jsonl, queries.jsonl, qrels/test.tsv.")
        ],
        mode: Annotated[
            list[str] | None,
            typer.Option("--mode", "-m", help="Mode(s) to measure (repeatable); default all."),
        ] = None,
        split: Annotated[str, typer.Option("--split", help="qrels file name.")] = "test",
        db: Annotated[
            Path | None,
            typer.Option("--db", envvar="CAIRN_DB", help="Index file (for its settings)."),
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    ) -> None:
        """Measure retrieval quality on a BEIR data set (nDCG@10, Recall@100, MRR@10)."""
        modes = mode or ["keyword", "semantic", "hybrid"]
        bad = [m for m in modes if m not in ("keyword", "semantic", "hybrid")]
        if bad:
            raise _fail(CairnError(f"unknown mode(s): {', '.join(bad)}"), as_json)
        try:
            with opener(db) as cairn:
                run_eval(cairn, folder, modes=modes, split=split, as_json=as_json)
        except CairnError as exc:
            raise _fail(exc, as_json) from None
