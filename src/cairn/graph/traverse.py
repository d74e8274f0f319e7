"""Walking the graph: neighbours, backlinks, shortest paths, subgraphs, orphans, stats.

Everything runs as indexed SQL lookups level by level (``edges_out`` / ``edges_in``
are covering indexes), so the cost follows the size of the neighbourhood, not of the
graph: 2-hop neighbours on 100,000 units / 500,000 edges take a few milliseconds
(``bench/graph.py``). Nodes are unit ids or stub ids (``stub:…``).

Direction: ``"out"`` follows edges source → target, ``"in"`` target → source,
``"both"`` either way. The symmetric relations (``shares_tag``, ``shares_property``)
are stored once per pair and always followed both ways.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cairn.errors import QueryError
from cairn.graph.edges import DECLARED, SYMMETRIC
from cairn.model import Edge, OrphanDocument
from cairn.model.graph_results import (
    Components,
    Degrees,
    GraphStats,
    NodeCounts,
    Step,
    TopLinked,
)
from cairn.store import EdgeIndex

DIRECTIONS = ("out", "in", "both")


@dataclass(frozen=True, slots=True)
class Neighbor:
    """A node reached within N hops: its distance and the step that first reached it."""

    node: str
    hop: int
    via: Step


def _check_direction(direction: str) -> None:
    if direction not in DIRECTIONS:
        raise QueryError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")


def steps_from(
    es: EdgeIndex,
    nodes: Sequence[str],
    *,
    relations: Sequence[str] | None = None,
    origins: Sequence[str] | None = None,
    direction: str = "both",
) -> list[Step]:
    """Every step leaving ``nodes`` (one SQL query per direction and 900 nodes)."""
    _check_direction(direction)
    rels = list(relations) if relations else None
    keep_origin = set(origins) if origins else None
    out: list[Step] = []

    def keep(origin: str) -> bool:
        return keep_origin is None or origin in keep_origin

    sym = [r for r in (rels or sorted(SYMMETRIC)) if r in SYMMETRIC]
    if direction in ("out", "both"):
        out.extend(Step(a.id, a.source, a.target, a.relation, a.origin, a.weight, True)
                   for a in es.out_arcs(nodes, rels) if keep(a.origin))
    elif sym:  # "in": symmetric relations are walked both ways
        out.extend(Step(a.id, a.source, a.target, a.relation, a.origin, a.weight, True)
                   for a in es.out_arcs(nodes, sym) if keep(a.origin))
    if direction in ("in", "both"):
        out.extend(Step(a.id, a.target, a.source, a.relation, a.origin, a.weight, False)
                   for a in es.in_arcs(nodes, rels) if keep(a.origin))
    elif sym:
        out.extend(Step(a.id, a.target, a.source, a.relation, a.origin, a.weight, False)
                   for a in es.in_arcs(nodes, sym) if keep(a.origin))
    return out


def neighbors(
    es: EdgeIndex,
    seeds: Sequence[str],
    *,
    hops: int = 1,
    relations: Sequence[str] | None = None,
    origins: Sequence[str] | None = None,
    direction: str = "both",
    limit: int | None = None,
) -> list[Neighbor]:
    """Nodes within ``hops`` of any seed (seeds excluded), nearest first.

    Args:
        seeds: unit or stub ids (all units of a document, for a file).
        hops: maximum distance (>= 1).
        relations / origins: only walk edges of these relations / origins (``None``: all).
        direction: ``out``, ``in`` or ``both``.
        limit: stop after this many nodes (``None``: no limit).

    Returns:
        One :class:`Neighbor` per node, in breadth-first order (by hop, then the order
        edges were found); ``via`` is the step that first reached it.

    Raises:
        QueryError: ``hops < 1`` or an unknown direction.
    """
    if hops < 1:
        raise QueryError(f"hops must be at least 1, not {hops}")
    seen = set(seeds)
    frontier = list(dict.fromkeys(seeds))
    found: list[Neighbor] = []
    for hop in range(1, hops + 1):
        if not frontier:
            break
        nxt: list[str] = []
        for st in steps_from(es, frontier, relations=relations, origins=origins,
                             direction=direction):
            if st.to in seen:
                continue
            seen.add(st.to)
            nxt.append(st.to)
            found.append(Neighbor(st.to, hop, st))
            if limit is not None and len(found) >= limit:
                return found
        frontier = nxt
    return found


@dataclass(frozen=True, slots=True)
class Backlink:
    """A unit with declared edges into the target set: how many, by which relations,
    and the 1-based lines of the link occurrences (metadata values have no line)."""

    source: str
    target: str
    relations: tuple[str, ...]
    count: int
    edge_ids: tuple[str, ...]
    lines: tuple[int, ...] = ()


def backlinks(
    es: EdgeIndex, targets: Sequence[str], *, include_internal: bool = False
) -> list[Backlink]:
    """The reverse view of declared edges: who links to ``targets``.

    Args:
        targets: unit ids (all units of a document for a file) or a stub id (the notes
            wanting a missing note).
        include_internal: also count links from one target unit to another (a note's
            links to its own headings); off by default.

    Returns:
        One :class:`Backlink` per (source unit, target unit), ``count`` = link
        occurrences (an edge's ``count``), sorted by source.
    """
    tset = set(targets)
    rows: dict[tuple[str, str], list[Any]] = {}
    edge_ids = [a.id for a in es.in_arcs(list(tset)) if a.origin == DECLARED]
    full = es.edges_by_ids(edge_ids)
    for eid in edge_ids:
        r = full.get(eid)
        if r is None:
            continue
        if not include_internal and r.source in tset:
            continue
        key = (r.source, r.target)
        cur = rows.setdefault(key, [set(), 0, [], set()])
        cur[0].add(r.relation)
        cur[1] += r.count
        cur[2].append(eid)
        cur[3].update(int(ev["line"]) for ev in r.evidence
                      if ev.get("via") == "link" and isinstance(ev.get("line"), int))
    return [
        Backlink(s, t, tuple(sorted(v[0])), v[1], tuple(sorted(v[2])), tuple(sorted(v[3])))
        for (s, t), v in sorted(rows.items())
    ]


def shortest_path(
    es: EdgeIndex,
    sources: Sequence[str],
    targets: Sequence[str],
    *,
    relations: Sequence[str] | None = None,
    origins: Sequence[str] | None = None,
    direction: str = "both",
    max_hops: int = 12,
) -> list[Step] | None:
    """A shortest path from any of ``sources`` to any of ``targets`` (bidirectional BFS).

    Args:
        direction: ``out`` follows edges as written (a directed path), ``both`` ignores
            direction (the default), ``in`` walks them backwards.
        max_hops: give up beyond this length.

    Returns:
        The steps in order (``[]`` when a source is a target), or ``None`` when no path
        exists within ``max_hops``.
    """
    _check_direction(direction)
    src, dst = set(sources), set(targets)
    if src & dst:
        return []
    back_dir = {"out": "in", "in": "out", "both": "both"}[direction]
    # parent maps: node -> step that reached it (from its side's origin)
    fwd: dict[str, Step | None] = dict.fromkeys(src)
    bwd: dict[str, Step | None] = dict.fromkeys(dst)
    f_front, b_front = list(src), list(dst)
    hops = 0
    while f_front and b_front and hops < max_hops:
        expand_fwd = len(f_front) <= len(b_front)
        front = f_front if expand_fwd else b_front
        mine, other = (fwd, bwd) if expand_fwd else (bwd, fwd)
        nxt: list[str] = []
        meet: str | None = None
        for st in steps_from(es, front, relations=relations, origins=origins,
                             direction=direction if expand_fwd else back_dir):
            if st.to in mine:
                continue
            mine[st.to] = st
            nxt.append(st.to)
            if st.to in other:
                meet = st.to
                break
        hops += 1
        if meet is not None:
            return _join(meet, fwd, bwd)
        if expand_fwd:
            f_front = nxt
        else:
            b_front = nxt
    return None


def _join(meet: str, fwd: dict[str, Step | None], bwd: dict[str, Step | None]) -> list[Step]:
    left: list[Step] = []
    node = meet
    while (st := fwd.get(node)) is not None:
        left.append(st)
        node = st.frm
    left.reverse()
    right: list[Step] = []
    node = meet
    while (st := bwd.get(node)) is not None:
        # st goes from st.frm (closer to the target) to node; walk it the other way
        right.append(Step(st.edge_id, st.to, st.frm, st.relation, st.origin, st.weight,
                          not st.forward))
        node = st.frm
    return left + right


def subgraph(
    es: EdgeIndex,
    seeds: Sequence[str],
    *,
    hops: int = 1,
    relations: Sequence[str] | None = None,
    origins: Sequence[str] | None = None,
    max_nodes: int = 2000,
) -> tuple[list[str], list[str]]:
    """The nodes within ``hops`` of ``seeds`` (seeds included) and the ids of every edge
    among them that passes the filters: ``(node ids, edge ids)``."""
    nodes = list(dict.fromkeys(seeds))
    for n in neighbors(es, seeds, hops=hops, relations=relations, origins=origins,
                       limit=max_nodes):
        nodes.append(n.node)
    nset = set(nodes)
    keep_origin = set(origins) if origins else None
    edge_ids = [
        a.id
        for a in es.out_arcs(nodes, list(relations) if relations else None)
        if a.target in nset and (keep_origin is None or a.origin in keep_origin)
    ]
    return nodes, list(dict.fromkeys(edge_ids))


def orphans(es: EdgeIndex) -> list[OrphanDocument]:
    """Documents with no resolved declared edge in or out (links within the document
    itself and links to missing notes do not count; a link to an existing attachment
    does), one per document (each
    conversation of a chat export is one), by root, path and id."""
    return es.orphans()


class _DSU:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        p = self.parent.setdefault(x, x)
        root = x
        while p != root:
            root = p
            p = self.parent[root]
        while x != root:
            nxt = self.parent[x]
            self.parent[x] = root
            x = nxt
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb


def _bucket(d: int) -> str:
    for hi, label in ((0, "0"), (1, "1"), (2, "2"), (5, "3-5"), (10, "6-10"), (20, "11-20"),
                      (50, "21-50"), (100, "51-100")):
        if d <= hi:
            return label
    return "101+"


def stats(es: EdgeIndex, *, origins: Sequence[str] | None = None) -> GraphStats:
    """Graph statistics (see :class:`cairn.model.graph_results.GraphStats`). Degree and
    components count every unit and stub, over the edges of ``origins`` (all by
    default), edges taken as undirected."""
    c = es.counts()
    degree: Counter[str] = Counter()
    dsu = _DSU()
    for s, t in es.endpoints(origins):
        degree[s] += 1
        degree[t] += 1
        dsu.union(s, t)
    all_nodes = es.node_ids()
    hist: Counter[str] = Counter(_bucket(degree.get(n, 0)) for n in all_nodes)
    sizes: Counter[str] = Counter(dsu.find(n) for n in all_nodes)
    order = ["0", "1", "2", "3-5", "6-10", "11-20", "21-50", "51-100", "101+"]
    degs = [degree.get(n, 0) for n in all_nodes]
    by_rel, by_origin = c.by_relation, c.by_origin
    return GraphStats(
        nodes=NodeCounts(c.units, c.stubs, c.documents),
        edges=int(sum(by_rel.values())),
        by_relation={str(k): int(v) for k, v in by_rel.items()},
        by_origin={str(k): int(v) for k, v in by_origin.items()},
        unresolved_links=int(c.unresolved_links),
        degree=Degrees(
            max=max(degs) if degs else 0,
            mean=round(sum(degs) / len(degs), 3) if degs else 0.0,
            histogram={b: hist[b] for b in order if hist.get(b)},
        ),
        components=Components(
            count=len(sizes),
            largest=max(sizes.values()) if sizes else 0,
            isolated=sum(1 for n in all_nodes if degree.get(n, 0) == 0),
        ),
        top_linked=tuple(TopLinked(d, p, n) for d, p, n in es.top_linked(10)),
    )


def edge_dict(e: Edge) -> dict[str, Any]:
    """An edge as export data: ``{"id", "source", "target", "relation", "origin",
    "weight", "count", "evidence"}``."""
    return {"id": e.id, "source": e.source, "target": e.target, "relation": e.relation,
            "origin": e.origin, "weight": e.weight, "count": e.count,
            "evidence": [dict(x) for x in e.evidence]}


def graph_data(
    es: EdgeIndex,
    nodes: Sequence[str] | None,
    edge_ids: Sequence[str] | None,
    *,
    relations: Sequence[str] | None = None,
    origins: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Plain graph data for export: ``{"directed": True, "nodes": [...], "edges": [...]}``.

    With ``nodes``/``edge_ids`` ``None`` the whole graph is taken: every unit and stub,
    every edge passing the ``relations`` / ``origins`` filters. A node is ``{"id",
    "type" (unit|stub), "label", "kind", "document_id", "path", "line", "doc_title",
    "reason"}``; an edge ``{"id", "source", "target", "relation", "origin", "weight",
    "count", "evidence" (list)}``. Nodes and edges are sorted by id.
    """
    if edge_ids is None:
        edges = es.all_edges(relations=relations, origins=origins)
    else:
        full = es.edges_by_ids(edge_ids)
        edges = [full[i] for i in sorted(full)]
    node_ids = es.node_ids() if nodes is None else sorted(set(nodes))
    info: Mapping[str, Any] = es.nodes(node_ids)
    out_nodes = []
    for n in node_ids:
        r = info.get(n)
        if r is None:
            continue
        out_nodes.append({
            "id": n,
            "type": r.type,
            "label": r.title or r.path or n,
            "kind": r.kind,
            "document_id": r.document_id,
            "path": r.path,
            "line": r.line,
            "doc_title": r.doc_title,
            "reason": r.reason,
        })
    present = {n["id"] for n in out_nodes}
    out_edges = [edge_dict(e) for e in edges if e.source in present and e.target in present]
    return {"directed": True, "nodes": out_nodes, "edges": out_edges}
