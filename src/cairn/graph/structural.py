"""Structural, rule and implicit edges: the outline (``parent`` / ``next`` /
``previous``), ``types.yaml`` default relations, and units sharing rare tags or
property values (see :mod:`cairn.graph.edges`)."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from cairn.graph.catalog import Catalog
from cairn.graph.edges import (
    IMPLICIT,
    NEXT,
    PARENT,
    PREVIOUS,
    RULE,
    SHARES_PROPERTY,
    SHARES_TAG,
    STRUCTURAL,
    UNRESOLVED,
    BuildConfig,
    EdgeSet,
    norm_key,
    stub_for,
)
from cairn.graph.values import ValueResolver, value_keys
from cairn.model import WIKILINK, GraphDocument, GraphUnit


def build_structural(units: Sequence[GraphUnit]) -> EdgeSet:
    """``parent``, ``next`` and ``previous`` edges among ``units`` (by document and
    ordinal).

    A unit's parent is its ``parent_id``; a top-level unit (no parent, not first) of a
    document whose first unit is a preamble has that preamble as parent. Siblings are
    units with the same (effective) parent, in document order; weights 1.0.
    """
    es = EdgeSet()
    by_doc: dict[str, list[GraphUnit]] = defaultdict(list)
    for u in units:
        by_doc[u.document_id].append(u)
    for doc_id, doc_units in by_doc.items():
        doc_units.sort(key=lambda u: u.ordinal)
        first = doc_units[0]
        root = first.id if first.kind == "preamble" else None
        groups: dict[str | None, list[str]] = defaultdict(list)
        for u in doc_units:
            if u.id == root:
                continue
            parent = u.parent_id or root
            if parent:
                es.add(u.id, parent, PARENT, STRUCTURAL, weight=1.0, source_doc=doc_id,
                       target_doc=doc_id, evidence={"via": "outline"})
            groups[parent].append(u.id)
        for sibs in groups.values():
            for a, b in itertools.pairwise(sibs):
                es.add(a, b, NEXT, STRUCTURAL, weight=1.0, source_doc=doc_id,
                       target_doc=doc_id, evidence={"via": "outline"})
                es.add(b, a, PREVIOUS, STRUCTURAL, weight=1.0, source_doc=doc_id,
                       target_doc=doc_id, evidence={"via": "outline"})
    return es


def structural_count(units: Sequence[GraphUnit]) -> int:
    """How many edges :func:`build_structural` makes of ``units`` (without making them:
    the edge index derives structural edges from the units itself, see
    :mod:`cairn.store.sql.outline`)."""
    by_doc: dict[str, list[GraphUnit]] = defaultdict(list)
    for u in units:
        by_doc[u.document_id].append(u)
    n = 0
    for doc_units in by_doc.values():
        first = min(doc_units, key=lambda u: u.ordinal)
        root = first.id if first.kind == "preamble" else None
        groups: dict[str | None, int] = defaultdict(int)
        for u in doc_units:
            if u.id == root:
                continue
            parent = u.parent_id or root
            n += 1 if parent else 0
            groups[parent] += 1
        n += sum(2 * (k - 1) for k in groups.values())
    return n


def build_rules(
    docs: Sequence[GraphDocument],
    config: BuildConfig,
    catalog: Callable[[set[str]], Catalog],
    firsts: Mapping[str, str],
) -> tuple[EdgeSet, dict[str, set[str]]]:
    """Rule edges of ``docs``: for each document whose ``type`` has default relations,
    an edge from its first unit to each rule's target (unresolved targets → stub +
    ``unresolved``).

    Returns:
        ``(edges, wants)``: the name keys each document's rule targets look for.
    """
    es = EdgeSet()
    wants: dict[str, set[str]] = {}
    todo: list[tuple[GraphDocument, str, str, str]] = []
    for d in docs:
        rule = config.types.get(str(d.type).casefold()) if d.type else None
        src = firsts.get(d.id)
        if not rule or not rule.defaults or src is None:
            continue
        for rel, target in rule.defaults:
            todo.append((d, src, rel, target))
            wants.setdefault(d.id, set()).update(value_keys(target, d.path))
    if not todo:
        return es, wants
    all_keys: set[str] = set().union(*wants.values())
    resolver = ValueResolver(lambda: catalog(all_keys))
    for d, src, rel, target in todo:
        doc, unit, reason = resolver.resolve(target, d.root_id, d.path, d.id)
        ev = {"via": "type rule", "type": d.type, "relation": rel, "target": target}
        if doc and unit:
            if unit != src:
                es.add(src, unit, rel, RULE, weight=1.0, source_doc=d.id, target_doc=doc,
                       evidence=ev)
        else:
            stub = stub_for(WIKILINK, target, None, d.id, d.path, reason)
            es.add_stub(stub)
            ev["as"] = rel
            es.add(src, stub.id, UNRESOLVED, RULE, weight=1.0, source_doc=d.id,
                   target_doc=None, evidence=ev)
    return es, wants


# --- implicit ---------------------------------------------------------------------------
def unit_features(
    docs: Sequence[GraphDocument], units: Iterable[GraphUnit], implicit_keys: Sequence[str]
) -> list[tuple[str, str, str]]:
    """``(document id, unit id, feature)`` rows for the given documents' units.

    Features are ``tag:<tag>`` for a unit's own tags (plus the document's tags for its
    first unit; inherited tags are left out: the structure already links a heading to
    its ancestors) and ``prop:<key>=<value>`` for property keys in ``implicit_keys``
    (the first unit also reads the document's metadata; list values give one feature
    each). Tags and values are case-folded.
    """
    keys = {norm_key(k) for k in implicit_keys}
    by_id = {d.id: d for d in docs}
    out: list[tuple[str, str, str]] = []
    seen_first: set[str] = set()
    for u in sorted(units, key=lambda u: (u.document_id, u.ordinal)):
        d = by_id.get(u.document_id)
        if d is None:
            continue
        feats: set[str] = set()
        feats.update("tag:" + str(t).casefold().lstrip("#") for t in u.tags if str(t).strip())
        values: list[tuple[str, Any]] = list(u.properties.items())
        if u.document_id not in seen_first:
            seen_first.add(u.document_id)
            feats.update("tag:" + str(t).casefold().lstrip("#") for t in d.tags if str(t).strip())
            values = list(d.metadata.items()) + values
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
        out.extend((u.document_id, u.id, f) for f in sorted(feats))
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
    *,
    skip: Collection[str] = (),
) -> EdgeSet:
    """Implicit edges for every pair with at least one end in ``affected`` and the
    other not in ``skip``.

    Args:
        affected: unit ids whose implicit edges are (re)computed.
        features: unit id → its features (for affected units and their partners).
        holders: feature → ``(unit id, document id)`` of every unit carrying it.
        counts: feature → number of units carrying it.
        unit_doc: unit id → document id (for affected units).
        max_feature_units: features with more holders make no edges.
        skip: partners whose pairs were built already (by an earlier chunk).
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
                if b != a and doc_b != doc_a and b not in skip:
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
