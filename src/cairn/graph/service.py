"""``GraphService``: the knowledge graph as the interfaces see it.

Attach it to :class:`cairn.app.Cairn` and bring it up to date after each index run,
after link resolution::

    self.graph = GraphService(self.store, types=registry)     # in Cairn.__init__
    resolve_links(store, changed, removed)                     # in the pipeline
    self.graph.update(changed, removed, run_id=run.id)

``update`` also finds the documents that changed since the last update by itself
(content hashes kept by the edge index), so the lists only add to what it finds; link
resolution marks the documents whose links or relation values may now resolve
differently, and only those, with the changed ones, get their declared and rule edges
rebuilt. Every query takes a node reference: a unit id, a document id, a stub id, a
unique id prefix, or a file path — absolute, relative to the current folder, or relative
to a source root — optionally ``PATH:LINE`` for the unit at that line. A file or
document stands for all its units. Results are JSON-ready dicts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cairn.errors import NotFound, QueryError
from cairn.graph import edges as eb
from cairn.graph import traverse as tv
from cairn.graph.declared import build_declared
from cairn.graph.expand import (
    ExpandConfig,
    ExpandedHit,
    expand,
    explain,
    proximity,
)
from cairn.graph.resolve import DOCUMENT_CHUNK, Catalog, catalog_for, in_chunks
from cairn.graph.structural import build_rules, implicit_edges, structural_count, unit_features
from cairn.model import Edge, GraphDocument, GraphNode, GraphUnit
from cairn.store import Store


def node_dict(n: GraphNode) -> dict[str, Any]:
    """A node as graph results give it (JSON-ready; the keys they have always had)."""
    if n.type == "stub":
        return {"id": n.id, "type": "stub", "title": n.title, "kind": n.kind,
                "target": n.target, "reason": n.reason, "document_id": None, "path": None}
    return {"id": n.id, "type": "unit", "title": n.title, "kind": n.kind,
            "document_id": n.document_id, "doc_title": n.doc_title, "doc_type": n.doc_type,
            "path": n.path, "abs_path": n.abs_path, "line": n.line,
            "outline_path": list(n.outline_path)}


@dataclass(frozen=True, slots=True)
class NodeRef:
    """What a reference names: the node ids it stands for and a label."""

    ids: tuple[str, ...]
    label: str
    document_id: str | None = None
    path: str | None = None


@dataclass(frozen=True, slots=True)
class UpdateReport:
    """What an update did: documents rebuilt / removed, edges written / deleted per origin,
    and wall time in seconds."""

    changed_documents: int
    removed_documents: int
    written: Mapping[str, int] = field(default_factory=dict)
    deleted: Mapping[str, int] = field(default_factory=dict)
    edges: int = 0
    stubs: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "changed_documents": self.changed_documents,
            "removed_documents": self.removed_documents,
            "written": dict(self.written),
            "deleted": dict(self.deleted),
            "edges": self.edges,
            "stubs": self.stubs,
            "seconds": self.seconds,
        }


class GraphService:
    """Build, update and query the typed graph of one store.

    Args:
        store: the open store; its ``edges`` index holds the graph.
        types: note types (a ``TypeRegistry`` or a mapping, see
            :func:`cairn.graph.edges.type_rules`) for relation keys and rule edges;
            ``None``: none.
        relation_keys / implicit_keys / max_feature_units: see
            :class:`cairn.graph.edges.BuildConfig`.
        expand_config: defaults for :meth:`expand`.
        renderer: ``render(graph_data, fmt) -> str`` for :meth:`export`; pass
            :func:`cairn.export.graph.render` (the graph layer may not import export).
        chunk: documents built at a time (see :data:`cairn.graph.resolve.DOCUMENT_CHUNK`);
            the graph is the same whatever it is.

    When these settings differ from those the graph was built with, the next
    :meth:`update` rebuilds it.
    """

    def __init__(
        self,
        store: Store,
        *,
        types: Any = None,
        relation_keys: Mapping[str, str] | None = None,
        implicit_keys: Sequence[str] | None = None,
        max_feature_units: int = 100,
        expand_config: ExpandConfig | None = None,
        renderer: Callable[[dict[str, Any], str], str] | None = None,
        chunk: int = DOCUMENT_CHUNK,
    ) -> None:
        self.renderer = renderer
        self.store = store
        self.es = store.edges
        self.config = eb.BuildConfig(
            relation_keys=dict(relation_keys or eb.DEFAULT_RELATION_KEYS),
            implicit_keys=tuple(implicit_keys or eb.DEFAULT_IMPLICIT_KEYS),
            max_feature_units=max_feature_units,
            types=eb.type_rules(types),
        )
        self.expand_config = expand_config or ExpandConfig()
        self._types_given = types is not None
        self.chunk = chunk

    def set_types(self, types: Any) -> None:
        """Use these note types (a ``TypeRegistry`` or mapping) for rule edges and type
        relations from now on (the composition root loads them once per run). Types given
        to the constructor win: an injected service keeps its settings."""
        if self._types_given:
            return
        self.config = dataclasses.replace(self.config, types=eb.type_rules(types))

    # --- building ---------------------------------------------------------------------
    def is_stale(self) -> bool:
        """Whether documents changed, or links were resolved again, since the last update
        (or the settings differ from those the graph was built with)."""
        changed, removed = self.es.changed_documents()
        return bool(changed or removed or self.es.dirty()
                    or self.es.meta("config") != eb.config_fingerprint(self.config))

    def update(
        self,
        changed: Iterable[str] | None = None,
        removed: Iterable[str] | None = None,
        *,
        run_id: str | None = None,
    ) -> UpdateReport:
        """Bring the graph up to date after an index run (and :func:`resolve_links`).

        Args:
            changed: documents added or re-written (added to those found by comparing
                content hashes).
            removed: documents deleted (likewise).
            run_id: recorded on the edges written.

        Structural and implicit edges are rebuilt for the changed documents (implicit
        ones also for the units sharing a tag or property value with them); declared and
        rule edges for the changed documents and those link resolution marked (whose
        links or relation values may resolve differently), each written as a diff. The
        first update, and one after the settings changed, builds everything. Runs in one
        transaction (nested in the caller's, if any).

        Raises:
            cairn.errors.StoreError: the store failed.
        """
        t0 = time.perf_counter()
        es = self.es
        written: dict[str, int] = {}
        deleted: dict[str, int] = {}
        fingerprint = eb.config_fingerprint(self.config)
        with self.store.transaction(), contextlib.ExitStack() as stack:
            full = es.meta("config") != fingerprint
            if full:
                es.clear()
            # the first build: write into an empty table, indexes built at the end
            cold = stack.enter_context(es.bulk_load())
            found_changed, found_removed = es.changed_documents()
            ch = set(found_changed) | set(changed or ())
            rm = (set(found_removed) | set(removed or ())) - ch
            dirty = es.take_dirty()
            decl: set[str] | None = None if full or "*" in dirty else (ch | dirty) - rm
            load = sorted(set(es.document_ids()) | ch) if decl is None else sorted(ch | decl)
            feats: set[str] = set()  # the tags and values changed documents had or have
            live: set[str] = set()
            # a chunk of documents at a time: memory holds one chunk, not the index
            for part in in_chunks(load, self.chunk):
                docs, units = es.graph_sources(part)
                ours = part if decl is None else [d for d in part if d in decl]
                self._declared_and_rules(docs, units, ours, written, deleted, run_id)
                ch_docs = [d for d in docs if d.id in ch]
                if ch_docs:
                    ch_units = [u for u in units if u.document_id in ch]
                    written[eb.STRUCTURAL] = (written.get(eb.STRUCTURAL, 0)
                                              + structural_count(ch_units))
                    self._forget_features(ch_docs, ch_units, feats, cold=cold)
                    live.update(d.id for d in ch_docs)
            rm |= ch - live  # said to have changed, but gone from the index
            ch = live
            if ch or rm:
                written.setdefault(eb.STRUCTURAL, 0)
                feats |= es.features_of(sorted(rm))
                es.forget_docs(sorted(rm))
                written[eb.IMPLICIT] = self._update_implicit(feats, run_id, cold=cold)
                es.forget_wants(sorted(rm))
                es.mark_built(sorted(ch))
            es.prune_stubs()
            es.set_meta("config", fingerprint)
            n_edges, n_stubs = es.size()
        return UpdateReport(len(ch), len(rm), written, deleted, n_edges, n_stubs,
                            round(time.perf_counter() - t0, 4))

    def rebuild(self, *, run_id: str | None = None) -> UpdateReport:
        """Drop every edge and build the graph from scratch."""
        with self.store.transaction():
            self.es.clear()
        return self.update(run_id=run_id)

    def _declared_and_rules(
        self,
        docs: Sequence[GraphDocument],
        units: Sequence[GraphUnit],
        ids: Sequence[str],
        written: dict[str, int],
        deleted: dict[str, int],
        run_id: str | None,
    ) -> None:
        """Rebuild the declared and rule edges leaving the documents ``ids`` (those of
        ``docs`` and ``units`` that are not among them are left alone)."""
        if not ids:
            return
        es, store = self.es, self.store
        decl = set(ids)
        docs = [d for d in docs if d.id in decl]
        units = [u for u in units if u.document_id in decl]
        links = store.links_from(ids)
        targets = {lk.resolved_document_id for lk in links if lk.resolved_document_id}
        firsts = es.first_units(sorted(decl | targets))

        def catalog(keys: set[str]) -> Catalog:
            return catalog_for(store, keys, decl)

        declared, vwants = build_declared(docs, units, links, self.config, catalog, firsts)
        rules, rwants = build_rules(docs, self.config, catalog, firsts)
        for d, keys in rwants.items():
            vwants.setdefault(d, set()).update(keys)
        es.set_wants("value", vwants)
        self._sync(eb.DECLARED, declared, ids, written, deleted, run_id)
        self._sync(eb.RULE, rules, ids, written, deleted, run_id)

    def _sync(
        self,
        origin: str,
        built: eb.EdgeSet,
        document_ids: Sequence[str],
        written: dict[str, int],
        deleted: dict[str, int],
        run_id: str | None,
    ) -> None:
        """Write the difference between ``built`` and the stored edges of ``origin``
        leaving ``document_ids``; adds to the counts in ``written`` and ``deleted``."""
        self.es.upsert_stubs(built.stubs.values())
        old = self.es.edges_of_origin(origin, document_ids)
        gone = [eid for eid in old if eid not in built]
        fresh: list[Edge] = []
        for e in built:
            o = old.get(e.id)
            if o is None or not eb.same_edge(o, e):
                fresh.append(e)
        self.es.delete_ids(gone)
        written[origin] = written.get(origin, 0) + self.es.insert(fresh, run_id)
        deleted[origin] = deleted.get(origin, 0) + len(gone)

    def _forget_features(
        self,
        docs: Sequence[GraphDocument],
        units: Sequence[GraphUnit],
        feats: set[str],
        *,
        cold: bool,
    ) -> None:
        """Replace the recorded features of changed documents' units; the old and new
        ones are added to ``feats``. Unless ``cold`` (an empty edge table), the units'
        implicit edges go: those still sharing a feature are rebuilt from ``feats``."""
        es = self.es
        ids = [d.id for d in docs]
        feats |= es.features_of(ids)
        es.forget_docs(ids)
        rows = unit_features(docs, units, self.config.implicit_keys)
        es.set_features(rows)
        feats.update(f for _d, _u, f in rows)
        if not cold:
            unit_ids = sorted(u.id for u in units)
            for rel in (eb.SHARES_TAG, eb.SHARES_PROPERTY):
                es.delete_implicit_touching(unit_ids, rel)

    def _update_implicit(self, feats: set[str], run_id: str | None, *, cold: bool) -> int:
        """Rebuild the implicit edges of the units holding one of ``feats`` (the
        features changed documents had or have), a chunk of units at a time; ``cold``:
        the edge table was empty, nothing to delete. Returns the edges written."""
        es = self.es
        holders = es.holders(sorted(feats))
        affected = sorted({u for hs in holders.values() for u, _d in hs})
        del holders
        if not cold:
            for part in in_chunks(affected, self.chunk):
                for rel in (eb.SHARES_TAG, eb.SHARES_PROPERTY):
                    es.delete_implicit_touching(part, rel)
        n = 0
        for part in in_chunks(affected, self.chunk):
            have = es.unit_features(part)
            all_feats = sorted({f for fs in have.values() for f in fs})
            counts = es.feature_counts(all_feats)
            small = [f for f in all_feats if counts.get(f, 0) <= self.config.max_feature_units]
            owners = es.holders(small)
            partners = {u for hs in owners.values() for u, _d in hs}
            have.update(es.unit_features(sorted(partners - set(have))))
            unit_doc = {u: d for hs in owners.values() for u, d in hs}
            # a pair whose other end is an affected unit of an earlier chunk was built there
            done = {b for b in partners if b < part[0] and have.get(b, set()) & feats}
            n += es.insert(implicit_edges(part, have, owners, counts, unit_doc,
                                          self.config.max_feature_units, skip=done), run_id)
        return n

    # --- references -------------------------------------------------------------------
    def resolve(self, ref: str) -> NodeRef:
        """The node(s) a reference names (see the module docstring).

        Raises:
            NotFound: nothing matches, or an id prefix is ambiguous.
        """
        es = self.es
        ref = ref.strip()
        node = es.nodes([ref]).get(ref)
        if node is not None:
            if node.type == "unit":
                return NodeRef((node.id,), node.title or node.path or node.id,
                               node.document_id, node.path)
            return NodeRef((node.id,), node.title)
        doc = es.documents_brief([ref]).get(ref)
        if doc is not None:
            return NodeRef(doc.unit_ids, doc.title or doc.path, doc.id, doc.path)
        loc = self._locate(ref)
        if loc is not None:
            return loc
        if len(ref) >= 4:
            hits = es.ids_with_prefix(ref, 2)
            if len(hits) == 1:
                return self.resolve(hits[0])
            if len(hits) > 1:
                raise NotFound(f"{ref}: ambiguous id prefix")
        raise NotFound(f"{ref}: no unit, document, stub or indexed file matches")

    def _locate(self, text: str) -> NodeRef | None:
        line: int | None = None
        path = text
        head, sep, tail = text.rpartition(":")
        if sep and tail.isdigit() and head:
            path, line = head, int(tail)
        roots = self.store.roots()
        hits: list[tuple[str, str]] = []
        cands = [Path(path).expanduser()]
        if not cands[0].is_absolute():
            cands.append(Path.cwd() / path)
        for cand in cands:
            real = Path(os.path.realpath(cand)) if cand.exists() else cand.absolute()
            for r in roots:
                try:
                    rel = real.relative_to(Path(r.path)).as_posix()
                except ValueError:
                    continue
                hits.append((r.id, rel))
        hits += [(r.id, path.removeprefix("./")) for r in roots]
        for root_id, rel in hits:
            docs = self.es.documents_at_path(root_id, rel)
            if not docs:
                continue
            if line is not None:
                for d in docs:
                    spans = [u for u in self.es.unit_spans(d.id)
                             if u.line_start <= line <= u.line_end]
                    if spans:
                        u = max(spans, key=lambda x: x.line_start)
                        return NodeRef((u.id,), u.title or d.title, d.id, rel)
            if len(docs) == 1:
                return NodeRef(docs[0].unit_ids, docs[0].title or rel, docs[0].id, rel)
            ids = tuple(i for d in docs for i in d.unit_ids)
            return NodeRef(ids, rel, None, rel)
        return None

    # --- queries ----------------------------------------------------------------------
    def _node_dicts(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        return {k: node_dict(n) for k, n in self.es.nodes(ids).items()}

    def neighbors(
        self,
        ref: str,
        *,
        hops: int = 1,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
        direction: str = "both",
        limit: int | None = 500,
    ) -> dict[str, Any]:
        """Nodes within ``hops`` of ``ref``: ``{"node", "neighbors": [{"node": {...},
        "hop", "via": step}]}``.

        Raises:
            NotFound: ``ref`` names nothing. QueryError: bad hops or direction.
        """
        node = self.resolve(ref)
        found = tv.neighbors(self.es, node.ids, hops=hops, relations=relations,
                             origins=origins, direction=direction, limit=limit)
        info = self._node_dicts(n.node for n in found)
        return {
            "node": self._ref_dict(node),
            "neighbors": [
                {"node": info.get(n.node, {"id": n.node}), "hop": n.hop, "via": n.via.as_dict()}
                for n in found
            ],
        }

    def backlinks(self, ref: str, *, include_internal: bool = False) -> dict[str, Any]:
        """Declared edges into ``ref``: ``{"node", "count", "sources", "backlinks": [{"source":
        {...}, "target": {...}, "relations", "count", "lines", "edge_ids"}]}``; ``count`` is
        link occurrences, ``sources`` distinct source documents, ``lines`` the lines of
        the link occurrences; the source node's ``line`` is that of its first link to
        the target (the unit's first line when the edge comes from metadata).

        Raises:
            NotFound: ``ref`` names nothing.
        """
        node = self.resolve(ref)
        bl = tv.backlinks(self.es, node.ids, include_internal=include_internal)
        info = self._node_dicts([x for b in bl for x in (b.source, b.target)])
        items: list[dict[str, Any]] = []
        for b in bl:
            source = dict(info.get(b.source, {"id": b.source}))
            if b.lines:
                source["line"] = b.lines[0]
            items.append({"source": source, "target": info.get(b.target, {"id": b.target}),
                          "relations": list(b.relations), "count": b.count,
                          "lines": list(b.lines), "edge_ids": list(b.edge_ids)})
        docs = {i["source"].get("document_id") for i in items}
        return {"node": self._ref_dict(node), "count": sum(b.count for b in bl),
                "sources": len(docs), "backlinks": items}

    def path(
        self,
        a: str,
        b: str,
        *,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
        direction: str = "both",
        max_hops: int = 12,
    ) -> dict[str, Any]:
        """A shortest path between two references: ``{"from", "to", "length", "steps":
        [step with "from_node"/"to_node"]}``; ``length`` is ``None`` when none exists."""
        na, nb = self.resolve(a), self.resolve(b)
        steps = tv.shortest_path(self.es, na.ids, nb.ids, relations=relations,
                                 origins=origins, direction=direction, max_hops=max_hops)
        info = self._node_dicts([x for s in steps or [] for x in (s.frm, s.to)])
        return {
            "from": self._ref_dict(na),
            "to": self._ref_dict(nb),
            "length": None if steps is None else len(steps),
            "steps": [
                {**s.as_dict(), "from_node": info.get(s.frm, {"id": s.frm}),
                 "to_node": info.get(s.to, {"id": s.to})}
                for s in steps or []
            ],
        }

    def subgraph(
        self,
        ref: str,
        *,
        hops: int = 1,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """The nodes within ``hops`` of ``ref`` and the edges among them:
        ``{"nodes": [...], "edges": [...]}`` (edge dicts as in exports)."""
        node = self.resolve(ref)
        nodes, edge_ids = tv.subgraph(self.es, node.ids, hops=hops, relations=relations,
                                      origins=origins)
        return tv.graph_data(self.es, nodes, edge_ids)

    def orphans(self) -> list[dict[str, Any]]:
        """Documents with no resolved declared link in or out, one entry per document
        (each conversation of a chat export is one): ``[{"document_id", "title", "path",
        "abs_path", "format", "unresolved_links"}]`` by root, path and id (see
        :func:`cairn.graph.traverse.orphans`)."""
        return [
            {"document_id": o.document_id, "title": o.title, "path": o.path,
             "abs_path": o.abs_path, "format": o.format,
             "unresolved_links": o.unresolved_links}
            for o in tv.orphans(self.es)
        ]

    def stats(self, *, origins: Sequence[str] | None = None) -> dict[str, Any]:
        """Graph statistics (see :func:`cairn.graph.traverse.stats`)."""
        return tv.stats(self.es, origins=origins)

    def export(
        self,
        fmt: str,
        *,
        around: str | None = None,
        hops: int = 1,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
    ) -> str:
        """The graph (or the subgraph around ``around``) as text in ``fmt``: ``json``
        (node-link, NetworkX), ``graphml`` or ``cytoscape`` (see
        :mod:`cairn.export.graph`).

        Raises:
            QueryError: unknown format, or no renderer. NotFound: ``around`` matches
                nothing.
        """
        if around is not None:
            node = self.resolve(around)
            nodes, edge_ids = tv.subgraph(self.es, node.ids, hops=hops, relations=relations,
                                          origins=origins)
            data = tv.graph_data(self.es, nodes, edge_ids)
        else:
            data = tv.graph_data(self.es, None, None, relations=relations, origins=origins)
        if self.renderer is None:
            raise QueryError("graph export needs GraphService(..., renderer="
                             "cairn.export.graph.render)")
        try:
            return self.renderer(data, fmt)
        except ValueError as exc:
            raise QueryError(str(exc)) from None

    def expand(
        self, hits: Sequence[tuple[str, float]], config: ExpandConfig | None = None
    ) -> list[ExpandedHit]:
        """Graph expansion of ranked hits (see :func:`cairn.graph.expand.expand`)."""
        return expand(self.es, hits, config or self.expand_config)

    def proximity(
        self,
        hits: Sequence[tuple[str, float]],
        config: ExpandConfig | None = None,
        *,
        allow_negative: bool = False,
    ) -> dict[str, float]:
        """``unit id -> graph proximity`` for the linear blend (see
        :func:`cairn.graph.expand.proximity`)."""
        return proximity(self.expand(hits, config), allow_negative=allow_negative)

    def explain(self, hit: ExpandedHit) -> dict[str, Any]:
        """The edges that brought ``hit`` in (see :func:`cairn.graph.expand.explain`)."""
        return explain(self.es, hit)

    def _ref_dict(self, node: NodeRef) -> dict[str, Any]:
        return {"ids": list(node.ids), "label": node.label, "document_id": node.document_id,
                "path": node.path}
