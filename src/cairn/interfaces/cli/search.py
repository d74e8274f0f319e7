"""``cairn search``: its options (declared in :mod:`._search_options`); the body
(:meth:`Cairn.search`, then the hits or ``--json``) is :func:`._hits.run_search`, shared
with the fast path (:mod:`._fast`)."""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer
from typer import _click  # Typer's own Click: its command class's types
from typer.core import TyperCommand

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, JsonOpt, fail
from cairn.interfaces.cli._hits import run_search
from cairn.interfaces.cli._plain import error
from cairn.interfaces.cli._search_options import (
    QUERY_HELP,
    SearchArgs,
    conflict,
    literal_words,
    option,
)
from cairn.model.search_request import SearchRequest


def _option(dest: str) -> Any:
    """The Typer option declared as ``dest`` in :data:`._search_options.OPTIONS`."""
    opt = option(dest)
    extra: dict[str, Any] = {} if opt.minimum is None else {"min": opt.minimum}
    if opt.maximum is not None:
        extra["max"] = opt.maximum
    names = ["/".join(opt.names)] if opt.kind == "switch" else list(opt.names)
    return typer.Option(*names, help=opt.help, show_default=opt.show_default, **extra)


def search(
    ctx: typer.Context,
    query: Annotated[list[str], typer.Argument(help=QUERY_HELP)],
    limit: Annotated[int | None, _option("limit")] = None,
    explain: Annotated[bool, _option("explain")] = False,
    alternates: Annotated[bool, _option("alternates")] = False,
    mode: Annotated[str | None, _option("mode")] = None,
    expand: Annotated[bool | None, _option("expand")] = None,
    rerank: Annotated[bool | None, _option("rerank")] = None,
    sort: Annotated[str | None, _option("sort")] = None,
    files: Annotated[bool, _option("files")] = False,
    fmt: Annotated[str | None, _option("fmt")] = None,
    fields: Annotated[str | None, _option("fields")] = None,
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
    literal = int(ctx.meta.get(_LITERAL, 0))  # after ``--``: words, whatever they look like
    _refuse_unknown_options(ctx, query[: len(query) - literal], as_json)
    clash = conflict(ctx.params)
    if clash is not None:
        ctx.fail(clash)
    outer = {"db": common.state.db_path, "config": common.state.config}
    args = SearchArgs.of(outer, ctx.params)
    try:
        request = SearchRequest.from_mapping(args.fields)
    except CairnError as exc:
        raise typer.Exit(error(exc, as_json)) from None
    code = run_search(common.open_cairn, args.search_db, request, as_json=args.as_json,
                      files=args.files, fmt=args.fmt, fields=args.columns)
    if code:
        raise typer.Exit(code)


_LITERAL = "cairn.search.literal_words"
"""``ctx.meta`` key: how many of the query's last words came after ``--``."""


class _SearchCommand(TyperCommand):
    """The ``search`` command, noting how many of its words come after ``--`` (Click
    keeps no trace of it) before Click reads them."""

    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        ctx.meta[_LITERAL] = literal_words(args)
        return super().parse_args(ctx, args)


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
    app.command(cls=_SearchCommand, context_settings={"ignore_unknown_options": True})(search)
