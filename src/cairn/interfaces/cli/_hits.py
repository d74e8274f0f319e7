"""The body of ``cairn search``: call :meth:`Cairn.search`, print the hits (or JSON).

Shared by the Typer command (:mod:`.search`) and the fast path (:mod:`._fast`), so
both print the same thing. Imports neither Typer nor Rich (only ``--explain`` loads
Rich, for its table).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cairn.errors import CairnError
from cairn.interfaces.cli._plain import (
    emit_json,
    err,
    error,
    one_line,
    out,
    plural,
    quote_path,
)
from cairn.model.core import SEARCH_MODES
from cairn.model.search_body import search_body

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from rich.table import Table

    from cairn.app import Cairn
    from cairn.config import Config
    from cairn.model import Hit, SearchRequest, Timestamp

MODES = SEARCH_MODES
"""The search modes."""

Opener = Callable[[Path | None], "AbstractContextManager[Cairn]"]
"""``opener(db)``: the index to search, as a context manager (closed after)."""


def planning_text(planning: Sequence[Timestamp]) -> str:
    """``SCHEDULED: <2026-03-20 Fri> DEADLINE: <…>`` as on an Org planning line."""
    return " ".join(f"{t.role.upper()}: {t.raw}" for t in planning)


@dataclass(frozen=True)
class Found:
    """A search's answer as ``cairn search`` prints it, from a local search
    (:func:`find`) or a warm process (:mod:`._fast`)."""

    hits: Sequence[Hit]
    notes: Sequence[str]
    took_ms: float
    empty: bool
    """No hits, and the index is empty (a note says so)."""
    where: str
    """The index, as that note names it (a PostgreSQL URL without its password)."""
    rows: list[dict[str, Any]] | None = None
    """``--fields``: the table's rows (values typed as JSON has them)."""
    positions: Sequence[tuple[int, int]] = ()
    """``--format vimgrep``: each hit's match positions."""


def index_name(config: Config) -> str:
    """The index ``config`` names, as messages show it (a URL without its password)."""
    if config.db_url:
        from cairn.config.locations import redact_password

        return redact_password(config.db_url)
    return str(config.db_path)


def find(cairn: Cairn, request: SearchRequest, *, fmt: str | None = None,
         fields: str | None = None) -> Found:
    """Run ``request`` on ``cairn``, with the table rows of ``fields`` and, for ``fmt``
    ``vimgrep``, the match positions.

    Raises:
        cairn.errors.CairnError: the search or a field failed.
    """
    res = cairn.search(request)
    return Found(
        res.hits, res.notes, res.took_ms,
        empty=not res.hits and cairn.notes.is_empty(),
        where=index_name(cairn.config),
        rows=cairn.fields.columns(res.hits, fields) if fields else None,
        positions=cairn.fields.positions(res.hits, request.text) if fmt == "vimgrep" else (),
    )


def run_search(
    opener: Opener,
    db: Path | None,
    request: SearchRequest,
    *,
    as_json: bool = False,
    files: bool = False,
    fmt: str | None = None,
    fields: str | None = None,
) -> int:
    """Run ``request`` on the index ``opener(db)`` opens and print the result; returns
    the exit status (0, or 1/2 after printing an error, see :func:`._plain.error`).

    The options here are how the hits are printed, not what is searched: ``files``
    groups hits per file; ``fmt`` is ``text``, ``json`` (as ``--json``),
    ``csv`` or ``vimgrep``; ``fields`` (``"title,todo,prop:OWNER"``) prints a table
    (as text, or with ``fmt`` CSV or JSON)."""
    if fmt == "json":
        as_json, fmt = True, None
    try:
        fmt, fields = layout(fmt, fields)
        with opener(db) as cairn:
            found = find(cairn, request, fmt=fmt, fields=fields)
    except CairnError as exc:
        return error(exc, as_json)
    return print_found(found, request, as_json=as_json, files=files, fmt=fmt, fields=fields)


def layout(fmt: str | None, fields: str | None) -> tuple[str | None, str | None]:
    """``(fmt, fields)`` checked, a CSV's default columns filled in.

    Raises:
        cairn.errors.CairnError: an unknown format.
    """
    if fmt is None:
        return fmt, fields
    from cairn.interfaces.cli._layouts import FORMATS

    if fmt not in FORMATS:
        raise CairnError(f"unknown format {fmt!r}: use {', '.join(FORMATS)}")
    if fmt == "csv" and not fields:
        fields = "rank,title,path,line,root"
    return fmt, fields


def print_found(found: Found, request: SearchRequest, *, as_json: bool = False,
                files: bool = False, fmt: str | None = None,
                fields: str | None = None) -> int:
    """Print ``found`` as :func:`run_search` does (its options); returns 0."""
    text, explain = request.text, request.explain
    if fmt == "json":
        as_json, fmt = True, None
    if found.rows is not None and fields:
        from cairn.interfaces.cli._layouts import print_table

        names = [n.strip() for n in fields.split(",") if n.strip()]
        print_table(found.rows, names, "json" if as_json else (fmt or "text"))
        return 0
    if files:
        from cairn.interfaces.cli._layouts import print_files

        print_files(found.hits, found.took_ms, as_json, text, found.notes)
        return 0
    if fmt == "vimgrep":
        from cairn.interfaces.cli._layouts import print_vimgrep

        print_vimgrep(found.hits, found.positions)
        return 0
    if found.empty:
        err.line(
            err.paint("note:", "yellow"),
            f" the index {found.where} is empty; run ",
            err.paint("cairn index FOLDER", "bold"),
            " first (or pick another with --db)",
        )
    if as_json:
        emit_json(search_body(text, found))
        return 0
    for n in found.notes:
        err.line(err.paint("note:", "yellow"), " ", err.paint(n))
    if not found.hits:
        out.line(out.paint("no hits", "dim"))
        return 0
    for h in found.hits:
        print_hit(h, explain)
    out.line(out.paint(f"{plural(len(found.hits), 'hit')} in {found.took_ms:.1f} ms", "dim"))
    return 0


def print_hit(h: Hit, explain: bool) -> None:
    """One hit as a few readable lines: rank, TODO, priority, title, tags; the
    document and outline path; file:line; planning; the snippet; context."""
    p = out.paint
    parents = list(h.outline_path[:-1])
    if parents and parents[0] == h.doc_title:
        parents = parents[1:]
    crumbs = " › ".join(parents)
    head = [p(f"{h.rank}.", "bold"), " "]
    if h.todo:
        head += [p(h.todo, "magenta"), " "]
    if h.priority:
        head += [p(f"[#{h.priority}]", "red"), " "]
    head.append(p(one_line(h.title or h.doc_title), "bold"))
    if h.tags:
        head += [" ", p(":" + ":".join(h.tags) + ":", "cyan")]
    out.line(*head)
    out.line("   ", p(one_line(h.doc_title + (f" › {crumbs}" if crumbs else "")), "dim"))
    where = f"{quote_path(h.abs_path)}:{h.line_start}"
    out.line("   ", p(where, "blue"), *((" ", p(f"#^{h.block}", "dim")) if h.block else ()))
    if h.planning:
        out.line(p(f"   {planning_text(h.planning)}", "magenta"))
    out.line("   ", out.spans(h.snippet, h.highlights, "bold yellow"))
    if h.kind == "message":
        for line in h.siblings:
            out.line(p(f"   · {line}", "dim"))
    if explain:
        _print_explain(h.score, h.explain)


def explain_table(e: dict[str, Any], score: float) -> Table:
    """One hit's explanation as a small Rich table: each list's rank and raw score
    (under the keyword list, the parts of its raw score, ``· speaker Caroline``), each
    summand, and the total they add up to."""
    from rich.table import Table

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
        for part, value in (lst.get("parts") or {}).items():
            table.add_row(f"  · {part}", "", f"{value:.4f}", "")
    rr = e.get("rerank")
    if isinstance(rr, dict):  # the blend: the fused rank's part and the reranker's
        rel = rr.get("relevance")
        if "retrieval" in sums:
            table.add_row(
                f"fused rank (×{rr.get('retrieval_weight')})",
                str(rr.get("rank_before", "")),
                f"{rr.get('fused_score', 0):.4f}",
                f"{sums.pop('retrieval'):.6g}",
            )
        if "rerank" in sums:
            table.add_row(
                f"rerank ({rr.get('model')})", "", f"{rel:.4f}" if rel is not None else "",
                f"{sums.pop('rerank'):.6g}",
            )
    for name, value in sums.items():
        table.add_row(name, "", "", f"{value:.6g}")
    table.add_row("[bold]score[/bold]", "", "", f"[bold]{e.get('score', score):.6g}[/bold]")
    return table


def _print_explain(score: float, exp: Any) -> None:
    """A hit's explanation (:func:`explain_table`), then the graph edges walked."""
    if not isinstance(exp, dict):
        return
    from cairn.interfaces.cli._console import CliConsole

    CliConsole(highlight=False, soft_wrap=True, emoji=False).print(explain_table(exp, score))
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
            out.line(out.paint(line, "dim"))
