"""``cairn memory …``: agent memory on an OKF bundle (remember, recall, consolidate,
maintain, pin, forget, relate, supersede, verify, import).

Thin: each command opens the index and calls one ``memory_*`` method of
:class:`cairn.app.Cairn`; ``--json`` prints the result through the one serialiser.
The bundle is ``--bundle DIR`` (or ``CAIRN_MEMORY``); it is created and registered as
a source root on first use. Mount with :func:`register`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, JsonOpt, emit_json, fail, out
from cairn.model.serialize import to_data

if TYPE_CHECKING:
    from cairn.app import Cairn

memory_app = typer.Typer(
    name="memory",
    help=(
        "Agent memory kept as an OKF bundle.\n\n"
        "Layer-1 memories (events, sealed), layer-2 concepts (a typed graph), maintained "
        "by truth maintenance and Hebbian decay.\n\n"
        "  cairn memory remember 'The build needs Python 3.12' -b ~/mem --tags build\n\n"
        "  cairn memory recall 'python version' -b ~/mem\n\n"
        "  cairn memory consolidate -b ~/mem\n\n"
        "  cairn memory maintain -b ~/mem --dry-run\n\n"
        "  cairn memory verify -b ~/mem"
    ),
    no_args_is_help=True,
    add_completion=False,
)

BundleOpt = Annotated[
    Path,
    typer.Option(
        "--bundle",
        "-b",
        envvar="CAIRN_MEMORY",
        help="The memory bundle folder (default: $CAIRN_MEMORY); created and registered "
        "as a source root on first use, in a new or empty folder only.",
    ),
]
DryOpt = Annotated[
    bool, typer.Option("--dry-run", help="Show the changes as diffs; write nothing.")
]


def _done(data: Any, as_json: bool, line: str) -> None:
    if as_json:
        emit_json(to_data(data))
    else:
        out.print(line)


def _change_line(data: dict[str, Any]) -> str:
    if data.get("dry_run"):  # diffs are file content, never Rich markup
        return escape("".join(data.get("diffs") or [])) or "nothing to change"
    touched = data.get("touched") or []
    return f"{data['action']}: {escape(str(data['path']))} ({len(touched)} files written)"


@memory_app.command()
def remember(
    text: Annotated[str, typer.Argument(help="The event, in prose.")],
    bundle: BundleOpt,
    memory_type: Annotated[
        str, typer.Option("--type", help="FACT, INSIGHT, AXIOM or CONJECTURE.")
    ] = "FACT",
    scope: Annotated[
        str, typer.Option("--scope", help="INCARNATION, UNIVERSAL, USER or PERSONA.")
    ] = "INCARNATION",
    tags: Annotated[
        list[str] | None, typer.Option("--tags", help="A tag (repeatable; commas split).")
    ] = None,
    title: Annotated[
        str | None, typer.Option("--title", help="Title (default: the first line).")
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write a sealed layer-1 memory and index it.

    The memory goes into memories/active/ with its seal.
    """
    tag_list = [t.strip() for raw in tags or [] for t in raw.split(",") if t.strip()]
    try:
        with common.open_cairn(db, create=True) as cairn:
            rec = cairn.memory.remember(
                bundle, text, memory_type=memory_type, scope=scope, tags=tag_list, title=title
            )
    except CairnError as exc:
        raise fail(exc, as_json) from None
    _done(rec, as_json, f"remembered {escape(rec.path)} (seal {rec.seal[:12]})")


@memory_app.command()
def recall(
    query: Annotated[str, typer.Argument(help="What to recall (cairn's query syntax).")],
    bundle: BundleOpt,
    limit: Annotated[int, typer.Option("--limit", "-n", help="Most hits.")] = 10,
    mode: Annotated[str | None, typer.Option("--mode", help="keyword, semantic or hybrid.")] = None,
    no_expand: Annotated[
        bool, typer.Option("--no-expand", help="Do not follow concept relations.")
    ] = False,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Search concepts and memories, following relations.

    Follows concept relations and records the recall.
    """
    try:
        with common.open_cairn(db) as cairn:
            res = cairn.memory.recall(bundle, query, limit=limit, mode=mode, expand=not no_expand)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(to_data(res))
        return
    for i, h in enumerate(res.hits, 1):
        via = f"  [dim](via {h.via.type} of {escape(h.via.source)})[/dim]" if h.via else ""
        out.print(f"{i:>2}. [bold]{escape(h.title)}[/bold]  [blue]{escape(h.path)}[/blue]{via}")
        if h.snippet:
            out.print(f"    {escape(h.snippet)}")
    if not res.hits:
        out.print("[dim]nothing recalled[/dim]")


@memory_app.command()
def consolidate(
    bundle: BundleOpt,
    threshold: Annotated[
        float, typer.Option("--threshold", help="Similarity (0–1) to merge at.")
    ] = 0.35,
    llm: Annotated[
        bool | None,
        typer.Option(
            "--llm/--no-llm",
            help="Let the \\[enrich] model propose the clusters (default: when \\[enrich] is "
            "configured); the same rules check them. --no-llm: the rules alone.",
        ),
    ] = None,
    dry_run: DryOpt = False,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Turn new memories into concepts.

    Similar ones are merged; the memories move to subsumed/.
    """
    try:
        with common.open_cairn(db, create=True) as cairn:
            res, change = cairn.memory.consolidate(
                bundle, dry_run=dry_run, threshold=threshold, llm=llm
            )
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json({**to_data(res), "dry_run": dry_run, "diffs": list(change.diffs)})
        return
    if dry_run:
        # diffs are file content: printed verbatim, never read as Rich markup
        out.print("".join(change.diffs) or "nothing to consolidate", markup=False)
        return
    out.print(
        f"{len(res.created)} concepts created, {len(res.merged)} merged into, "
        f"{len(res.subsumed)} memories subsumed"
        + (f" (proposed by {res.proposer})" if res.proposer else "")
    )
    for p in res.problems:
        out.print(f"[yellow]refused:[/yellow] {escape(p)}")


@memory_app.command()
def maintain(
    bundle: BundleOpt,
    no_decay: Annotated[
        bool, typer.Option("--no-decay", help="Integrity, symmetry, truth maintenance only.")
    ] = False,
    dry_run: DryOpt = False,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run one maintenance cycle on the bundle.

    Seals, symmetry, truth maintenance, Hebbian decay.
    """
    try:
        with common.open_cairn(db, create=True) as cairn:
            rep = cairn.memory.maintain(bundle, dry_run=dry_run, decay=not no_decay)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(to_data(rep))
        return
    for p in rep.integrity:
        out.print(f"[red]problem[/red] {escape(p.path)}: {escape(p.reason)}")
    for c in rep.cycles:
        out.print(f"[yellow]cycle[/yellow] depends_on: {escape(' -> '.join(c))}")
    for d in rep.dangling:
        out.print(f"[yellow]dangling[/yellow] {escape(d.source)} -> {escape(d.target)}")
    for u in rep.unsourced:
        out.print(f"[yellow]symmetry[/yellow] {escape(u)} is the source of no active concept")
    if dry_run:
        out.print("".join(rep.diffs), markup=False)
    out.print(
        f"{rep.checked} seals checked ({len(rep.integrity)} bad), {len(rep.recalled)} "
        f"recalled, {len(rep.decayed)} decayed, {len(rep.archived)} archived, "
        f"{len(rep.superseded)} superseded, {len(rep.cycles)} cycles, {rep.pending} pending"
    )


def _change(db: Path | None, as_json: bool, call: Callable[[Cairn], Any]) -> None:
    """Run one change-making memory call on the index and report its change."""
    try:
        with common.open_cairn(db, create=True) as cairn:
            ch = call(cairn)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    _done(ch, as_json, _change_line(to_data(ch)))


@memory_app.command()
def pin(
    concept: Annotated[str, typer.Argument(help="Concept file, name or stem.")],
    bundle: BundleOpt,
    off: Annotated[bool, typer.Option("--off", help="Unpin instead.")] = False,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Pin a concept so it never decays (or --off to unpin)."""
    _change(db, as_json, lambda cairn: cairn.memory.pin(bundle, concept, pinned=not off))


@memory_app.command()
def forget(
    name: Annotated[str, typer.Argument(help="Memory or concept file, name or stem.")],
    bundle: BundleOpt,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Move a memory or concept to its archive folder (never deletes)."""
    _change(db, as_json, lambda cairn: cairn.memory.forget(bundle, name))


@memory_app.command()
def relate(
    source: Annotated[str, typer.Argument(help="The concept the relation starts at.")],
    relation: Annotated[
        str, typer.Argument(help="refines, depends_on, supports, contradicts or related.")
    ],
    target: Annotated[str, typer.Argument(help="The concept it points to.")],
    bundle: BundleOpt,
    confidence: Annotated[float, typer.Option("--confidence", help="0–1.")] = 1.0,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add a typed relation between two concepts."""
    _change(db, as_json, lambda cairn: cairn.memory.relate(
        bundle, source, relation, target, confidence=confidence))


@memory_app.command()
def supersede(
    concept: Annotated[str, typer.Argument(help="Concept file, name or stem.")],
    bundle: BundleOpt,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Mark a concept superseded.

    The next maintain supersedes what depends_on it.
    """
    _change(db, as_json, lambda cairn: cairn.memory.supersede(bundle, concept))


@memory_app.command()
def verify(bundle: BundleOpt, db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Recompute every seal and check the bundle; name what is wrong.

    Exits 1 when a seal does not match, a memory is in two folders, a memory a concept
    or the index names is gone, or a write was left half done.
    """
    try:
        with common.open_cairn(db, create=True) as cairn:
            rep = cairn.memory.verify(bundle)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json({**to_data(rep), "ok": rep.ok})
    else:
        for p in rep.problems:
            out.print(f"[red]problem[/red] {escape(p.path)}: {escape(p.reason)}")
        out.print(f"{rep.checked} memories checked, {len(rep.problems)} problems")
    if not rep.ok:
        raise typer.Exit(1)


@memory_app.command("import")
def import_graph(
    graph_file: Annotated[Path, typer.Argument(help="A NetworkX node-link .json or .yaml.")],
    bundle: BundleOpt,
    dry_run: DryOpt = False,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import a NetworkX node-link graph as concepts.

    With relations; reports what could not be mapped.
    """
    try:
        with common.open_cairn(db, create=True) as cairn:
            rep = cairn.memory.import_graph(bundle, graph_file, dry_run=dry_run)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(to_data(rep))
        return
    for u in rep.unmapped:
        out.print(
            f"[yellow]not mapped[/yellow] {u.what} {escape(u.id)}: {escape(u.reason)}"
        )
    out.print(f"{rep.concepts} concepts, {rep.relations} relations, {len(rep.unmapped)} not mapped")


def register(app: typer.Typer) -> None:
    """Add ``cairn memory …`` to ``app``."""
    app.add_typer(memory_app)
