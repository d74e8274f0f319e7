"""The ``eval`` command (BEIR evaluation) and the ``--explain`` table of ``search``.

Thin: ``eval`` calls ``Cairn.evaluate(folder, modes=…, split=…)``, which delegates to
:class:`cairn.search.service.SemanticService`; it indexes a BEIR folder into a throwaway
store and prints nDCG@10, Recall@100 and MRR@10 per mode. Mount it with
``cli_search.register(app, opener)``. :func:`explain_table` renders one hit's
explanation (each list's rank and raw score, every fused summand, the score) for the
main CLI's ``search --explain``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from cairn.errors import CairnError
from cairn.interfaces._output import emit_json as _emit_json
from cairn.interfaces._output import err, out
from cairn.interfaces._output import fail as _fail

MODE_HELP = "keyword (BM25), semantic (embeddings) or hybrid (both, fused); default: hybrid "
MODE_HELP += "when embeddings exist, else keyword."


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


def register(app: typer.Typer, opener: Callable[[Path | None], Any]) -> None:
    """Add ``eval`` to ``app`` (the main CLI's ``search`` has ``--mode`` and uses
    :func:`explain_table` for ``--explain``).

    Args:
        app: the main Typer app.
        opener: ``opener(db) -> Cairn`` (a context manager), as the main CLI's ``_open``.
    """
    app.registered_commands[:] = [
        c
        for c in app.registered_commands
        if (c.name or getattr(c.callback, "__name__", "")) != "eval"
    ]
    _add_eval(app, opener)


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
            typer.Option("--db", help="Index file whose settings to use (default as elsewhere)."),
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
