"""The graph page's neighbourhood kept readable: at most :data:`MAX_NODES` nodes (the
node asked for, then the nearest, best-connected ones), each with its degree so the page
can fade the labels of the sparsely linked ones."""

from __future__ import annotations

from collections import deque
from typing import Any

MAX_NODES = 60
"""The most nodes the graph page draws; the others are counted as not shown."""


def cap_graph(data: dict[str, Any], center: str, limit: int = MAX_NODES) -> dict[str, Any]:
    """``data`` (Cytoscape JSON: ``{"elements": {"nodes", "edges"}}``) cut to ``limit``
    nodes and the edges between them.

    Nodes are ranked by hops from ``center`` (a node whose ``id`` or ``document_id`` it
    is; none: every node counts as equally near), then by degree in the whole
    neighbourhood (descending), then by id. Each kept node gets ``data.degree``.

    Returns:
        The same shape plus ``"total"`` (nodes before the cut) and ``"hidden"`` (nodes
        left out).
    """
    nodes: list[dict[str, Any]] = data["elements"]["nodes"]
    edges: list[dict[str, Any]] = data["elements"]["edges"]
    degree: dict[str, int] = {n["data"]["id"]: 0 for n in nodes}
    near: dict[str, list[str]] = {i: [] for i in degree}
    for e in edges:
        s, t = e["data"]["source"], e["data"]["target"]
        if s in degree and t in degree:
            degree[s] += 1
            degree[t] += 1
            near[s].append(t)
            near[t].append(s)
    starts = [n["data"]["id"] for n in nodes
              if center in (n["data"]["id"], n["data"].get("document_id"))]
    hops = {i: 0 for i in starts}
    queue = deque(starts)
    while queue:
        i = queue.popleft()
        for j in near[i]:
            if j not in hops:
                hops[j] = hops[i] + 1
                queue.append(j)
    far = len(nodes) + 1
    ranked = sorted(nodes, key=lambda n: (hops.get(n["data"]["id"], far),
                                          -degree[n["data"]["id"]], n["data"]["id"]))
    kept = ranked[:max(1, limit)]
    ids = {n["data"]["id"] for n in kept}
    out_nodes = [{**n, "data": {**n["data"], "degree": degree[n["data"]["id"]]}}
                 for n in kept]
    out_edges = [e for e in edges if e["data"]["source"] in ids and e["data"]["target"] in ids]
    return {**data, "elements": {"nodes": out_nodes, "edges": out_edges},
            "total": len(nodes), "hidden": len(nodes) - len(kept)}
