"""``GraphService``: the knowledge graph as the interfaces see it.

Attach it to :class:`cairn.app.Cairn` and call :meth:`GraphService.update` after each
index run::

    self.graph = GraphService(self.store)           # in Cairn.__init__
    run = indexer.run(roots, progress)              # in Cairn.index
    self.graph.update(run_id=run.id)

``update`` finds the documents that changed since the last update by itself (content
hashes kept in ``graph_docs``), so it needs no list from the pipeline. Every query takes
a node reference: a unit id, a document id, a stub id, a unique id prefix, or a file
path — absolute, relative to the current folder, or relative to a source root —
optionally ``PATH:LINE`` for the unit at that line. A file or document stands for all
its units.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cairn.errors import NotFound
from cairn.graph import edges as eb
from cairn.graph import traverse as tv
from cairn.graph.expand import (
    ExpandConfig,
    ExpandedHit,
    expand,
    expand_rowids,
    explain,
    proximity,
)
from cairn.store.sqlite import SQLiteStore
from cairn.store.sqlite.edges import EdgeRow, EdgeStore


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


def _root_types(store: SQLiteStore) -> Any:
    """Note types from a ``types.yaml`` at the top of a source root (the first one that
    reads; ``None`` when there is none or it is malformed)."""
    from cairn.errors import ConfigError
    from cairn.formats.types import load_types

    for root in store.roots():
        p = Path(root.path) / "types.yaml"
        if p.is_file():
            try:
                return load_types(p)
            except ConfigError:
                continue
    return None


class _CatalogOnce:
    """The link-resolution catalog of the store, built on first call and kept."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        self.cat: Any = None

    def __call__(self) -> Any:
        if self.cat is None:
            from cairn.graph.resolve import Catalog

            docs, units = self.store.catalog_rows()
            self.cat = Catalog.build(docs, units, self.store.attachments())
        return self.cat


class GraphService:
    """Build, update and query the typed graph of one store.

    Args:
        store: the open :class:`SQLiteStore`; the ``graph`` tables are created here.
        types: note types (a ``TypeRegistry`` or a mapping, see
            :func:`cairn.graph.edges.type_rules`); by default ``types.yaml`` at the top
            of a source root, if any, read again at each :meth:`update`.
        relation_keys / implicit_keys / max_feature_units: see
            :class:`cairn.graph.edges.BuildConfig`.
        expand_config: defaults for :meth:`expand`.
        renderer: ``render(graph_data, fmt) -> str`` for :meth:`export`; pass
            :func:`cairn.export.graph.render` (the graph layer may not import export).
    """

    def __init__(
        self,
        store: SQLiteStore,
        *,
        types: Any = None,
        relation_keys: Mapping[str, str] | None = None,
        implicit_keys: Sequence[str] | None = None,
        max_feature_units: int = 100,
        expand_config: ExpandConfig | None = None,
        renderer: Callable[[dict[str, Any], str], str] | None = None,
    ) -> None:
        self.renderer = renderer
        self.store = store
        self.es = EdgeStore(store)
        self._types_given = types is not None
        rules = eb.type_rules(types if types is not None else _root_types(store))
        self.config = eb.BuildConfig(
            relation_keys=dict(relation_keys or eb.DEFAULT_RELATION_KEYS),
            implicit_keys=tuple(implicit_keys or eb.DEFAULT_IMPLICIT_KEYS),
            max_feature_units=max_feature_units,
            types=rules,
        )
        self.expand_config = expand_config or ExpandConfig()

    def set_types(self, types: Any) -> None:
        """Use these note types (a ``TypeRegistry`` or mapping) for rule edges and type
        relations from now on (the composition root loads them once per run). Types given
        to the constructor win: an injected service keeps its settings."""
        if self._types_given:
            return
        self._types_set = True
        self.config = dataclasses.replace(self.config, types=eb.type_rules(types))

    # --- building ---------------------------------------------------------------------
    def is_stale(self) -> bool:
        """Whether documents changed since the last update."""
        changed, removed = self.es.changed_documents()
        return bool(changed or removed)

    def update(
        self, document_ids: Iterable[str] | None = None, *, run_id: str | None = None
    ) -> UpdateReport:
        """Bring the graph up to date after an index run.

        Args:
            document_ids: documents known to have changed (added to those found by
                comparing content hashes; normally leave ``None``).
            run_id: recorded on the edges written.

        Declared and rule edges are recomputed from the whole ``links`` table and
        written as a diff (link resolution may change anywhere when one note is added);
        structural and implicit edges only for the changed documents (and the units that
        share a tag or property value with them). Runs in one transaction (the caller's,
        when one is open).
        """
        t0 = time.perf_counter()
        if not self._types_given and not getattr(self, "_types_set", False):
            self.config = dataclasses.replace(
                self.config, types=eb.type_rules(_root_types(self.store)))
        changed, removed = self.es.changed_documents()
        if document_ids:
            live = {r[0] for r in self.es.db.execute("SELECT id FROM documents")}
            changed = list(dict.fromkeys([*changed, *(d for d in document_ids if d in live)]))
        written: dict[str, int] = {}
        deleted: dict[str, int] = {}
        with self._transaction():
            cat = _CatalogOnce(self.store)
            self._sync_full(eb.DECLARED, eb.build_declared(self.es.db, self.config, cat),
                            written, deleted, run_id)
            self._sync_full(eb.RULE, eb.build_rules(self.es.db, self.config, cat),
                            written, deleted, run_id)
            if changed or removed:
                self.es.delete_origin_for_documents(eb.STRUCTURAL, changed)
                written[eb.STRUCTURAL] = self.es.insert(
                    eb.build_structural(self.es.db, changed), run_id)
                written[eb.IMPLICIT] = self._update_implicit(changed, removed, run_id)
                hashes = self.es.db.execute(
                    "SELECT id, content_hash FROM documents WHERE id IN "
                    f"({','.join('?' * len(changed))})" if changed else "SELECT 1, 1 WHERE 0",
                    changed,
                ).fetchall()
                self.es.forget_docs(removed)
                self.es.set_doc_hashes((r[0], r[1]) for r in hashes)
            self.es.prune_stubs()
        n_edges = int(self.es.db.execute("SELECT count(*) FROM edges").fetchone()[0])
        n_stubs = int(self.es.db.execute("SELECT count(*) FROM graph_stubs").fetchone()[0])
        return UpdateReport(len(changed), len(removed), written, deleted, n_edges, n_stubs,
                            round(time.perf_counter() - t0, 4))

    def rebuild(self, *, run_id: str | None = None) -> UpdateReport:
        """Drop every edge and build the graph from scratch."""
        with self._transaction():
            self.es.clear()
        return self.update(run_id=run_id)

    def _transaction(self) -> AbstractContextManager[None]:
        """The store's write transaction, or nothing when the caller already holds one."""
        if self.store.db.in_transaction:
            return nullcontext()
        return self.store.transaction()

    def _sync_full(
        self,
        origin: str,
        built: eb.EdgeSet,
        written: dict[str, int],
        deleted: dict[str, int],
        run_id: str | None,
    ) -> None:
        """Write the difference between ``built`` and the stored edges of ``origin``."""
        self.es.upsert_stubs(built.stubs.values())
        old = self.es.edges_of_origin(origin)
        gone = [eid for eid in old if eid not in built.edges]
        fresh: list[EdgeRow] = []
        for e in built:
            o = old.get(e.id)
            ev = json.dumps(e.evidence[:50], ensure_ascii=False, default=str)
            if o is None or (o[3], o[4], o[5], o[6]) != (e.weight, e.count, e.links, ev):
                fresh.append(e)
        self.es.delete_ids(gone)
        written[origin] = self.es.insert(fresh, run_id)
        deleted[origin] = len(gone)

    def _update_implicit(
        self, changed: Sequence[str], removed: Sequence[str], run_id: str | None
    ) -> int:
        es = self.es
        old_feats = es.features_of([*changed, *removed])
        es.forget_docs([*changed, *removed])
        rows = eb.unit_features(es.db, changed, self.config.implicit_keys)
        es.set_features(rows)
        affected_feats = old_feats | {f for _d, _u, f in rows}
        changed_units = {u for _d, u, _f in rows}
        for did in changed:  # units of changed documents lose old implicit edges too
            changed_units.update(r[0] for r in es.db.execute(
                "SELECT id FROM units WHERE document_id=?", (did,)))
        holders = es.holders(sorted(affected_feats))
        affected = set(changed_units)
        for hs in holders.values():
            affected.update(u for u, _d in hs)
        if not affected:
            return 0
        for rel in (eb.SHARES_TAG, eb.SHARES_PROPERTY):
            es.delete_implicit_touching(sorted(affected), rel)
        feats = es.unit_features(sorted(affected))
        all_feats = sorted({f for fs in feats.values() for f in fs})
        counts = es.feature_counts(all_feats)
        small = [f for f in all_feats if counts.get(f, 0) <= self.config.max_feature_units]
        holders = es.holders(small)
        partners = {u for hs in holders.values() for u, _d in hs}
        feats.update(es.unit_features(sorted(partners - set(feats))))
        unit_doc = {u: d for hs in holders.values() for u, d in hs}
        built = eb.implicit_edges(sorted(affected), feats, holders, counts, unit_doc,
                                  self.config.max_feature_units)
        return es.insert(built, run_id)

    # --- references -------------------------------------------------------------------
    def resolve(self, ref: str) -> NodeRef:
        """The node(s) a reference names (see the module docstring).

        Raises:
            NotFound: nothing matches, or an id prefix is ambiguous.
        """
        db = self.es.db
        ref = ref.strip()
        u = db.execute(
            "SELECT u.id, u.title, u.document_id, d.path FROM units u "
            "JOIN documents d ON d.id = u.document_id WHERE u.id=?", (ref,)).fetchone()
        if u:
            return NodeRef((u[0],), u[1] or u[3], u[2], u[3])
        s = db.execute("SELECT id, label FROM graph_stubs WHERE id=?", (ref,)).fetchone()
        if s:
            return NodeRef((s[0],), s[1])
        d = db.execute("SELECT id, path, title FROM documents WHERE id=?", (ref,)).fetchone()
        if d:
            return self._doc_ref(d[0], d[1], d[2])
        loc = self._locate(ref)
        if loc is not None:
            return loc
        if len(ref) >= 4:
            like = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            hits = [r[0] for r in db.execute(
                "SELECT id FROM units WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (like,))]
            hits += [r[0] for r in db.execute(
                "SELECT id FROM documents WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (like,))]
            if len(hits) == 1:
                return self.resolve(hits[0])
            if len(hits) > 1:
                raise NotFound(f"{ref}: ambiguous id prefix")
        raise NotFound(f"{ref}: no unit, document, stub or indexed file matches")

    def _doc_ref(self, doc_id: str, path: str, title: str) -> NodeRef:
        ids = tuple(r[0] for r in self.es.db.execute(
            "SELECT id FROM units WHERE document_id=? ORDER BY ordinal", (doc_id,)))
        return NodeRef(ids, title or path, doc_id, path)

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
            docs = self.store.documents_at(root_id, rel)
            if not docs:
                continue
            if line is not None:
                for d in docs:
                    units = [u for u in self.store.units_of(d.id)
                             if u.line_start <= line <= u.line_end]
                    if units:
                        u = max(units, key=lambda x: x.line_start)
                        return NodeRef((u.id,), u.title or d.title, d.id, rel)
            if len(docs) == 1:
                return self._doc_ref(docs[0].id, rel, docs[0].title)
            ids = tuple(i for d in docs for i in self._doc_ref(d.id, rel, d.title).ids)
            return NodeRef(ids, rel, None, rel)
        return None

    # --- queries ----------------------------------------------------------------------
    def _node_dicts(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        return self.es.node_rows(list(ids))

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
        "hop", "via": step}]}``. Raises NotFound / ValueError (bad hops, direction)."""
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
        {...}, "target": {...}, "relations", "count"}]}``; ``count`` is link occurrences,
        ``sources`` distinct source documents."""
        node = self.resolve(ref)
        bl = tv.backlinks(self.es, node.ids, include_internal=include_internal)
        info = self._node_dicts([x for b in bl for x in (b.source, b.target)])
        items: list[dict[str, Any]] = [
            {"source": info.get(b.source, {"id": b.source}),
             "target": info.get(b.target, {"id": b.target}),
             "relations": list(b.relations), "count": b.count, "edge_ids": list(b.edge_ids)}
            for b in bl
        ]
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
        """Documents with no resolved declared link in or out (see
        :func:`cairn.graph.traverse.orphans`)."""
        return tv.orphans(self.es)

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
            ValueError: unknown format. NotFound: ``around`` matches nothing.
        """
        if around is not None:
            node = self.resolve(around)
            nodes, edge_ids = tv.subgraph(self.es, node.ids, hops=hops, relations=relations,
                                          origins=origins)
            data = tv.graph_data(self.es, nodes, edge_ids)
        else:
            data = tv.graph_data(self.es, None, None, relations=relations, origins=origins)
        if self.renderer is None:
            raise ValueError("graph export needs GraphService(..., renderer="
                             "cairn.export.graph.render)")
        return self.renderer(data, fmt)

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

    def expand_rowids(
        self, hits: Sequence[tuple[int, float]], config: ExpandConfig | None = None
    ) -> list[tuple[int, ExpandedHit]]:
        """:meth:`expand` for hits keyed by ``units.rowid`` (as the search layer keys
        them): ``[(rowid, expanded hit)]`` best first."""
        return expand_rowids(self.es, hits, config or self.expand_config)

    def proximity_rowids(
        self,
        hits: Sequence[tuple[int, float]],
        config: ExpandConfig | None = None,
        *,
        allow_negative: bool = False,
    ) -> dict[int, float]:
        """``rowid -> graph proximity`` for ``Signals(graph=…)`` of the linear blend."""
        pairs = self.expand_rowids(hits, config)
        prox = proximity([h for _r, h in pairs], allow_negative=allow_negative)
        return {r: prox[h.unit_id] for r, h in pairs if h.unit_id in prox}

    def explain(self, hit: ExpandedHit) -> dict[str, Any]:
        """The edges that brought ``hit`` in (see :func:`cairn.graph.expand.explain`)."""
        return explain(self.es, hit)

    def _ref_dict(self, node: NodeRef) -> dict[str, Any]:
        return {"ids": list(node.ids), "label": node.label, "document_id": node.document_id,
                "path": node.path}
