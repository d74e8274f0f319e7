"""One grammar for ``cairn search``: the fast path (:func:`cairn.interfaces.cli._fast.parse`)
and the Typer command read the same command lines into the same search, and every
command line Typer refuses is left to Typer."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cairn.interfaces.cli import app
from cairn.interfaces.cli._fast import parse
from cairn.interfaces.cli._search_options import GLOBAL_OPTIONS, OPTIONS, SearchArgs, conflict
from cairn.interfaces.cli.search import _LITERAL, _OPTION

READ_BY_BOTH = [
    ["search", "induction", "hob"],
    ["--db", "a.db", "--config=c.toml", "search", "-tag:done", "plan"],
    ["search", "x", "--db=b.db", "--limit", "3", "--mode=semantic", "--expand",
     "--no-expand", "--explain", "--json", "--alternates", "y"],
    ["search", "x", "--rerank", "--sort", "priority,deadline", "--files"],
    ["search", "x", "--no-rerank", "--format", "csv", "--fields", "title,path"],
    ["search", "x", "--format=vimgrep", "--limit=1", "--mode", "fuzzy"],
    ["--db", "search", "search", "search"],
    ["search", "x", "--limit", "2", "--limit", "5", "--db", "a", "--db", "b"],
    ["search", "--mode", "keyword", "x", "--json", "--json"],
    ["search", "x", "-", "-draft", "-tag:done", "-x"],
    ["--config", "c.toml", "--db=a.db", "search", "tag:\"Big Table\"", "C++"],
    ["search", "x", "--limit", "007"],
    ["search", "x", "--limit", "1000000"],  # MAX_LIMIT
    ["search", ""],
    ["search", "x", "--mode=", "--sort=", "--fields=", "--format", ""],
    ["--db=", "search", "x", "--db="],
    ["search", "--", "-x"],
    ["search", "x", "--", "--limit"],
    ["search", "--mode", "keyword", "--", "--limit", "3", "--json", "--", "x"],
    ["search", "x", "--files", "--explain", "--json"],
    ["search", "x", "--format", "json", "--json", "--fields", "title,score"],
]
"""Command lines both read, into the same search."""

REFUSED_BY_TYPER = [
    [],
    ["--help"],
    ["search"],
    ["search", "--help"],
    ["search", "x", "--help"],
    ["search", "x", "--limit", "0"],
    ["search", "x", "--limit", "many"],
    ["search", "x", "--limit"],
    ["search", "x", "--limit="],
    ["search", "x", "--mode"],
    ["search", "x", "--json=1"],
    ["search", "x", "--explain=yes"],
    ["search", "x", "--no-expand=1"],
    ["search", "x", "--bogus"],
    ["search", "x", "--limt=5"],
    ["search", "--json"],
    ["--verbose", "search", "x"],
    ["--db"],
    ["--db", "a.db"],
    ["search", "x", "--sort", "--", "--limt"],  # ``--`` is --sort's value here
    ["search", "x", "--json", "--format", "csv"],  # layouts that conflict
    ["search", "x", "--json", "--format", "text"],
    ["search", "x", "--format", "vimgrep", "--json"],
    ["search", "x", "--files", "--fields", "title"],
    ["search", "x", "--files", "--format", "csv"],
    ["search", "x", "--fields", "title", "--format", "vimgrep"],
    ["search", "x", "--format", "vimgrep", "--explain"],
    ["search", "x", "--explain", "--fields", "title", "--json"],
    ["search", "x", "--files", "--explain"],
    ["search", "x", "--limit", "\u0663"],  # an Arabic-Indic three
    ["search", "x", "--limit", "9" * 5000],  # more digits than int() reads
    ["search", "x", "--limit", "9223372036854775808"],  # past SQLite's integers
    ["search", "x", "--limit", "1000001"],  # past MAX_LIMIT
    ["search", "x", "--limit", "1" + "0" * 40],
]
"""Command lines Typer refuses (a usage error, or a query word that is an unknown
option): the fast path leaves each to Typer, which says what is wrong."""

LEFT_TO_TYPER = [
    ["stats"],
    ["--db", "a.db", "graph", "search"],
    ["search", "x", "--limit", "+3"],
    ["search", "x", "--mode", "-x"],
    ["search", "x", "--limit", "1_0"],
]
"""Command lines Typer accepts that the fast path does not read itself (another
command, or a spelling it cannot be certain Click reads the same way)."""


def _typer_reading(argv: list[str]) -> SearchArgs | None:
    """The search the Typer command reads from ``argv``, through Click's own parsing of
    the real application, or ``None`` when it refuses the line or it is no search."""
    group = typer.main.get_command(app)
    try:
        ctx = group.make_context("cairn", list(argv))
        if not ctx.args and argv[len(argv) - 1:] != ["search"]:
            return None
        rest = argv[len(argv) - len(ctx.args) - 1:]  # the command and its arguments
        if rest[0] != "search":
            return None
        command = group.get_command(ctx, "search")
        assert command is not None
        sub = command.make_context("search", rest[1:], parent=ctx)
    except (typer.Exit, typer.TyperException):  # --help; a usage error
        return None
    words = sub.params["query"]
    literal = int(sub.meta.get(_LITERAL, 0))  # the words after ``--``
    if any(_OPTION.fullmatch(w) for w in words[: len(words) - literal]):
        return None  # the command refuses a query word that is an unknown option
    if conflict(sub.params) is not None:
        return None  # the command refuses layouts that conflict
    return SearchArgs.of(ctx.params, sub.params)


def _id(argv: list[str]) -> str:
    return " ".join(argv)[:60]


@pytest.mark.parametrize("argv", READ_BY_BOTH, ids=_id)
def test_both_paths_read_the_same_search(argv: list[str]) -> None:
    typer_args = _typer_reading(argv)
    assert typer_args is not None, "Typer reads it"
    fast = parse(argv)
    assert fast is not None, "the fast path reads it"
    assert fast == typer_args
    assert fast.words == typer_args.words


@pytest.mark.parametrize("argv", REFUSED_BY_TYPER, ids=_id)
def test_what_typer_refuses_is_left_to_typer(argv: list[str]) -> None:
    assert _typer_reading(argv) is None
    assert parse(argv) is None


@pytest.mark.parametrize("argv", LEFT_TO_TYPER, ids=_id)
def test_what_the_fast_path_is_unsure_of_typer_reads(argv: list[str]) -> None:
    assert parse(argv) is None
    assert argv[0] != "search" or _typer_reading(argv) is not None


def test_the_readings_match_field_by_field() -> None:
    args = parse(["--db", "a.db", "search", "x", "--limit=3", "--no-expand", "--sort",
                  "title", "--format", "json", "--fields", "title", "--json",
                  "--db", "b.db", "y"])
    assert args == SearchArgs(
        {"query": "x y", "limit": 3, "mode": None, "explain": False, "alternates": False,
         "expand": False, "rerank": None, "sort": "title"},
        outer_db=Path("a.db"), search_db=Path("b.db"), as_json=True,
        fmt="json", columns="title")
    grouped = parse(["search", "x", "--files", "--json"])
    assert grouped is not None and grouped.files and grouped.as_json


def test_the_typer_command_is_built_from_the_declarations() -> None:
    group = typer.main.get_command(app)
    ctx = group.make_context("cairn", ["search", "x"])
    command = group.get_command(ctx, "search")
    assert command is not None
    declared = {opt.dest: opt.names for opt in OPTIONS}
    typer_options = {p.name: (*p.opts, *p.secondary_opts) for p in command.params
                     if p.name != "query"}
    assert typer_options == declared
    outer = {p.name: tuple(p.opts) for p in group.params}
    assert {opt.dest: opt.names for opt in GLOBAL_OPTIONS} == outer


def test_a_usage_error_still_comes_from_typer(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["search", "x", "--limit", "0", "--db",
                                   str(tmp_path / "none.db")])
    assert res.exit_code == 2
    assert "--limit" in res.output


def test_a_limit_past_the_largest_page_is_refused_at_every_door() -> None:
    from cairn.errors import QueryError
    from cairn.model.search_request import MAX_LIMIT, MAX_OFFSET, SearchRequest

    assert SearchRequest.of("x", limit=MAX_LIMIT).limit == MAX_LIMIT
    with pytest.raises(QueryError, match="limit must be a whole number from 1 to 1,000,000"):
        SearchRequest.of("x", limit=2**63)
    with pytest.raises(QueryError, match="offset must be from 0"):
        SearchRequest.of("x", offset=MAX_OFFSET + 1)
