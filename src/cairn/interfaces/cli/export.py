"""``cairn export okf|obsidian|json DEST`` and ``cairn export compare ROOT``: indexed
knowledge written out as files, and the round-trip check.

Thin: each command calls :meth:`cairn.export.service.ExportService.write` or
:meth:`cairn.export.service.ExportService.compare`. Mount with :func:`register`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, JsonOpt, emit_json, fail, out
from cairn.model.serialize import to_data

export_app = typer.Typer(
    name="export",
    help=(
        "Write indexed knowledge out as files (DEST must be new).\n\n"
        "  cairn export okf ~/bundle            # an OKF v0.2 bundle\n\n"
        "  cairn export obsidian ~/vault --root ~/org\n\n"
        "  cairn export json notes.json --query 'tag:work'\n\n"
        "  cairn export compare ~/notes         # round trip: export, re-index, compare"
    ),
    no_args_is_help=True,
    add_completion=False,
)
RootOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--root",
        help="Only this registered folder, or a folder inside one (repeatable; default: all).",
    ),
]
QueryOpt = Annotated[
    str | None, typer.Option("--query", help="Only documents with a hit for this query.")
]
DestArg = Annotated[Path, typer.Argument(help="A new or empty folder (a new file for json).")]


def _run(
    kind: str,
    dest: Path,
    root: list[Path] | None,
    query: str | None,
    db: Path | None,
    as_json: bool,
) -> None:
    try:
        with common.open_cairn(db) as cairn:
            rep = cairn.export.write(kind, dest, roots=root or None, query=query)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(to_data(rep))
        return
    out.print(
        f"exported {rep.documents} documents to {escape(rep.dest)} ({len(rep.files)} files, "
        f"{rep.relations} relations, {rep.links} links rewritten)"
    )
    if rep.skipped:  # said plainly: what the export does not hold
        out.print(f"[yellow]{len(rep.skipped)} left out:[/yellow]")
        for item in rep.skipped[:10]:
            out.print(f"  {escape(item.path)}: {escape(item.reason)}")
        if len(rep.skipped) > 10:
            out.print(f"  … and {len(rep.skipped) - 10} more (--json lists them all)")


@export_app.command()
def okf(
    dest: DestArg,
    root: RootOpt = None,
    query: QueryOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Export an OKF v0.2 bundle.

    Concept files, index.md, log.md, sources and typed relations.
    """
    _run("okf", dest, root, query, db, as_json)


@export_app.command()
def obsidian(
    dest: DestArg,
    root: RootOpt = None,
    query: QueryOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Export an Obsidian vault.

    Org as Markdown (properties as frontmatter, id: links as wikilinks); Markdown
    copied.
    """
    _run("obsidian", dest, root, query, db, as_json)


@export_app.command("json")
def json_(
    dest: DestArg,
    root: RootOpt = None,
    query: QueryOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Export one JSON file of documents, units, links and edges.

    As the API serialises them.
    """
    _run("json", dest, root, query, db, as_json)


@export_app.command()
def compare(
    root: Annotated[Path, typer.Argument(help="A registered folder.")],
    kind: Annotated[
        str, typer.Option("--kind", help="Export as okf or obsidian (default okf).")
    ] = "okf",
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Export ROOT as OKF or a vault, index it apart and compare the two.

    Compares units, links and embeds (each must reach what it reached), edges and
    tasks (keywords, priorities, planning dates); exits 1 on a difference. Named
    exceptions (a link inside an Org drawer) are listed, not counted as differences.
    """
    try:
        if kind not in ("okf", "obsidian"):
            raise CairnError(f"--kind {kind!r}: use okf or obsidian")
        with common.open_cairn(db) as cairn:
            res = cairn.export.compare(root, kind=kind)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(res)
    else:
        for aspect in ("units", "links", "edges", "footnotes", "tasks", "index", "display"):
            if aspect not in res.counts:
                continue
            a, b = res.counts[aspect]
            out.print(f"{aspect}: {a} in the root, {b} in the export")
            for item in res.missing[aspect][:5]:
                out.print(f"  [red]-[/red] {escape(' | '.join(item)[:160])}")
            for item in res.extra[aspect][:5]:
                out.print(f"  [green]+[/green] {escape(' | '.join(item)[:160])}")
        for reason, n in res.exceptions.items():  # by design, not a loss
            out.print(f"exception: {n} {escape(reason)}")
        out.print("same" if res.same else "[yellow]differences found[/yellow]")
    if not res.same:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``cairn export …`` to ``app``."""
    app.add_typer(export_app)
