"""Declared edges: links and relation-valued metadata → typed edges (see
:mod:`cairn.graph.edges` for how link occurrences map to edges)."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cairn.graph.catalog import Catalog
from cairn.graph.edges import (
    DECLARED,
    DERIVED_FROM,
    EMBEDS,
    LINK_IN_TEXT,
    REFERENCES,
    UNRESOLVED,
    BuildConfig,
    EdgeSet,
    attachment_reason,
    norm_key,
    stub_for,
)
from cairn.graph.values import ValueResolver, relation_items, value_keys
from cairn.model import EMBED, URL, WIKILINK, GraphDocument, GraphUnit, LinkOccurrence, Stub

Plain = tuple[str, str, str, str, str, str, Any, float | None]
"""A metadata value to resolve: ``(unit id, document id, root id, path, key as written,
relation, value or candidate values, confidence)``."""


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
    docs: Sequence[GraphDocument],
    units: Sequence[GraphUnit],
    links: Sequence[LinkOccurrence],
    config: BuildConfig,
    catalog: Callable[[set[str]], Catalog],
    firsts: Mapping[str, str],
) -> tuple[EdgeSet, dict[str, set[str]]]:
    """The declared edges leaving ``docs``, from their links and metadata.

    Args:
        docs / units: the documents and their units (units by document and ordinal).
        links: the documents' stored links with their resolutions (by unit, ordinal).
        config: relation keys and type rules.
        catalog: ``catalog(name keys) -> Catalog`` able to resolve values naming those
            keys (called once, only when some metadata value needs resolving).
        firsts: ``document id -> first unit id`` for ``docs`` and for the documents
            their links resolve to.

    Reads unit properties, document metadata (front matter, OKF
    ``relations``/``okfm_relations``/``resource``/``sources``) and
    ``Unit.extra["relations"]``. See :mod:`cairn.graph.edges` for how occurrences map.

    Returns:
        ``(edges, wants)``: ``wants`` maps each document to the name keys its relation
        values look for (see :func:`cairn.graph.values.value_keys`).
    """
    es = EdgeSet()
    keys = config.all_relation_keys()

    # Relation keys per unit: unit properties (Org drawers, front matter on the first
    # unit) and document metadata for the first unit. Links whose raw text sits in such
    # a value take the key's relation; other values are resolved here.
    overrides: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # unit → (raw, rel, key)
    where: dict[str, tuple[str, str, str]] = {}  # unit → (document id, root id, path)
    plain: list[Plain] = []
    by_id = {d.id: d for d in docs}
    for u in units:
        d = by_id.get(u.document_id)
        is_first = firsts.get(u.document_id) == u.id
        if d is None or not (is_first or u.properties):
            continue
        props, extra = u.properties, u.extra
        values: list[tuple[str, str, Any]] = []
        meta: Mapping[str, Any] = {}
        if is_first:
            meta = d.metadata
            tkeys = dict(keys)
            rule = config.types.get(str(d.type or "").casefold())
            if rule:
                tkeys.update(rule.relations)
            values = _relation_values(meta, tkeys)
            seen = {norm_key(k) for k, _, _ in values}
            values += [v for v in _relation_values(props, tkeys) if norm_key(v[0]) not in seen]
        else:
            values = _relation_values(props, keys)
        for key, rel, value in values:
            for item in relation_items(value):
                if LINK_IN_TEXT.fullmatch(item):
                    overrides[u.id].append((item, rel, key))
                    where[u.id] = (d.id, d.root_id, d.path)
                else:
                    plain.append((u.id, d.id, d.root_id, d.path, key, rel, item, None))
        if is_first:
            _okf_relations(meta, extra, u.id, d, plain)

    # Links → declared edges.
    for r in links:
        if r.kind == URL:
            continue
        src, src_doc = r.unit_id, r.document_id
        relation = EMBEDS if r.kind == EMBED else REFERENCES
        ev: dict[str, Any] = {"via": "link", "kind": r.kind, "raw": r.raw, "line": r.line}
        ov = overrides.get(src)
        if ov:
            for i, (raw, rel, key) in enumerate(ov):
                if raw == r.raw or raw.lstrip("!") == (r.raw or "").lstrip("!"):
                    relation = rel
                    ev["field"] = key
                    del ov[i]
                    break
        target_doc = r.resolved_document_id
        target = r.resolved_unit_id or (firsts.get(target_doc) if target_doc else None)
        if target is not None and target_doc is not None:
            es.add(src, target, relation, DECLARED, weight=1.0, source_doc=src_doc,
                   target_doc=target_doc, evidence=ev, is_link=True)
            continue
        reason = r.unresolved_reason or ("document has no units" if target_doc else None)
        stub = stub_for(r.kind, r.target, r.anchor, src_doc, r.path, reason)
        if attachment_reason(reason):
            stub = Stub(stub.id, "attachment", stub.label, stub.target, None)
            es.add_stub(stub)
            es.add(src, stub.id, relation, DECLARED, weight=1.0, source_doc=src_doc,
                   target_doc=None, evidence=ev, is_link=True)
            continue
        es.add_stub(stub)
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
    wants: dict[str, set[str]] = {d.id: set() for d in docs}
    for _src, src_doc, _root, path, _key, _rel, item, _conf in plain:
        for cand in item if isinstance(item, tuple) else (str(item),):
            wants.setdefault(src_doc, set()).update(value_keys(cand, path))
    all_keys: set[str] = set().union(*wants.values())
    resolver = ValueResolver(lambda: catalog(all_keys))
    for src, src_doc, root_id, path, key, rel, item, conf in plain:
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
            es.add_stub(stub)
            ev["as"] = rel
            ev["reason"] = reason
            es.add(src, stub.id, UNRESOLVED, DECLARED, weight=weight, source_doc=src_doc,
                   target_doc=None, evidence=ev)
    return es, wants



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
    d: GraphDocument,
    plain: list[Plain],
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
        bundle = _bundle_root(d.path, meta.get("concept_id"))
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
            plain.append((unit_id, d.id, d.root_id, d.path, field_,
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
            plain.append((unit_id, d.id, d.root_id, d.path, key, norm_key(str(rtype)),
                          target.strip(), _confidence(item.get("confidence"))))
    sources = meta.get("sources")
    for s in sources if isinstance(sources, list) else []:
        r = s.get("resource") if isinstance(s, Mapping) else None
        if isinstance(r, str) and r.strip().lower().endswith(".md") and "://" not in r:
            plain.append((unit_id, d.id, d.root_id, d.path, "sources",
                          DERIVED_FROM, r.strip(), None))


def _confidence(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return max(0.0, min(1.0, float(value)))
    return None

