"""Edge builders: links and metadata → typed, directed edges with origin and evidence.

Every edge has a deterministic id, :func:`edge_id` = UUIDv5 over (source, target,
relation, origin), so rebuilding the graph from the same index gives the same ids and
re-indexing never duplicates an edge. Origins (DESIGN.md, "The model": Edge):

The builders live by role: :mod:`cairn.graph.declared` (links and relation metadata,
with :mod:`cairn.graph.values` resolving metadata values), :mod:`cairn.graph.structural`
(outline, type rules, shared features); this module holds what they share: ids,
relations, settings, the edge accumulator and stub nodes.

* ``declared`` — from links (:func:`cairn.graph.declared.build_declared`) and
  relation-valued metadata.
  **How occurrences map:** every row of the ``links`` table (one link occurrence) except
  external URLs belongs to exactly one declared edge, the edge keyed by (its source
  unit, its target node, its relation). Several occurrences of the same link from one
  unit (``[[Plan]]`` twice under one heading) are merged into that one edge:
  ``links`` counts the link rows merged, ``count`` every occurrence (links plus metadata
  values), ``evidence`` lists them (raw text, kind, line). Relation: ``references``
  for wikilinks, Markdown and Org links; ``embeds`` for ``![[…]]``; when the link is the
  value of a relation key (front matter ``depends_on: "[[X]]"``, an Org property
  ``:PART_OF: [[id:…]]``) the key's relation instead. A link whose target does not
  resolve points at a *stub node* (:class:`cairn.model.Stub`) with relation
  ``unresolved`` (the intended relation is kept in the evidence as ``as``). A link to
  an attachment (a non-note file) points at an ``attachment`` stub with its own
  relation. Relation keys whose values are plain names or paths (``related: [a, b]``),
  OKF ``relations`` (``{target, type, confidence}``, weight = confidence),
  ``okfm_relations`` (``{predicate, target}``) and OKF ``sources[].resource`` naming
  another concept (``derived_from``, OKF §5.1 lineage) — read from the OKF parser's
  ``units[0].extra["relations"]`` when present, else from the front matter — are
  declared edges from the document's first unit, with ``links == 0``.
* ``structural`` — :func:`cairn.graph.structural.build_structural`: ``parent`` (unit →
  its parent; a top-level heading → the document's preamble unit), ``next`` and
  ``previous`` between siblings.
* ``rule`` — :func:`cairn.graph.structural.build_rules`: default relations per note type
  (``types.yaml``): a document whose ``type`` has rules gets an edge from its first unit
  to each rule's target.
* ``implicit`` — :func:`cairn.graph.structural.implicit_edges`: ``shares_tag`` and
  ``shares_property`` between units of different documents, weighted by rarity: each
  shared feature carried by ``df`` units adds ``1 / log2(1 + df)`` (a tag two units
  share: 0.63; ten: 0.29), capped at 1; features carried by more than
  ``max_feature_units`` units make no edges. Stored once per unordered pair (source
  id < target id); traversal treats these relations as symmetric.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, cast

from cairn.graph.obsidian import is_attachment_target
from cairn.model import (
    MARKDOWN_LINK,
    ORG_FILE,
    ORG_HEADING,
    ORG_ID,
    Edge,
    EdgeOrigin,
    Stub,
    StubKind,
)
from cairn.model.edge_ids import NAMESPACE, edge_id

DECLARED: EdgeOrigin = "declared"
STRUCTURAL: EdgeOrigin = "structural"
RULE: EdgeOrigin = "rule"
IMPLICIT: EdgeOrigin = "implicit"

REFERENCES = "references"
EMBEDS = "embeds"
UNRESOLVED = "unresolved"
PARENT = "parent"
NEXT = "next"
PREVIOUS = "previous"
SHARES_TAG = "shares_tag"
SHARES_PROPERTY = "shares_property"
DERIVED_FROM = "derived_from"
SYMMETRIC = frozenset({SHARES_TAG, SHARES_PROPERTY})

DEFAULT_RELATION_KEYS: Mapping[str, str] = {
    "depends_on": "depends_on",
    "related": "related",
    "part_of": "part_of",
    "supports": "supports",
    "contradicts": "contradicts",
    "derived_from": "derived_from",
    "refines": "refines",
}
"""Front matter / property keys whose values are relations (key → relation)."""

DEFAULT_IMPLICIT_KEYS: tuple[str, ...] = ("project", "author", "authors", "category", "client")
"""Property keys whose shared values make ``shares_property`` edges."""

LINK_IN_TEXT = re.compile(r"!?\[\[[^\[\]\n]+\]\]|!?\[\[[^\]\n]+\]\[[^\]\n]*\]\]")
_NOTE_EXT = (".md", ".markdown", ".org", ".txt")


def norm_key(key: str) -> str:
    """A metadata key or relation name normalised: case-folded, ``-`` and spaces → ``_``."""
    return re.sub(r"[\s\-]+", "_", str(key).strip().casefold())


def stub_id(kind: str, key: str) -> str:
    """The deterministic id of a stub node: ``stub:`` + UUIDv5 over (kind, key)."""
    return "stub:" + str(uuid.uuid5(NAMESPACE, f"stub\x1f{kind}\x1f{key}"))


# --- configuration ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TypeRule:
    """Graph rules of one note type (from ``types.yaml``).

    Attributes:
        relations: extra metadata keys that are relations (key → relation name).
        defaults: ``(relation, target)`` pairs: every note of the type gets an edge to
            the note or path ``target`` (resolved like a wikilink, then as a path).
    """

    relations: Mapping[str, str] = field(default_factory=dict)
    defaults: tuple[tuple[str, str], ...] = ()


def type_rules(types: Any) -> dict[str, TypeRule]:
    """Normalise note types into graph rules, keyed by case-folded type name and alias.

    Accepts a :class:`cairn.formats.types.TypeRegistry` (each ``NoteType.edges`` maps
    front matter keys to relations; a ``default_relations`` attribute, when a type has
    one, gives rule edges) or a plain mapping of the same shape as ``types.yaml``::

        types:
          meeting:
            edges: {attendees: references, project: part_of}   # or "relations"
            default_relations:                                  # or "rules"
              - {relation: part_of, target: Meetings}

    Unknown fields are ignored; ``None`` gives no rules. Never raises on odd values.
    """
    out: dict[str, TypeRule] = {}
    if not types:
        return out
    inner = types.get("types") if isinstance(types, Mapping) else getattr(types, "types", None)
    table = inner if isinstance(inner, Mapping) else types
    if not isinstance(table, Mapping):
        return out
    for name, spec in table.items():
        def get(key: str, spec: Any = spec) -> Any:
            return spec.get(key) if isinstance(spec, Mapping) else getattr(spec, key, None)

        rels_raw = get("edges") or get("relations") or {}
        rels: dict[str, str] = {}
        if isinstance(rels_raw, Mapping):
            rels = {norm_key(k): norm_key(v or k) for k, v in rels_raw.items()}
        elif isinstance(rels_raw, list | tuple):
            rels = {norm_key(k): norm_key(k) for k in rels_raw if isinstance(k, str)}
        defaults: list[tuple[str, str]] = []
        raw_defaults = get("default_relations") or get("rules") or []
        if isinstance(raw_defaults, Mapping):
            raw_defaults = [{"relation": k, "target": v} for k, v in raw_defaults.items()]
        for d in raw_defaults if isinstance(raw_defaults, list | tuple) else []:
            rel = d.get("relation") if isinstance(d, Mapping) else getattr(d, "relation", None)
            tgt = d.get("target") if isinstance(d, Mapping) else getattr(d, "target", None)
            if isinstance(rel, str) and isinstance(tgt, str) and tgt.strip():
                defaults.append((norm_key(rel), tgt.strip()))
        rule = TypeRule(rels, tuple(defaults))
        names = [str(get("name") or name)]
        aliases = get("aliases")
        if isinstance(aliases, list | tuple):
            names += [str(a) for a in aliases]
        for n in names:
            out[n.strip().casefold()] = rule
    return out


@dataclass(frozen=True, slots=True)
class BuildConfig:
    """What the builders read.

    Attributes:
        relation_keys: metadata keys that are relations (normalised key → relation).
        implicit_keys: property keys whose shared values make implicit edges.
        max_feature_units: a tag or property value carried by more units than this makes
            no implicit edges (it says nothing; and pairs grow as its square).
        types: per-type rules (:func:`type_rules`).
    """

    relation_keys: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_RELATION_KEYS))
    implicit_keys: tuple[str, ...] = DEFAULT_IMPLICIT_KEYS
    max_feature_units: int = 100
    types: Mapping[str, TypeRule] = field(default_factory=dict)

    def all_relation_keys(self) -> dict[str, str]:
        """Relation keys including those every type declares."""
        keys = {norm_key(k): norm_key(v) for k, v in self.relation_keys.items()}
        for rule in self.types.values():
            for k, v in rule.relations.items():
                keys.setdefault(k, v)
        return keys


# --- edge accumulation -----------------------------------------------------------------
class _Acc:
    """A mutable edge while occurrences are merged into it."""

    __slots__ = ("count", "ev", "links", "source", "source_doc", "target", "target_doc",
                 "weight")

    def __init__(self, source: str, target: str, weight: float, source_doc: str,
                 target_doc: str | None) -> None:
        self.source, self.target, self.weight = source, target, weight
        self.source_doc, self.target_doc = source_doc, target_doc
        self.count = 0
        self.links = 0
        self.ev: list[Mapping[str, Any]] = []


class EdgeSet:
    """Edges keyed by id, merging occurrences of the same (source, target, relation,
    origin): counts add up, evidence is appended, the weight is the maximum. Iterating
    gives frozen :class:`cairn.model.Edge` values."""

    def __init__(self) -> None:
        self._acc: dict[str, tuple[str, EdgeOrigin, _Acc]] = {}
        self.stubs: dict[str, Stub] = {}

    def add(
        self,
        source: str,
        target: str,
        relation: str,
        origin: EdgeOrigin,
        *,
        weight: float,
        source_doc: str,
        target_doc: str | None,
        evidence: Mapping[str, Any],
        is_link: bool = False,
    ) -> None:
        """Add one occurrence."""
        eid = edge_id(source, target, relation, origin)
        got = self._acc.get(eid)
        if got is None:
            got = (relation, origin, _Acc(source, target, weight, source_doc, target_doc))
            self._acc[eid] = got
        e = got[2]
        e.count += 1
        e.links += 1 if is_link else 0
        e.weight = max(e.weight, weight)
        e.ev.append(evidence)

    def add_stub(self, stub: Stub) -> None:
        """Keep ``stub``; of two spellings of one stub (``[[Foo]]``, ``[[foo]]``) the
        label is the smaller, and of two reasons the first by :func:`reason_order`, so
        neither depends on which link was read last (a watched index, or a graph built
        a chunk of documents at a time, would otherwise differ from a fresh build)."""
        got = self.stubs.get(stub.id)
        if got is not None:
            if got.label <= stub.label:
                stub = replace(stub, label=got.label)
            if reason_order(got.reason) <= reason_order(stub.reason):
                stub = replace(stub, reason=got.reason)
        self.stubs[stub.id] = stub

    def __contains__(self, eid: object) -> bool:
        return eid in self._acc

    def __iter__(self) -> Iterator[Edge]:
        for eid, (rel, origin, e) in self._acc.items():
            yield Edge(eid, e.source, e.target, rel, origin, e.weight, e.source_doc,
                       e.target_doc, e.count, e.links, tuple(e.ev))

    def __len__(self) -> int:
        return len(self._acc)


def reason_order(reason: str | None) -> tuple[bool, str]:
    """The order in which a stub's reasons are kept: a reason before none, then the
    smaller."""
    return (reason is None, reason or "")


def same_edge(a: Edge, b: Edge) -> bool:
    """Whether two edges would be stored identically (evidence compared as stored)."""
    return (a.weight, a.count, a.links, a.target_document_id) == (
        b.weight, b.count, b.links, b.target_document_id) and _ev(a) == _ev(b)


def _ev(e: Edge) -> str:
    return json.dumps([dict(x) for x in e.evidence[:50]], ensure_ascii=False, default=str)


def config_fingerprint(config: BuildConfig) -> str:
    """A short hash of the build settings: when it changes, the graph is rebuilt."""
    data = {
        "relation_keys": sorted(config.relation_keys.items()),
        "implicit_keys": list(config.implicit_keys),
        "max_feature_units": config.max_feature_units,
        "types": sorted((k, sorted(r.relations.items()), list(r.defaults))
                        for k, r in config.types.items()),
    }
    return hashlib.sha256(json.dumps(data, default=str).encode()).hexdigest()[:16]


# --- stubs -----------------------------------------------------------------------------
def is_attachment_name(target: str) -> bool:
    """Whether a target names a non-note file (an extension other than a note's)."""
    base = posixpath.basename(target.lower())
    return "." in base and not any(base.endswith(e) for e in _NOTE_EXT)


def stub_for(
    kind: str, target: str, anchor: str | None, src_doc: str, src_path: str, reason: str | None
) -> Stub:
    """The stub node standing for an unresolved (or attachment) link target.

    Links wanting the same missing note share one stub: the key is the case-folded
    name (wikilinks), the org ``ID``, the file path relative to the root (``file:`` and
    Markdown links) or the heading within the linking file.
    """
    t = (target or "").strip()
    folder = posixpath.dirname(src_path)
    if kind == ORG_ID:
        return Stub(stub_id("id", t), "id", f"id:{t}", t, reason)
    if kind == ORG_HEADING or not t:
        key = f"{src_doc}#{(anchor or t).casefold()}"
        return Stub(stub_id("heading", key), "heading", anchor or t, key, reason)
    if kind in (ORG_FILE, MARKDOWN_LINK):
        path = t[5:] if t.startswith("file:") else t
        rel = posixpath.normpath(path.lstrip("/") if path.startswith("/")
                                 else posixpath.join(folder, path))
        skind = "attachment" if is_attachment_name(rel) else "file"
        return Stub(stub_id(skind, rel.casefold()), cast(StubKind, skind), rel, rel, reason)
    if is_attachment_target(t):  # a wikilink: only a known extension makes an attachment
        base = posixpath.basename(t).casefold()
        return Stub(stub_id("attachment", base), "attachment", t, base, reason)
    name = t[:-3] if t.lower().endswith(".md") else t
    key = name.casefold().strip()
    return Stub(stub_id("note", key), "note", name, key, reason)


def attachment_reason(reason: str | None) -> bool:
    """Whether an unresolved reason means "resolved to an existing non-note file"."""
    if not reason:
        return False
    r = reason.casefold()
    return r.startswith("attachment") or r.startswith("links to a file that is not a note")


