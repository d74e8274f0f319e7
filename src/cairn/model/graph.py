"""The graph's values: edges, stub nodes, nodes, and the link views of resolution."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from cairn.model.core import LinkKind

# --- graph: edges and stub nodes ---------------------------------------------------------
EdgeOrigin = Literal["declared", "structural", "rule", "implicit", "llm"]
"""Where an edge comes from: links and relation metadata (``declared``), the outline
(``structural``), ``types.yaml`` default relations (``rule``), shared tags or property
values (``implicit``), a language model's relation typing (``llm``, see
:mod:`cairn.enrich`)."""

BuiltinRelation = Literal[
    "references",
    "embeds",
    "unresolved",
    "parent",
    "next",
    "previous",
    "shares_tag",
    "shares_property",
    "derived_from",
]
"""The relations cairn itself makes. Relation names are open: metadata keys and
``types.yaml`` add their own (``depends_on``, ``part_of`` …), so :attr:`Edge.relation`
is a ``str`` holding one of these or a normalised key."""

StubKind = Literal["note", "id", "heading", "attachment", "file"]
"""What a stub node stands for: a missing note, an unknown Org ``ID``, a missing heading
of the linking file, a non-note file (existing or not), a missing file."""

NodeType = Literal["unit", "stub"]


@dataclass(frozen=True, slots=True)
class Edge:
    """One typed, directed edge of the graph.

    Attributes:
        id: deterministic UUIDv5 over (source, target, relation, origin).
        source: a unit id; target: a unit id or a stub id (``stub:…``).
        relation: a :data:`BuiltinRelation` or a relation key (``depends_on``).
        origin: see :data:`EdgeOrigin`.
        weight: the edge's own strength, usually in (0, 1] (OKF confidence, tag rarity).
        source_document_id / target_document_id: documents of the two ends (``None``
            for a stub target).
        count: occurrences merged into the edge; ``links``: how many of them are stored
            links (the rest are metadata values).
        evidence: JSON-ready mappings naming where the edge came from (at most 50).
    """

    id: str
    source: str
    target: str
    relation: str
    origin: EdgeOrigin
    weight: float
    source_document_id: str
    target_document_id: str | None
    count: int = 1
    links: int = 0
    evidence: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class Arc:
    """The part of an edge a walk needs: ids, relation, origin and weight."""

    id: str
    source: str
    target: str
    relation: str
    origin: EdgeOrigin
    weight: float


@dataclass(frozen=True, slots=True)
class Stub:
    """A stub node: a link target that is not a unit.

    ``label`` is what to show; ``target`` the normalised key links share; ``reason``
    why it did not resolve (``None`` for an existing attachment).
    """

    id: str
    kind: StubKind
    label: str
    target: str
    reason: str | None


@dataclass(frozen=True, slots=True)
class GraphNode:
    """A graph node as the store reads it and graph results show it: a unit with its
    document, a stub (a link target that does not exist, or a non-note file), or an id
    the index no longer knows (``type`` ``None``, :meth:`unknown`: only ``id``, and
    ``line`` when a backlink gives one).

    ``line`` is the unit's first line (1-based) — in a backlink, that of the unit's
    first link; ``abs_path`` the file's absolute path; for a stub, ``title`` is its
    label, ``kind`` its :data:`StubKind`, ``target`` and ``reason`` as in :class:`Stub`,
    and the document fields are ``None``.

    The JSON of a unit is ``{"id", "type", "title", "kind", "document_id",
    "doc_title", "doc_type", "path", "abs_path", "line", "outline_path"}``; of a stub
    ``{"id", "type", "title", "kind", "target", "reason", "document_id", "path"}``; of
    an unknown id ``{"id"}`` (a stub or unknown id with a backlink's line adds ``line``).
    """

    id: str
    type: NodeType | None
    title: str
    kind: str
    document_id: str | None = None
    doc_title: str | None = None
    doc_type: str | None = None
    path: str | None = None
    abs_path: str | None = None
    line: int | None = None
    outline_path: tuple[str, ...] = ()
    target: str | None = None
    reason: str | None = None

    @classmethod
    def unknown(cls, node_id: str) -> GraphNode:
        """``node_id`` as a result shows an id the index has no node for."""
        return cls(node_id, None, "", "")

    def to_mapping(self) -> dict[str, Any]:
        """The node's JSON object (keys by kind, see the class docstring)."""
        if self.type == "unit":
            return {"id": self.id, "type": "unit", "title": self.title, "kind": self.kind,
                    "document_id": self.document_id, "doc_title": self.doc_title,
                    "doc_type": self.doc_type, "path": self.path, "abs_path": self.abs_path,
                    "line": self.line, "outline_path": list(self.outline_path)}
        if self.type == "stub":
            out: dict[str, Any] = {
                "id": self.id, "type": "stub", "title": self.title, "kind": self.kind,
                "target": self.target, "reason": self.reason, "document_id": None,
                "path": None}
        else:
            out = {"id": self.id}
        if self.line is not None:  # a backlink's line on a node without one of its own
            out["line"] = self.line
        return out


@dataclass(frozen=True, slots=True)
class UnitShape:
    """Where a unit sits: its document, ordinal and body length in characters."""

    id: str
    document_id: str
    ordinal: int
    body_chars: int


@dataclass(frozen=True, slots=True)
class UnitSpan:
    """A unit's id, title and 1-based inclusive line span (to find the unit at a line)."""

    id: str
    title: str
    line_start: int
    line_end: int


@dataclass(frozen=True, slots=True)
class DocumentBrief:
    """A document as graph references name it: id, root, path, title and unit ids in
    document order."""

    id: str
    root_id: str
    path: str
    title: str
    unit_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class OrphanDocument:
    """A document with no resolved declared link in or out.

    ``unresolved_links`` counts its link occurrences pointing at stubs; ``format`` tells
    a chat export's conversations (several documents of one file) apart from notes.
    """

    document_id: str
    title: str
    path: str
    abs_path: str
    format: str
    unresolved_links: int = 0


@dataclass(frozen=True, slots=True)
class GraphCounts:
    """Counts of the graph: nodes, edges per relation and origin, unresolved link
    occurrences (the ``count`` of ``unresolved`` edges)."""

    units: int
    stubs: int
    documents: int
    by_relation: Mapping[str, int]
    by_origin: Mapping[str, int]
    unresolved_links: int


@dataclass(frozen=True, slots=True)
class GraphDocument:
    """What the edge builders read of a document: where it is, its type, metadata
    (front matter, keywords) and tags, and its content hash."""

    id: str
    root_id: str
    path: str
    type: str | None
    metadata: Mapping[str, Any]
    tags: tuple[str, ...]
    content_hash: str


@dataclass(frozen=True, slots=True)
class GraphUnit:
    """What the edge builders read of a unit (``extra`` holds the format's fields, e.g.
    an OKF concept's parsed ``relations``)."""

    id: str
    document_id: str
    ordinal: int
    parent_id: str | None
    kind: str
    tags: tuple[str, ...]
    properties: Mapping[str, Any]
    extra: Mapping[str, Any]


# --- links and their resolution (graph owner) ---------------------------------------------
@dataclass(frozen=True, slots=True)
class LinkOccurrence:
    """A stored link occurrence with where it is written and its current resolution.

    ``(unit_id, ordinal)`` identifies it (``ordinal``: its position among the unit's
    links); ``root_id`` / ``path`` / ``document_id`` are those of the linking document.
    """

    unit_id: str
    ordinal: int
    document_id: str
    root_id: str
    path: str
    kind: LinkKind
    target: str
    alias: str | None = None
    anchor: str | None = None
    line: int | None = None
    raw: str = ""
    resolved_document_id: str | None = None
    resolved_unit_id: str | None = None
    unresolved_reason: str | None = None


@dataclass(frozen=True, slots=True)
class LinkResolution:
    """A new resolution for the link ``(unit_id, ordinal)``."""

    unit_id: str
    ordinal: int
    document_id: str | None
    target_unit_id: str | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class CatalogDocument:
    """A document as link resolution sees it (``key`` orders a file's documents)."""

    id: str
    root_id: str
    path: str
    title: str
    format: str
    aliases: tuple[str, ...] = ()
    declared_id: str | None = None
    key: str | None = None


@dataclass(frozen=True, slots=True)
class CatalogUnit:
    """A unit as link resolution sees it: what anchors and ``id:`` links can name."""

    id: str
    document_id: str
    ordinal: int
    level: int
    kind: str
    title: str
    org_id: str | None = None
    custom_id: str | None = None
    targets: tuple[str, ...] = ()
    block_ids: tuple[str, ...] = ()
