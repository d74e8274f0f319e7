"""``cairn search``: its options; the body (:meth:`Cairn.search`, then the hits or
``--json``) is :func:`._hits.run_search`, shared with the fast path (:mod:`._fast`)."""

from __future__ import annotations

import re
from typing import Annotated

import typer

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, JsonOpt, fail
from cairn.interfaces.cli._hits import run_search
from cairn.interfaces.cli._plain import error
from cairn.model.search_request import SearchRequest

MODE_HELP = (
    "keyword (BM25), semantic (embeddings) or hybrid (both, fused); "
    "default: hybrid when the index has embeddings, else keyword."
)


def search(
    ctx: typer.Context,
    query: Annotated[
        list[str],
        typer.Argument(
            help='Words (any may match), "phrases", -exclusions and filters: tag:, '
            "todo:, priority:, path:, format:, source:, type:, prop:KEY=VALUE, before:, "
            "after:, role:, kind:, file:, heading:, section:, level:; dates: scheduled:, "
            "deadline:, closed:, ts:, ts-inactive:, created:, modified: (2024-03, "
            "2024-03..2024-04, <2024-06-01, today, +7d, this-week, soon; a repeating "
            "timestamp counts on each repeat, ts:=2024-03 only on its written date). "
            "A comma list "
            "is an OR (tag:work,home). Quote values with spaces: type:\"Big Table\". "
            "Relative dates count from $CAIRN_TODAY when set.",
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
            "--explain then names the edges walked (default: \\[graph] expand, off).",
            show_default=False,
        ),
    ] = None,
    rerank: Annotated[
        bool | None,
        typer.Option(
            "--rerank/--no-rerank",
            help="Re-rank the top hits (default 30) with the \\[rerank] cross-encoder or "
            "/rerank endpoint, blended with their fused rank; --explain shows each hit's "
            "relevance and rank before (default: \\[rerank] enabled, off).",
            show_default=False,
        ),
    ] = None,
    sort: Annotated[
        str | None,
        typer.Option(
            "--sort",
            help="Order by fields, comma-separated, compared in turn: relevance, deadline, "
            "scheduled, priority, modified (newest first), title; e.g. --sort "
            "priority,deadline (default: relevance).",
            show_default=False,
        ),
    ] = None,
    files: Annotated[
        bool,
        typer.Option("--files", help="Group hits per file: each file once, then its hits."),
    ] = False,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="text (default), json (as --json), csv (a table; --fields, else "
            "rank,title,path,line) or vimgrep (path:line:col:text, for editors).",
            show_default=False,
        ),
    ] = None,
    fields: Annotated[
        str | None,
        typer.Option(
            "--fields",
            help="Print a table of these fields, comma-separated: title, doc_title, path, "
            "abs_path, line, rank, score, kind, format, todo, priority, tags, deadline, "
            "scheduled, closed, prop:KEY (a property or frontmatter value).",
            show_default=False,
        ),
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Search the index by keywords and meaning (hybrid).

    Hybrid (BM25 keywords fused with meaning) once embeddings exist, else keyword
    (BM25 over title, outline path, tags and body).

    Examples: cairn search "garden compost"; cairn search 'tag:work -tag:done budget';
    cairn search 'todo:open path:projects/'; cairn search --mode keyword 'C++';
    cairn search 'deadline:this-week todo:NEXT,WAIT' --sort priority,deadline.
    """
    _refuse_unknown_options(ctx, query, as_json)
    try:
        request = SearchRequest.of(" ".join(query), mode=mode, limit=limit, explain=explain,
                                   alternates=alternates, expand=expand, sort=sort,
                                   rerank=rerank)
    except CairnError as exc:
        raise typer.Exit(error(exc, as_json)) from None
    code = run_search(common.open_cairn, db, request, as_json=as_json, files=files, fmt=fmt,
                      fields=fields)
    if code:
        raise typer.Exit(code)


_OPTION = re.compile(r"--[A-Za-z][A-Za-z0-9-]*(=.*)?", re.S)


def _refuse_unknown_options(ctx: typer.Context, query: list[str], as_json: bool) -> None:
    """A query word that looks like an option (``--limt``, ``--offset=5``) is a
    mistyped or unknown option, not words to search for: an error naming it (and the
    nearest option), with the way to search for such text (as a phrase).

    Raises:
        typer.Exit: status 2, after the message.
    """
    for word in query:
        if _OPTION.fullmatch(word):
            import difflib

            name = word.partition("=")[0]
            known = [o for p in ctx.command.params
                     for o in getattr(p, "opts", ()) if o.startswith("--")]
            near = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise fail(CairnError(
                f"no such option {name}{hint}; to search for the text, quote it as a "
                f"phrase: cairn search '\"{word}\"'"), as_json)


def register(app: typer.Typer) -> None:
    """Add ``search`` to ``app``."""
    app.command(context_settings={"ignore_unknown_options": True})(search)
