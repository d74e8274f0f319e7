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

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cairn.graph.edges import DECLARED, SYMMETRIC, UNRESOLVED
from cairn.store.sqlite.edges import EdgeStore

EdgeTuple = tuple[str, str, str, str, str, float]
"""``(edge id, source, target, relation, origin, weight)``."""

DIRECTIONS = ("out", "in", "both")


@dataclass(frozen=True, slots=True)
class Step:
    """One edge walked from ``frm`` to ``to``.

    ``forward`` is ``True`` when the edge was followed from its source to its target.
    """

    edge_id: str
    frm: str
    to: str
    relation: str
    origin: str
    weight: float
    forward: bool

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "edge_id": self.edge_id,
            "from": self.frm,
            "to": self.to,
            "relation": self.relation,
            "origin": self.origin,
            "weight": self.weight,
            "direction": "out" if self.forward else "in",
        }


@dataclass(frozen=True, slots=True)
class Neighbor:
    """A node reached within N hops: its distance and the step that first reached it."""

    node: str
    hop: int
    via: Step


def _check_direction(direction: str) -> None:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, not {direction!r}")


def steps_from(
    es: EdgeStore,
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
        out.extend(Step(eid, s, t, rel, o, w, True)
                   for eid, s, t, rel, o, w in es.out_edges(nodes, rels) if keep(o))
    elif sym:  # "in": symmetric relations are walked both ways
        out.extend(Step(eid, s, t, rel, o, w, True)
                   for eid, s, t, rel, o, w in es.out_edges(nodes, sym) if keep(o))
    if direction in ("in", "both"):
        out.extend(Step(eid, t, s, rel, o, w, False)
                   for eid, s, t, rel, o, w in es.in_edges(nodes, rels) if keep(o))
    elif sym:
        out.extend(Step(eid, t, s, rel, o, w, False)
                   for eid, s, t, rel, o, w in es.in_edges(nodes, sym) if keep(o))
    return out


def neighbors(
    es: EdgeStore,
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
        ValueError: ``hops < 1`` or an unknown direction.
    """
    if hops < 1:
        raise ValueError("hops must be at least 1")
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
    """A unit with declared edges into the target set: how many, by which relations."""

    source: str
    target: str
    relations: tuple[str, ...]
    count: int
    edge_ids: tuple[str, ...]


def backlinks(
    es: EdgeStore, targets: Sequence[str], *, include_internal: bool = False
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
    edge_ids = [eid for eid, *_ in es.in_edges(list(tset))]
    full = es.edges_by_ids(edge_ids)
    for eid in edge_ids:
        r = full.get(eid)
        if r is None or r["origin"] != DECLARED:
            continue
        if not include_internal and r["source"] in tset:
            continue
        key = (r["source"], r["target"])
        cur = rows.setdefault(key, [set(), 0, []])
        cur[0].add(r["relation"])
        cur[1] += int(r["count"])
        cur[2].append(eid)
    return [
        Backlink(s, t, tuple(sorted(v[0])), v[1], tuple(sorted(v[2])))
        for (s, t), v in sorted(rows.items())
    ]


def shortest_path(
    es: EdgeStore,
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
    es: EdgeStore,
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
        eid
        for eid, _s, t, _rel, origin, _w in es.out_edges(nodes, list(relations) if relations
                                                          else None)
        if t in nset and (keep_origin is None or origin in keep_origin)
    ]
    return nodes, list(dict.fromkeys(edge_ids))


def orphans(es: EdgeStore) -> list[dict[str, Any]]:
    """Documents with no resolved declared edge in or out (links within the document
    itself and links to missing notes do not count), by path.

    Each item: ``{"document_id", "path", "title", "unresolved_links"}`` — the last is
    the number of link occurrences of the document that point at stubs.
    """
    rows = es.db.execute(
        "SELECT d.id, d.path, d.title, r.path AS root_path FROM documents d "
        "JOIN roots r ON r.id = d.root_id WHERE NOT EXISTS ("
        "  SELECT 1 FROM edges e WHERE e.origin = 'declared' AND e.source_document_id = d.id"
        "  AND e.target_document_id IS NOT NULL AND e.target_document_id != d.id"
        ") AND NOT EXISTS ("
        "  SELECT 1 FROM edges e WHERE e.origin = 'declared' AND e.target_document_id = d.id"
        "  AND e.source_document_id != d.id"
        ") ORDER BY r.path, d.path"
    ).fetchall()
    wanting = dict(
        es.db.execute(
            "SELECT source_document_id, sum(count) FROM edges WHERE origin='declared' AND "
            "relation = ? GROUP BY source_document_id",
            (UNRESOLVED,),
        ).fetchall()
    )
    return [
        {
            "document_id": r["id"],
            "path": r["path"],
            "abs_path": f"{r['root_path'].rstrip('/')}/{r['path']}",
            "title": r["title"],
            "unresolved_links": int(wanting.get(r["id"], 0) or 0),
        }
        for r in rows
    ]


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


def stats(es: EdgeStore, *, origins: Sequence[str] | None = None) -> dict[str, Any]:
    """Graph statistics.

    Returns:
        ``{"nodes": {"units", "stubs", "documents"}, "edges": total,
        "by_relation": {relation: n}, "by_origin": {origin: n},
        "unresolved_links": link occurrences pointing at stubs,
        "degree": {"max", "mean", "histogram": {bucket: units}},
        "components": {"count", "largest", "isolated"}, "top_linked": [...]}``.
        Degree and components count every unit and stub, over the edges of ``origins``
        (all by default), edges taken as undirected.
    """
    db = es.db
    n_units = int(db.execute("SELECT count(*) FROM units").fetchone()[0])
    n_stubs = int(db.execute("SELECT count(*) FROM graph_stubs").fetchone()[0])
    n_docs = int(db.execute("SELECT count(*) FROM documents").fetchone()[0])
    by_rel = dict(db.execute(
        "SELECT relation, count(*) FROM edges GROUP BY relation ORDER BY relation").fetchall())
    by_origin = dict(db.execute(
        "SELECT origin, count(*) FROM edges GROUP BY origin ORDER BY origin").fetchall())
    unresolved = db.execute(
        "SELECT coalesce(sum(count), 0) FROM edges WHERE relation=?", (UNRESOLVED,)
    ).fetchone()[0]
    where = ""
    args: list[str] = []
    if origins:
        where = f" WHERE origin IN ({','.join('?' * len(origins))})"
        args = list(origins)
    degree: Counter[str] = Counter()
    dsu = _DSU()
    for s, t in db.execute(f"SELECT source, target FROM edges{where}", args):
        degree[s] += 1
        degree[t] += 1
        dsu.union(s, t)
    all_nodes: list[str] = [r[0] for r in db.execute("SELECT id FROM units")]
    all_nodes += [r[0] for r in db.execute("SELECT id FROM graph_stubs")]
    hist: Counter[str] = Counter(_bucket(degree.get(n, 0)) for n in all_nodes)
    sizes: Counter[str] = Counter(dsu.find(n) for n in all_nodes)
    order = ["0", "1", "2", "3-5", "6-10", "11-20", "21-50", "51-100", "101+"]
    degs = [degree.get(n, 0) for n in all_nodes]
    top = db.execute(
        "SELECT e.target_document_id AS doc, d.path, count(DISTINCT e.source_document_id) AS n "
        "FROM edges e JOIN documents d ON d.id = e.target_document_id "
        "WHERE e.origin='declared' AND e.source_document_id != e.target_document_id "
        "GROUP BY e.target_document_id ORDER BY n DESC, d.path LIMIT 10"
    ).fetchall()
    return {
        "nodes": {"units": n_units, "stubs": n_stubs, "documents": n_docs},
        "edges": int(sum(by_rel.values())),
        "by_relation": {str(k): int(v) for k, v in by_rel.items()},
        "by_origin": {str(k): int(v) for k, v in by_origin.items()},
        "unresolved_links": int(unresolved),
        "degree": {
            "max": max(degs) if degs else 0,
            "mean": round(sum(degs) / len(degs), 3) if degs else 0.0,
            "histogram": {b: hist[b] for b in order if hist.get(b)},
        },
        "components": {
            "count": len(sizes),
            "largest": max(sizes.values()) if sizes else 0,
            "isolated": sum(1 for n in all_nodes if degree.get(n, 0) == 0),
        },
        "top_linked": [{"document_id": r["doc"], "path": r["path"], "linking_documents": r["n"]}
                       for r in top],
    }


def steps_json(steps: Iterable[Step]) -> list[dict[str, Any]]:
    """Steps as JSON-ready dicts."""
    return [s.as_dict() for s in steps]


def group_by_hop(found: Iterable[Neighbor]) -> dict[int, list[str]]:
    """``hop -> nodes`` (for display)."""
    out: dict[int, list[str]] = defaultdict(list)
    for n in found:
        out[n.hop].append(n.node)
    return dict(out)


def evidence_of(es: EdgeStore, edge_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """``edge id -> evidence list``."""
    return {eid: json.loads(r["evidence"]) for eid, r in es.edges_by_ids(edge_ids).items()}


def graph_data(
    es: EdgeStore,
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
    db = es.db
    if edge_ids is None:
        where: list[str] = []
        args: list[str] = []
        if relations:
            where.append(f"relation IN ({','.join('?' * len(relations))})")
            args += list(relations)
        if origins:
            where.append(f"origin IN ({','.join('?' * len(origins))})")
            args += list(origins)
        sql = "SELECT * FROM edges" + (" WHERE " + " AND ".join(where) if where else "")
        erows = db.execute(sql + " ORDER BY id", args).fetchall()
    else:
        full = es.edges_by_ids(edge_ids)
        erows = [full[i] for i in sorted(full)]
    if nodes is None:
        node_ids = [r[0] for r in db.execute("SELECT id FROM units ORDER BY id")]
        node_ids += [r[0] for r in db.execute("SELECT id FROM graph_stubs ORDER BY id")]
    else:
        node_ids = sorted(set(nodes))
    info = es.node_rows(node_ids)
    out_nodes = []
    for n in node_ids:
        r = info.get(n)
        if r is None:
            continue
        out_nodes.append({
            "id": n,
            "type": r["type"],
            "label": r.get("title") or r.get("path") or n,
            "kind": r.get("kind"),
            "document_id": r.get("document_id"),
            "path": r.get("path"),
            "line": r.get("line"),
            "doc_title": r.get("doc_title"),
            "reason": r.get("reason"),
        })
    present = {n["id"] for n in out_nodes}
    out_edges = [
        {
            "id": r["id"],
            "source": r["source"],
            "target": r["target"],
            "relation": r["relation"],
            "origin": r["origin"],
            "weight": r["weight"],
            "count": r["count"],
            "evidence": json.loads(r["evidence"]),
        }
        for r in erows
        if r["source"] in present and r["target"] in present
    ]
    return {"directed": True, "nodes": out_nodes, "edges": out_edges}
