"""``cairn graph …``: walk the knowledge graph from the command line.

Thin: each command opens the index as every command does and calls one method of
:attr:`cairn.app.Cairn.graph` (``neighbors``, ``backlinks``, ``path``, ``orphans``,
``stats``, ``export``), which brings the graph up to date first.
A NODE is a unit id, a document id, a stub id, a unique id prefix or a file path
(absolute, or relative to the current folder or to a source root), ``PATH:LINE`` for
the heading at that line. Every command takes ``--json`` and then prints exactly one
JSON document. Mount with :func:`register`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, JsonOpt, emit_json, err, fail, out

if TYPE_CHECKING:
    from cairn.model import GraphNode

graph_app = typer.Typer(
    name="graph",
    help=(
        "The knowledge graph: typed links between notes and headings.\n\n"
        "  cairn graph backlinks notes/x.org\n\n"
        "  cairn graph neighbors notes/x.md --hops 2 --relation references\n\n"
        "  cairn graph path notes/a.md notes/b.org\n\n"
        "  cairn graph export --format graphml > graph.graphml"
    ),
    no_args_is_help=True,
    add_completion=False,
)


RelOpt = Annotated[
    list[str] | None,
    typer.Option("--relation", "-r", help="Only edges of this relation (repeatable)."),
]
OriginOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--origin",
        "-o",
        help="Only edges of this origin: declared, structural, rule, implicit (repeatable).",
    ),
]


def _where(node: GraphNode) -> str:
    if node.type == "stub":
        if node.kind == "attachment" and not node.reason:
            # an existing non-note file (an image, a ``.base``): linked, not missing
            return f"[cyan]file[/cyan] {escape(str(node.title))}"
        return f"[yellow]missing[/yellow] {escape(str(node.title))}"
    title = escape(str(node.title or ""))
    return f"{title}  [blue]{escape(str(node.path))}:{node.line}[/blue]"


@graph_app.command()
def neighbors(
    node: Annotated[str, typer.Argument(help="Unit/document id or file path[:line].")],
    hops: Annotated[int, typer.Option("--hops", "-n", help="Maximum distance.")] = 1,
    relation: RelOpt = None,
    origin: OriginOpt = None,
    direction: Annotated[str, typer.Option("--direction", "-d", help="out, in or both.")] = "both",
    limit: Annotated[int, typer.Option("--limit", help="Most nodes to list.")] = 500,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Nodes within N hops of NODE, with the edge that reached each."""
    try:
        with common.open_cairn(db) as cairn:
            data = cairn.graph.neighbors(
                node,
                hops=hops,
                relations=relation or None,
                origins=origin or None,
                direction=direction,
                limit=limit,
            )
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(data)
        return
    for n in data.neighbors:
        arrow = "→" if n.via.forward else "←"
        out.print(
            f"{n.hop} {arrow} [magenta]{n.via.relation}[/magenta] "
            f"[dim]({n.via.origin})[/dim] {_where(n.node)}"
        )
    out.print(f"[dim]{len(data.neighbors)} neighbours[/dim]")


@graph_app.command()
def backlinks(
    node: Annotated[str, typer.Argument(help="Unit/document id or file path[:line].")],
    internal: Annotated[
        bool, typer.Option("--internal", help="Also links from inside the same node set.")
    ] = False,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Who links to NODE (the reverse view of declared edges)."""
    try:
        with common.open_cairn(db) as cairn:
            data = cairn.graph.backlinks(node, include_internal=internal)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(data)
        return
    for b in data.backlinks:
        times = f" ×{b.count}" if b.count > 1 else ""
        out.print(
            f"{_where(b.source)}  [magenta]{','.join(b.relations)}[/magenta]{times}"
            f" → {escape(str(b.target.title))}"
        )
    out.print(f"[dim]{data.count} links from {data.sources} documents[/dim]")


@graph_app.command()
def path(
    source: Annotated[str, typer.Argument(help="From this node.")],
    target: Annotated[str, typer.Argument(help="To this node.")],
    relation: RelOpt = None,
    origin: OriginOpt = None,
    directed: Annotated[
        bool, typer.Option("--directed", help="Follow edges only as written.")
    ] = False,
    max_hops: Annotated[int, typer.Option("--max-hops", help="Give up beyond this.")] = 12,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A shortest path between two nodes."""
    try:
        with common.open_cairn(db) as cairn:
            data = cairn.graph.path(
                source,
                target,
                relations=relation or None,
                origins=origin or None,
                direction="out" if directed else "both",
                max_hops=max_hops,
            )
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(data)
    elif data.length is None:
        out.print("[dim]no path[/dim]")
    else:
        for s in data.steps:
            arrow = "→" if s.step.forward else "←"
            out.print(
                f"{_where(s.from_node)}\n  {arrow} [magenta]{s.step.relation}[/magenta] "
                f"[dim]({s.step.origin})[/dim]"
            )
        if data.steps:
            out.print(_where(data.steps[-1].to_node))
        out.print(f"[dim]length {data.length}[/dim]")
    if data.length is None:
        raise typer.Exit(1)


@graph_app.command()
def orphans(db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Notes with no link in or out."""
    try:
        with common.open_cairn(db) as cairn:
            data = cairn.graph.orphans()
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(data)
        return
    for o in data:
        extra = (
            f"  [yellow]{o.unresolved_links} broken links[/yellow]"
            if o.unresolved_links
            else ""
        )
        out.print(
            f"{escape(str(o.title))}  [blue]{escape(o.abs_path)}[/blue]"
            f"  [dim]{o.document_id}[/dim]{extra}"
        )
    out.print(f"[dim]{len(data)} orphans[/dim]")


@graph_app.command()
def unresolved(db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """List every unresolved link and anchor.

    With its file and line (URLs left out).
    """
    try:
        with common.open_cairn(db) as cairn:
            data = cairn.maintain.unresolved_links()
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(data)
        return
    for u in data:
        where = f"{u.path}:{u.line}" if u.line else u.path
        out.print(f"[blue]{escape(where)}[/blue]  {escape(u.raw or u.target)}  "
                  f"[dim]{escape(u.reason)}[/dim]")
    out.print(f"[dim]{len(data)} unresolved links[/dim]")


@graph_app.command()
def stats(origin: OriginOpt = None, db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Count nodes, edges, degrees and components.

    Edges per relation and origin, degrees, connected components.
    """
    try:
        with common.open_cairn(db) as cairn:
            data = cairn.graph.stats(origins=origin or None)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(data)
        return
    n = data.nodes
    out.print(
        f"{n.units} units, {n.stubs} stubs (missing targets), "
        f"{n.documents} documents; {data.edges} edges"
    )
    out.print("by origin: " + ", ".join(f"{k} {v}" for k, v in data.by_origin.items()))
    out.print("by relation: " + ", ".join(f"{k} {v}" for k, v in data.by_relation.items()))
    d, c = data.degree, data.components
    out.print(f"degree: max {d.max}, mean {d.mean}; histogram {d.histogram}")
    out.print(f"components: {c.count} (largest {c.largest}, isolated {c.isolated})")
    out.print(f"unresolved link occurrences: {data.unresolved_links}")


@graph_app.command()
def export(
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="json (node-link), graphml or cytoscape.")
    ] = "json",
    around: Annotated[
        str | None, typer.Option("--around", help="Only the subgraph around this node.")
    ] = None,
    hops: Annotated[int, typer.Option("--hops", "-n", help="With --around.")] = 1,
    relation: RelOpt = None,
    origin: OriginOpt = None,
    output: Annotated[
        Path | None, typer.Option("--output", help="Write here instead of stdout.")
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Export the graph as node-link JSON, GraphML or Cytoscape.

    Node-link JSON for NetworkX, GraphML, Cytoscape.js.
    """
    try:
        with common.open_cairn(db) as cairn:
            text = cairn.graph.export(
                fmt,
                around=around,
                hops=hops,
                relations=relation or None,
                origins=origin or None,
            )
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if output is not None:
        output.write_text(text, encoding="utf-8")
        if as_json:
            emit_json({"output": str(output), "format": fmt, "bytes": len(text.encode())})
        else:
            err.print(f"wrote {escape(str(output))}")
        return
    if as_json and fmt.casefold() == "graphml":
        emit_json({"format": "graphml", "text": text})
        return
    sys.stdout.write(text)


def register(app: typer.Typer) -> None:
    """Mount ``graph`` and its commands on ``app``."""
    app.add_typer(graph_app, name="graph")
