"""``cairn eval``: retrieval quality on a BEIR data set (calls
:meth:`cairn.evaluation.Evaluator.run`, which indexes the folder into a throwaway store
and measures nDCG@10, Recall@100 and MRR@10 per mode)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import MODES, DbOpt, JsonOpt, emit_json, err, fail, out


def eval_(
    folder: Annotated[
        Path, typer.Argument(help="A BEIR folder: corpus.jsonl, queries.jsonl, qrels/test.tsv.")
    ],
    mode: Annotated[
        list[str] | None,
        typer.Option("--mode", "-m", help="Mode(s) to measure (repeatable); default all."),
    ] = None,
    split: Annotated[str, typer.Option("--split", help="qrels file name.")] = "test",
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Measure retrieval quality on a BEIR data set.

    Prints nDCG@10, Recall@100 and MRR@10 per search mode. The data set is indexed
    into a throwaway index; with --db FILE it is indexed into FILE and kept there, so
    the next run reuses its documents and vectors. FILE must be new or made by an
    earlier cairn eval of the same data set: an index of notes is refused, never
    written over.
    """
    modes = mode or list(MODES)
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise fail(CairnError(f"unknown mode(s): {', '.join(bad)}"), as_json)
    try:
        with common.open_cairn(db, create=True) as cairn:
            data = cairn.evaluation.run(
                folder, modes=modes, split=split, keep=(db or common.state.db_path) is not None
            ).as_dict()
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(data)
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


def register(app: typer.Typer) -> None:
    """Add ``eval`` to ``app``."""
    app.command("eval")(eval_)
