"""Edge builders: links and metadata → typed, directed edges with origin and evidence.

Every edge has a deterministic id, :func:`edge_id` = UUIDv5 over (source, target,
relation, origin), so rebuilding the graph from the same index gives the same ids and
re-indexing never duplicates an edge. Origins (DESIGN.md, "The model": Edge):

* ``declared`` — from links (:func:`build_declared`) and relation-valued metadata.
  **How occurrences map:** every row of the ``links`` table (one link occurrence) except
  external URLs belongs to exactly one declared edge, the edge keyed by (its source
  unit, its target node, its relation). Several occurrences of the same link from one
  unit (``[[Plan]]`` twice under one heading) are merged into that one edge:
  ``links`` counts the link rows merged, ``count`` every occurrence (links plus metadata
  values), ``evidence`` lists them (raw text, kind, line). Relation: ``references``
  for wikilinks, Markdown and Org links; ``embeds`` for ``![[…]]``; when the link is the
  value of a relation key (front matter ``depends_on: "[[X]]"``, an Org property
  ``:PART_OF: [[id:…]]``) the key's relation instead. A link whose target does not
  resolve points at a *stub node* (:class:`cairn.store.sqlite.edges.Stub`) with relation
  ``unresolved`` (the intended relation is kept in the evidence as ``as``). A link to
  an attachment (a non-note file) points at an ``attachment`` stub with its own
  relation. Relation keys whose values are plain names or paths (``related: [a, b]``),
  OKF ``relations`` (``{target, type, confidence}``, weight = confidence),
  ``okfm_relations`` (``{predicate, target}``) and OKF ``sources[].resource`` naming
  another concept (``derived_from``, OKF §5.1 lineage) — read from the OKF parser's
  ``units[0].extra["relations"]`` when present, else from the front matter — are
  declared edges from the document's first unit, with ``links == 0``.
* ``structural`` — :func:`build_structural`: ``parent`` (unit → its parent; a top-level
  heading → the document's preamble unit), ``next`` and ``previous`` between siblings.
* ``rule`` — :func:`build_rules`: default relations per note type (``types.yaml``):
  a document whose ``type`` has rules gets an edge from its first unit to each rule's
  target.
* ``implicit`` — :func:`implicit_edges`: ``shares_tag`` and ``shares_property`` between
  units of different documents, weighted by rarity: each shared feature carried by
  ``df`` units adds ``1 / log2(1 + df)`` (a tag two units share: 0.63; ten: 0.29),
  capped at 1; features carried by more than ``max_feature_units`` units make no
  edges. Stored once per unordered pair (source id < target id); traversal treats
  these relations as symmetric.
"""

from __future__ import annotations

import itertools
import json
import math
import posixpath
import re
import sqlite3
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cairn.model import EMBED, MARKDOWN_LINK, ORG_FILE, ORG_HEADING, ORG_ID, URL, WIKILINK
from cairn.store.sqlite.edges import EdgeRow, Stub

NAMESPACE = uuid.UUID("6f2d9a4e-6c1b-5b8e-9a57-2f0c6c1e7b31")

DECLARED = "declared"
STRUCTURAL = "structural"
RULE = "rule"
IMPLICIT = "implicit"
ORIGINS = (DECLARED, STRUCTURAL, RULE, IMPLICIT)

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

_LINK_IN_TEXT = re.compile(r"!?\[\[[^\[\]\n]+\]\]|!?\[\[[^\]\n]+\]\[[^\]\n]*\]\]")
_NOTE_EXT = (".md", ".markdown", ".org", ".txt")


def norm_key(key: str) -> str:
    """A metadata key or relation name normalised: case-folded, ``-`` and spaces → ``_``."""
    return re.sub(r"[\s\-]+", "_", str(key).strip().casefold())


def edge_id(source: str, target: str, relation: str, origin: str) -> str:
    """The deterministic id of an edge: UUIDv5 over the four fields, ``\\x1f``-joined."""
    return str(uuid.uuid5(NAMESPACE, "\x1f".join((source, target, relation, origin))))


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
class EdgeSet:
    """Edges keyed by id, merging occurrences of the same (source, target, relation,
    origin): counts add up, evidence is appended, the weight is the maximum."""

    def __init__(self) -> None:
        self.edges: dict[str, EdgeRow] = {}
        self.stubs: dict[str, Stub] = {}

    def add(
        self,
        source: str,
        target: str,
        relation: str,
        origin: str,
        *,
        weight: float,
        source_doc: str,
        target_doc: str | None,
        evidence: dict[str, Any],
        is_link: bool = False,
    ) -> EdgeRow:
        """Add one occurrence."""
        eid = edge_id(source, target, relation, origin)
        e = self.edges.get(eid)
        if e is None:
            e = EdgeRow(eid, source, target, relation, origin, weight, source_doc, target_doc,
                        count=0, links=0, evidence=[])
            self.edges[eid] = e
        e.count += 1
        e.links += 1 if is_link else 0
        e.weight = max(e.weight, weight)
        e.evidence.append(evidence)
        return e

    def __iter__(self) -> Iterator[EdgeRow]:
        return iter(self.edges.values())

    def __len__(self) -> int:
        return len(self.edges)


# --- resolution of metadata values ------------------------------------------------------
class ValueResolver:
    """Resolves relation values (names, paths, links written in metadata) to units.

    Uses the same :class:`cairn.graph.resolve.Catalog` and rules as link resolution,
    built lazily on first use by ``catalog()`` (pass one built from the store's
    ``catalog_rows()``), else from the tables directly. A value is tried as written
    (wikilink, Org link or Markdown-style path relative to the file), then as a path
    relative to each folder above the file (bundle-relative OKF paths), then as a note
    name.
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        first_units: Mapping[str, str],
        catalog: Callable[[], Any] | None = None,
    ) -> None:
        self.db = db
        self.first_units = first_units
        self._factory = catalog
        self._cat: Any = None

    def _catalog(self) -> Any:
        if self._cat is None and self._factory is not None:
            self._cat = self._factory()
        if self._cat is None:
            from cairn.graph.resolve import Catalog

            docs = self.db.execute(
                "SELECT id, root_id, path, title, aliases, declared_id, format FROM documents"
            ).fetchall()
            units = self.db.execute(
                "SELECT id, document_id, ordinal, level, kind, title, org_id, custom_id, "
                "json_extract(extra, '$.targets') AS targets, "
                "json_extract(extra, '$.block_ids') AS block_ids FROM units"
            ).fetchall()
            att = [(r[0], r[1]) for r in self.db.execute("SELECT root_id, path FROM attachments")]
            self._cat = Catalog.build(docs, units, att)
        return self._cat

    def resolve(
        self, value: str, root_id: str, src_path: str, src_doc: str
    ) -> tuple[str | None, str | None, str | None]:
        """``(document id, unit id, unresolved reason)`` for one value."""
        from cairn.graph.resolve import resolve_link

        cat = self._catalog()
        v = value.strip()
        kind, target, anchor = _link_shape(v)

        def row(k: str, t: str, a: str | None) -> dict[str, Any]:
            return {"kind": k, "target": t, "anchor": a, "root_id": root_id, "path": src_path,
                    "document_id": src_doc}

        if kind is not None:
            doc, unit, reason = resolve_link(row(kind, target, anchor), cat)
            return self._finish(doc, unit, reason)
        if re.match(r"^[a-z][a-z0-9+.-]*://", v, re.I) or v.startswith("mailto:"):
            return None, None, "external URL"
        path = v.split("#", 1)[0]
        anchor = v.split("#", 1)[1] if "#" in v else None
        folder = posixpath.dirname(src_path)
        tries: list[str] = []
        rel_path = path.lstrip("/")
        if path.startswith("/"):  # bundle-relative: the bundle root is some folder above
            tries.append(rel_path)
        parts = folder.split("/") if folder else []
        for i in range(len(parts), -1, -1):
            tries.append(posixpath.normpath(posixpath.join("/".join(parts[:i]), rel_path)))
        for rel in tries:
            doc = cat.doc_at(root_id, rel)
            if doc:
                unit = cat.anchor_unit(doc, anchor) if anchor else None
                return self._finish(doc, unit, None)
        doc, unit, reason = resolve_link(row(WIKILINK, path, anchor), cat)
        return self._finish(doc, unit, reason)

    def _finish(
        self, doc: str | None, unit: str | None, reason: str | None
    ) -> tuple[str | None, str | None, str | None]:
        if doc and not unit:
            unit = self.first_units.get(doc)
        return doc, unit, reason


def _link_shape(v: str) -> tuple[str | None, str, str | None]:
    """``(link kind, target, anchor)`` when ``v`` is written as a link, else ``(None, v,
    None)``: ``[[id:X]]``, ``[[file:p::*H]]``, ``[[Note#H|alias]]``, ``[text](path)``."""
    m = re.fullmatch(r"!?\[\[([^\]]+)\](?:\[[^\]]*\])?\]", v)
    if m:
        inner = m.group(1)
        if inner.startswith("id:"):
            return ORG_ID, inner[3:].strip(), None
        if inner.startswith("file:"):
            path, _, opt = inner[5:].partition("::")
            return ORG_FILE, path, opt or None
        inner = inner.split("|", 1)[0]
        target, _, anchor = inner.partition("#")
        return WIKILINK, target.strip(), anchor.strip() or None
    m = re.fullmatch(r"\[[^\]]*\]\(([^)]+)\)", v)
    if m:
        target, _, anchor = m.group(1).partition("#")
        return MARKDOWN_LINK, target.strip(), anchor.strip() or None
    if v.startswith("id:"):
        return ORG_ID, v[3:].strip(), None
    return None, v, None


def _values(value: Any) -> list[str]:
    """The individual targets of a relation value: list items, or a string split on
    commas when it holds no link syntax; link-shaped strings give each link."""
    out: list[str] = []
    if value is None or isinstance(value, bool):
        return out
    if isinstance(value, list | tuple):
        for v in value:
            out.extend(_values(v))
        return out
    if isinstance(value, Mapping):
        for k in ("target", "path", "id", "name"):
            if isinstance(value.get(k), str):
                return [value[k]]
        return out
    text = str(value).strip()
    if not text:
        return out
    links = _LINK_IN_TEXT.findall(text)
    if links:
        return links
    if text.startswith("[") and text.endswith("]"):  # a JSON list as property text
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return _values(parsed)
    return [p.strip().strip("\"'") for p in text.split(",") if p.strip().strip("\"'")]


# --- stubs -----------------------------------------------------------------------------
def _is_attachment_name(target: str) -> bool:
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
        skind = "attachment" if _is_attachment_name(rel) else "file"
        return Stub(stub_id(skind, rel.casefold()), skind, rel, rel, reason)
    if _is_attachment_name(t):
        base = posixpath.basename(t).casefold()
        return Stub(stub_id("attachment", base), "attachment", t, base, reason)
    name = t[:-3] if t.lower().endswith(".md") else t
    key = name.casefold().strip()
    return Stub(stub_id("note", key), "note", name, key, reason)


def _attachment_reason(reason: str | None) -> bool:
    """Whether an unresolved reason means "resolved to an existing non-note file"."""
    if not reason:
        return False
    r = reason.casefold()
    return r.startswith("attachment") or r.startswith("links to a file that is not a note")


# --- builders --------------------------------------------------------------------------
def first_units(db: sqlite3.Connection) -> dict[str, str]:
    """``document id -> id of its first unit (ordinal 0)``."""
    return {
        r[0]: r[1]
        for r in db.execute(
            "SELECT document_id, id FROM units u WHERE ordinal = "
            "(SELECT min(ordinal) FROM units v WHERE v.document_id = u.document_id)"
        )
    }


def _relation_values(
    props: Mapping[str, Any], keys: Mapping[str, str]
) -> list[tuple[str, str, Any]]:
    """``(key as written, relation, value)`` for relation keys of a mapping."""
    out: list[tuple[str, str, Any]] = []
    for k, v in props.items():
        rel = keys.get(norm_key(k))
        if rel:
            out.append((str(k), rel, v))
    return out


def build_declared(
    db: sqlite3.Connection, config: BuildConfig, catalog: Callable[[], Any] | None = None
) -> EdgeSet:
    """Every declared edge of the index, from the ``links`` table and metadata.

    Reads ``links`` (with their resolutions), unit properties, document metadata (front
    matter, OKF ``relations``/``okfm_relations``/``resource``/``sources``) and
    ``Unit.extra["relations"]``. See the module docstring for how occurrences map.
    ``catalog`` builds the link-resolution catalog for metadata values (see
    :class:`ValueResolver`).
    """
    es = EdgeSet()
    firsts = first_units(db)
    keys = config.all_relation_keys()
    resolver = ValueResolver(db, firsts, catalog)

    # Relation keys per unit: unit properties (Org drawers, front matter on the first
    # unit) and document metadata for the first unit. Links whose raw text sits in such
    # a value take the key's relation; other values are resolved here.
    overrides: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # unit → (raw, rel, key)
    where: dict[str, tuple[str, str, str]] = {}  # unit → (document id, root id, path)
    plain: list[tuple[str, str, str, str, str, str, Any, float | None]] = []
    docs = {
        r["id"]: r
        for r in db.execute(
            "SELECT id, root_id, path, metadata, type FROM documents"
        )
    }
    for u in db.execute(
        "SELECT id, document_id, ordinal, properties, extra FROM units "
        "WHERE properties != '{}' OR ordinal = 0 OR extra LIKE '%\"relations\"%'"
    ):
        d = docs.get(u["document_id"])
        if d is None:
            continue
        try:
            props = json.loads(u["properties"] or "{}")
            extra = json.loads(u["extra"] or "{}")
        except ValueError:
            continue
        values: list[tuple[str, str, Any]] = []
        is_first = firsts.get(u["document_id"]) == u["id"]
        meta: Mapping[str, Any] = {}
        if is_first:
            try:
                meta = json.loads(d["metadata"] or "{}")
            except ValueError:
                meta = {}
            if not isinstance(meta, Mapping):
                meta = {}
            tkeys = dict(keys)
            rule = config.types.get(str(d["type"] or "").casefold())
            if rule:
                tkeys.update(rule.relations)
            values = _relation_values(meta, tkeys)
            seen = {norm_key(k) for k, _, _ in values}
            values += [v for v in _relation_values(props, tkeys) if norm_key(v[0]) not in seen]
        else:
            values = _relation_values(props, keys)
        for key, rel, value in values:
            for item in _values(value):
                if _LINK_IN_TEXT.fullmatch(item):
                    overrides[u["id"]].append((item, rel, key))
                    where[u["id"]] = (d["id"], d["root_id"], d["path"])
                else:
                    plain.append((u["id"], d["id"], d["root_id"], d["path"], key, rel, item, None))
        if is_first:
            _okf_relations(meta, extra, u["id"], d, plain)

    # Links → declared edges.
    for r in db.execute(
        "SELECT l.unit_id, l.document_id, l.ordinal, l.kind, l.target, l.alias, l.anchor, "
        "l.line, l.raw, l.resolved_document_id, l.resolved_unit_id, l.unresolved_reason, "
        "d.path FROM links l JOIN documents d ON d.id = l.document_id "
        "WHERE l.kind != ? ORDER BY l.unit_id, l.ordinal",
        (URL,),
    ):
        src, src_doc = r["unit_id"], r["document_id"]
        relation = EMBEDS if r["kind"] == EMBED else REFERENCES
        ev: dict[str, Any] = {"via": "link", "kind": r["kind"], "raw": r["raw"], "line": r["line"]}
        ov = overrides.get(src)
        if ov:
            for i, (raw, rel, key) in enumerate(ov):
                if raw == r["raw"] or raw.lstrip("!") == (r["raw"] or "").lstrip("!"):
                    relation = rel
                    ev["field"] = key
                    del ov[i]
                    break
        target_doc = r["resolved_document_id"]
        target = r["resolved_unit_id"] or (firsts.get(target_doc) if target_doc else None)
        if target is not None and target_doc is not None:
            es.add(src, target, relation, DECLARED, weight=1.0, source_doc=src_doc,
                   target_doc=target_doc, evidence=ev, is_link=True)
            continue
        reason = r["unresolved_reason"] or ("document has no units" if target_doc else None)
        stub = stub_for(r["kind"], r["target"], r["anchor"], src_doc, r["path"], reason)
        if _attachment_reason(reason):
            stub = Stub(stub.id, "attachment", stub.label, stub.target, None)
            es.stubs[stub.id] = stub
            es.add(src, stub.id, relation, DECLARED, weight=1.0, source_doc=src_doc,
                   target_doc=None, evidence=ev, is_link=True)
            continue
        es.stubs[stub.id] = stub
        ev["as"] = relation
        ev["reason"] = reason
        es.add(src, stub.id, UNRESOLVED, DECLARED, weight=1.0, source_doc=src_doc,
               target_doc=None, evidence=ev, is_link=True)

    # Link-shaped metadata values the parser did not report as links.
    for uid, rest in overrides.items():
        if uid in where:
            doc_id, root_id, path = where[uid]
            plain.extend((uid, doc_id, root_id, path, key, rel, raw, None)
                         for raw, rel, key in rest)

    # Plain metadata values.
    unit_doc = _unit_docs(db, {p[0] for p in plain})
    for src, src_doc, root_id, path, key, rel, item, conf in plain:
        if src not in unit_doc:
            continue
        cands = item if isinstance(item, tuple) else (str(item),)
        for cand in cands:  # the first candidate that resolves (OKF alternatives)
            doc, unit, reason = resolver.resolve(cand, root_id, path, src_doc)
            if doc and unit:
                break
        item = cands[0]
        ev = {"via": "metadata", "field": key, "value": str(item)}
        if conf is not None:
            ev["confidence"] = conf
        weight = conf if conf is not None else 1.0
        if doc and unit:
            es.add(src, unit, rel, DECLARED, weight=weight, source_doc=src_doc, target_doc=doc,
                   evidence=ev)
        elif key == "sources":
            continue  # a source that is not a concept of the index: no edge
        else:
            stub = stub_for(WIKILINK, str(item), None, src_doc, path, reason or "not found")
            es.stubs[stub.id] = stub
            ev["as"] = rel
            ev["reason"] = reason
            es.add(src, stub.id, UNRESOLVED, DECLARED, weight=weight, source_doc=src_doc,
                   target_doc=None, evidence=ev)
    return es


def _unit_docs(db: sqlite3.Connection, unit_ids: set[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    ids = list(unit_ids)
    for i in range(0, len(ids), 500):
        part = ids[i : i + 500]
        q = ",".join("?" * len(part))
        out.update(
            (r[0], r[1])
            for r in db.execute(f"SELECT id, document_id FROM units WHERE id IN ({q})", part)
        )
    return out


def _bundle_root(path: str, concept_id: Any) -> str | None:
    """The OKF bundle folder of a concept file from its root-relative path and its
    concept id (its path within the bundle without ``.md``), or ``None``."""
    if not isinstance(concept_id, str) or not concept_id:
        return None
    stem = path[:-3] if path.lower().endswith(".md") else path
    if stem == concept_id:
        return ""
    if stem.endswith("/" + concept_id):
        return stem[: -len(concept_id) - 1]
    return None


def _okf_relations(
    meta: Mapping[str, Any],
    extra: Mapping[str, Any],
    unit_id: str,
    d: Any,
    plain: list[tuple[str, str, str, str, str, str, Any, float | None]],
) -> None:
    """Typed relations of a concept → plain values.

    The OKF parser's ``units[0].extra["relations"]`` (``{target, type, confidence, field,
    alternatives}``, targets within the bundle) is used when present; the bundle folder
    comes from ``metadata["concept_id"]``. Otherwise front matter ``relations``
    (``{target, type, confidence}``), ``okfm_relations`` (``{predicate, target}``) and
    ``sources[].resource`` paths ending in ``.md`` (``derived_from``) are read as written.
    """
    parsed = extra.get("relations")
    if isinstance(parsed, list) and parsed:
        bundle = _bundle_root(str(d["path"]), meta.get("concept_id"))
        # the targets as written, per field and in order (the parser keeps that order),
        # tried after the parser's reading: OKF-MEMORY writes bundle-relative paths
        written: dict[str, list[str]] = {}
        for key in ("relations", "okfm_relations"):
            items = meta.get(key)
            written[key] = [i["target"].strip() for i in items if isinstance(i, Mapping)
                            and isinstance(i.get("target"), str)] if isinstance(items, list) else []
        seen: dict[str, int] = {}
        for item in parsed:
            if not isinstance(item, Mapping) or not isinstance(item.get("target"), str):
                continue
            field_ = str(item.get("field") or "relations")
            n = seen.get(field_, 0)
            seen[field_] = n + 1
            raw = written.get(field_, [])
            targets = [item["target"], *[a for a in item.get("alternatives") or []
                                         if isinstance(a, str)]]
            cands = tuple(dict.fromkeys(
                t if bundle is None or t.startswith("../") or "://" in t
                else "/" + posixpath.join(bundle, t.lstrip("/"))
                for t in targets if t.strip()
            ))
            if n < len(raw) and raw[n] not in cands:
                # as written, searched from the file's folder up to the root
                cands = (*cands, raw[n])
            if not cands:
                continue
            plain.append((unit_id, d["id"], d["root_id"], d["path"], field_,
                          norm_key(str(item.get("type") or "related")), cands,
                          _confidence(item.get("confidence"))))
        return
    for key, type_key in (("relations", "type"), ("okfm_relations", "predicate")):
        items = meta.get(key)
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, Mapping):
                continue
            target = item.get("target")
            if not isinstance(target, str) or not target.strip():
                continue
            rtype = item.get(type_key) or item.get("relation") or "related"
            plain.append((unit_id, d["id"], d["root_id"], d["path"], key, norm_key(str(rtype)),
                          target.strip(), _confidence(item.get("confidence"))))
    sources = meta.get("sources")
    for s in sources if isinstance(sources, list) else []:
        r = s.get("resource") if isinstance(s, Mapping) else None
        if isinstance(r, str) and r.strip().lower().endswith(".md") and "://" not in r:
            plain.append((unit_id, d["id"], d["root_id"], d["path"], "sources",
                          DERIVED_FROM, r.strip(), None))


def _confidence(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return max(0.0, min(1.0, float(value)))
    return None


def build_structural(db: sqlite3.Connection, document_ids: Sequence[str]) -> EdgeSet:
    """``parent``, ``next`` and ``previous`` edges of the given documents' units.

    A unit's parent is its ``parent_id``; a top-level unit (no parent, not first) of a
    document whose first unit is a preamble has that preamble as parent. Siblings are
    units with the same (effective) parent, in document order; weights 1.0.
    """
    es = EdgeSet()
    ids = list(document_ids)
    for i in range(0, len(ids), 500):
        part = ids[i : i + 500]
        q = ",".join("?" * len(part))
        by_doc: dict[str, list[sqlite3.Row]] = defaultdict(list)
        for r in db.execute(
            "SELECT id, document_id, ordinal, parent_id, kind FROM units "
            f"WHERE document_id IN ({q}) ORDER BY document_id, ordinal",
            part,
        ):
            by_doc[r["document_id"]].append(r)
        for doc_id, units in by_doc.items():
            first = units[0]
            root = first["id"] if first["kind"] == "preamble" else None
            groups: dict[str | None, list[str]] = defaultdict(list)
            for u in units:
                if u["id"] == root:
                    continue
                parent = u["parent_id"] or root
                if parent:
                    es.add(u["id"], parent, PARENT, STRUCTURAL, weight=1.0, source_doc=doc_id,
                           target_doc=doc_id, evidence={"via": "outline"})
                groups[parent].append(u["id"])
            for sibs in groups.values():
                for a, b in itertools.pairwise(sibs):
                    es.add(a, b, NEXT, STRUCTURAL, weight=1.0, source_doc=doc_id,
                           target_doc=doc_id, evidence={"via": "outline"})
                    es.add(b, a, PREVIOUS, STRUCTURAL, weight=1.0, source_doc=doc_id,
                           target_doc=doc_id, evidence={"via": "outline"})
    return es


def build_rules(
    db: sqlite3.Connection, config: BuildConfig, catalog: Callable[[], Any] | None = None
) -> EdgeSet:
    """Rule edges: for each document whose ``type`` has default relations, an edge from
    its first unit to each rule's target (unresolved targets → stub + ``unresolved``)."""
    es = EdgeSet()
    if not any(r.defaults for r in config.types.values()):
        return es
    firsts = first_units(db)
    resolver = ValueResolver(db, firsts, catalog)
    for d in db.execute("SELECT id, root_id, path, type FROM documents WHERE type IS NOT NULL"):
        rule = config.types.get(str(d["type"]).casefold())
        src = firsts.get(d["id"])
        if not rule or not rule.defaults or src is None:
            continue
        for rel, target in rule.defaults:
            doc, unit, reason = resolver.resolve(target, d["root_id"], d["path"], d["id"])
            ev = {"via": "type rule", "type": d["type"], "relation": rel, "target": target}
            if doc and unit:
                if unit != src:
                    es.add(src, unit, rel, RULE, weight=1.0, source_doc=d["id"], target_doc=doc,
                           evidence=ev)
            else:
                stub = stub_for(WIKILINK, target, None, d["id"], d["path"], reason)
                es.stubs[stub.id] = stub
                ev["as"] = rel
                es.add(src, stub.id, UNRESOLVED, RULE, weight=1.0, source_doc=d["id"],
                       target_doc=None, evidence=ev)
    return es


# --- implicit ---------------------------------------------------------------------------
def unit_features(
    db: sqlite3.Connection, document_ids: Sequence[str], implicit_keys: Sequence[str]
) -> list[tuple[str, str, str]]:
    """``(document id, unit id, feature)`` rows for the given documents.

    Features are ``tag:<tag>`` for a unit's own tags (plus the document's tags for its
    first unit; inherited tags are left out: the structure already links a heading to
    its ancestors) and ``prop:<key>=<value>`` for property keys in ``implicit_keys``
    (the first unit also reads the document's metadata; list values give one feature
    each). Tags and values are case-folded.
    """
    keys = {norm_key(k) for k in implicit_keys}
    out: list[tuple[str, str, str]] = []
    ids = list(document_ids)
    for i in range(0, len(ids), 500):
        part = ids[i : i + 500]
        q = ",".join("?" * len(part))
        docs = {
            r[0]: (r[1], r[2])
            for r in db.execute(
                f"SELECT id, tags, metadata FROM documents WHERE id IN ({q})", part
            )
        }
        seen_first: set[str] = set()
        for r in db.execute(
            "SELECT id, document_id, ordinal, tags, properties FROM units "
            f"WHERE document_id IN ({q}) ORDER BY document_id, ordinal",
            part,
        ):
            feats: set[str] = set()
            try:
                tags = json.loads(r["tags"] or "[]")
                props = json.loads(r["properties"] or "{}")
            except ValueError:
                continue
            feats.update("tag:" + str(t).casefold().lstrip("#") for t in tags if str(t).strip())
            values: list[tuple[str, Any]] = [(k, v) for k, v in props.items()]
            if r["document_id"] not in seen_first:
                seen_first.add(r["document_id"])
                dtags, meta = docs.get(r["document_id"], ("[]", "{}"))
                try:
                    feats.update("tag:" + str(t).casefold().lstrip("#")
                                 for t in json.loads(dtags or "[]") if str(t).strip())
                    m = json.loads(meta or "{}")
                except ValueError:
                    m = {}
                if isinstance(m, Mapping):
                    values = [(k, v) for k, v in m.items()] + values
            for k, v in values:
                nk = norm_key(k)
                if nk not in keys:
                    continue
                items = v if isinstance(v, list) else [v]
                for item in items:
                    if isinstance(item, str | int | float) and not isinstance(item, bool):
                        val = str(item).strip().casefold()
                        if val and len(val) <= 200:
                            feats.add(f"prop:{nk}={val}")
            out.extend((r["document_id"], r["id"], f) for f in sorted(feats))
    return out


def feature_weight(df: int) -> float:
    """The weight one shared feature adds to a pair: ``1 / log2(1 + df)``."""
    return 1.0 / math.log2(1 + max(df, 1))


def implicit_edges(
    affected: Iterable[str],
    features: Mapping[str, set[str]],
    holders: Mapping[str, Sequence[tuple[str, str]]],
    counts: Mapping[str, int],
    unit_doc: Mapping[str, str],
    max_feature_units: int,
) -> EdgeSet:
    """Implicit edges for every pair with at least one end in ``affected``.

    Args:
        affected: unit ids whose implicit edges are (re)computed.
        features: unit id → its features (for affected units and their partners).
        holders: feature → ``(unit id, document id)`` of every unit carrying it.
        counts: feature → number of units carrying it.
        unit_doc: unit id → document id (for affected units).
        max_feature_units: features with more holders make no edges.
    """
    es = EdgeSet()
    done: set[tuple[str, str, str]] = set()
    for a in affected:
        fa = features.get(a, set())
        doc_a = unit_doc.get(a)
        partners: dict[str, str] = {}
        for f in fa:
            if counts.get(f, 0) > max_feature_units:
                continue
            for b, doc_b in holders.get(f, ()):
                if b != a and doc_b != doc_a:
                    partners[b] = doc_b
        for b, doc_b in partners.items():
            shared = fa & features.get(b, set())
            for prefix, rel in (("tag:", SHARES_TAG), ("prop:", SHARES_PROPERTY)):
                fs = sorted(f for f in shared if f.startswith(prefix)
                            and counts.get(f, 0) <= max_feature_units)
                if not fs:
                    continue
                s, t = (a, b) if a < b else (b, a)
                if (s, t, rel) in done:
                    continue
                done.add((s, t, rel))
                w = min(1.0, sum(feature_weight(counts.get(f, 2)) for f in fs))
                sd, td = (doc_a, doc_b) if s == a else (doc_b, doc_a)
                es.add(s, t, rel, IMPLICIT, weight=round(w, 6), source_doc=sd or "",
                       target_doc=td, evidence={"via": "shared", "features": fs,
                                                "units": [counts.get(f, 0) for f in fs]})
    return es
