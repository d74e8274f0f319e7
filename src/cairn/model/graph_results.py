"""The typed results of the graph queries (:class:`cairn.graph.queries.GraphQueries`):
neighbours, backlinks, a path, statistics, and the step of a walk they are made of.

Each is a frozen dataclass read by attribute; :func:`cairn.model.serialize.to_data`
turns it into the JSON of ``cairn graph … --json``, ``/v1/graph/…`` and the MCP graph
tools (docs/reference/json.md), through ``to_mapping()`` where the JSON names differ
from the attributes or depend on the kind of node.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cairn.model.graph import GraphNode


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

    def to_mapping(self) -> dict[str, Any]:
        """The step's JSON object: ``{"edge_id", "from", "to", "relation", "origin",
        "weight", "direction"}`` (``direction``: ``out`` when followed forwards)."""
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
class NodeRef:
    """What a reference names: the node ids it stands for and a label.

    Attributes:
        ids: unit or stub ids (a document or file stands for all its units).
        label: a title, else the path or id.
        document_id / path: the document and root-relative path, when one is named.
    """

    ids: tuple[str, ...]
    label: str
    document_id: str | None = None
    path: str | None = None


@dataclass(frozen=True, slots=True)
class Reached:
    """A node within N hops, with its distance and the step that first reached it."""

    node: GraphNode
    hop: int
    via: Step


@dataclass(frozen=True, slots=True)
class Neighbors:
    """What :meth:`GraphQueries.neighbors` returns: the node asked about and the nodes
    reached, nearest first (JSON ``{"node", "neighbors": [{"node", "hop", "via"}]}``)."""

    node: NodeRef
    neighbors: tuple[Reached, ...]


@dataclass(frozen=True, slots=True)
class InboundLink:
    """Declared edges from one unit into the node asked about.

    Attributes:
        source: the linking unit; its ``line`` is that of its first link to the
            target (the unit's first line when the edge comes from metadata).
        target: the unit (or stub) linked to.
        relations: the relations of the edges (``references``, ``embeds`` …).
        count: link occurrences; ``lines``: their lines; ``edge_ids``: the edges.
    """

    source: GraphNode
    target: GraphNode
    relations: tuple[str, ...]
    count: int
    lines: tuple[int, ...]
    edge_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Backlinks:
    """What :meth:`GraphQueries.backlinks` returns (JSON ``{"node", "count", "sources",
    "backlinks"}``): ``count`` link occurrences from ``sources`` distinct documents."""

    node: NodeRef
    count: int
    sources: int
    backlinks: tuple[InboundLink, ...]


@dataclass(frozen=True, slots=True)
class PathStep:
    """One edge of a path with the nodes at its two ends (JSON: the step's own keys,
    ``{"edge_id", "from", "to", "relation", "origin", "weight", "direction"}``, then
    ``"from_node"`` and ``"to_node"``)."""

    step: Step
    from_node: GraphNode
    to_node: GraphNode

    def to_mapping(self) -> dict[str, Any]:
        """The step's JSON object."""
        return {**self.step.to_mapping(), "from_node": self.from_node,
                "to_node": self.to_node}


@dataclass(frozen=True, slots=True)
class GraphPath:
    """What :meth:`GraphQueries.path` returns: a shortest path from ``source`` to
    ``target``; ``length`` is ``None`` (and ``steps`` empty) when there is none within
    the hops allowed (JSON ``{"from", "to", "length", "steps"}``)."""

    source: NodeRef
    target: NodeRef
    length: int | None
    steps: tuple[PathStep, ...]

    def to_mapping(self) -> dict[str, Any]:
        """The path's JSON object."""
        return {"from": self.source, "to": self.target, "length": self.length,
                "steps": self.steps}


@dataclass(frozen=True, slots=True)
class NodeCounts:
    """Nodes of the graph: units, stubs (missing targets) and documents."""

    units: int
    stubs: int
    documents: int


@dataclass(frozen=True, slots=True)
class Degrees:
    """Node degrees (edges taken as undirected): the largest, the mean (3 decimals) and
    how many nodes fall in each bucket (``"0"``, ``"1"``, ``"3-5"`` …; empty buckets
    left out)."""

    max: int
    mean: float
    histogram: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Components:
    """Connected components: how many, the size of the largest, isolated nodes."""

    count: int
    largest: int
    isolated: int


@dataclass(frozen=True, slots=True)
class TopLinked:
    """A document many others link to, with how many do."""

    document_id: str
    path: str
    linking_documents: int


@dataclass(frozen=True, slots=True)
class GraphStats:
    """What :meth:`GraphQueries.stats` returns.

    Attributes:
        nodes: units, stubs, documents.
        edges: every edge; ``by_relation`` / ``by_origin``: per relation and origin.
        unresolved_links: link occurrences pointing at stubs.
        degree / components: over the edges of the origins asked for (all by default).
        top_linked: the ten documents linked from the most documents.
    """

    nodes: NodeCounts
    edges: int
    by_relation: Mapping[str, int]
    by_origin: Mapping[str, int]
    unresolved_links: int
    degree: Degrees
    components: Components
    top_linked: tuple[TopLinked, ...]


@dataclass(frozen=True, slots=True)
class NodeLinkGraph:
    """A graph or the subgraph around a node (what :meth:`GraphQueries.subgraph`
    returns), as export data.

    Attributes:
        nodes: ``{"id", "type" (unit|stub), "label", "kind", "document_id", "path",
            "line", "doc_title", "reason"}`` per node, sorted by id.
        edges: ``{"id", "source", "target", "relation", "origin", "weight", "count",
            "evidence"}`` per edge between two of the nodes, sorted by id.

    Its JSON is node-link data as ``networkx.node_link_data(G, edges="edges")`` writes
    it for a ``MultiDiGraph``: ``None`` node fields left out, the edge id as ``key``
    (``cairn graph export --format json``, ``/v1/graph/subgraph``).
    """

    nodes: tuple[Mapping[str, Any], ...]
    edges: tuple[Mapping[str, Any], ...]

    def to_mapping(self) -> dict[str, Any]:
        """``{"directed", "multigraph", "graph", "nodes", "edges"}`` (node-link)."""
        return {
            "directed": True,
            "multigraph": True,
            "graph": {"name": "cairn"},
            "nodes": [{k: v for k, v in n.items() if v is not None} for n in self.nodes],
            "edges": [
                {**{k: v for k, v in e.items() if k != "id"}, "key": e["id"]}
                for e in self.edges
            ],
        }
