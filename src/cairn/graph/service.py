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
document stands for all its units. Results are the typed values of
:mod:`cairn.model.graph_results`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cairn.errors import NotFound, QueryError
from cairn.graph import edges as eb
from cairn.graph import traverse as tv
from cairn.graph.build import GraphBuilder
from cairn.graph.build import UpdateReport as UpdateReport
from cairn.graph.expand import (
    ExpandConfig,
    ExpandedHit,
    expand,
    explain,
    proximity,
)
from cairn.graph.resolve import DOCUMENT_CHUNK
from cairn.model import GraphNode, OrphanDocument
from cairn.model.graph_results import (
    Backlinks,
    GraphPath,
    GraphStats,
    InboundLink,
    Neighbors,
    NodeLinkGraph,
    NodeRef,
    PathStep,
    Reached,
)
from cairn.store import Store

__all__ = ["GraphService", "NodeRef", "UpdateReport"]


class GraphService:
    """Query the typed graph of one store; ``builder`` (a :class:`GraphBuilder`) keeps
    it up to date.

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
        config = eb.BuildConfig(
            relation_keys=dict(relation_keys or eb.DEFAULT_RELATION_KEYS),
            implicit_keys=tuple(implicit_keys or eb.DEFAULT_IMPLICIT_KEYS),
            max_feature_units=max_feature_units,
            types=eb.type_rules(types),
        )
        self.builder = GraphBuilder(store, config, chunk)
        self.expand_config = expand_config or ExpandConfig()
        self._types_given = types is not None

    def set_types(self, types: Any) -> None:
        """Use these note types (a ``TypeRegistry`` or mapping) for rule edges and type
        relations from now on (the composition root loads them once per run). Types given
        to the constructor win: an injected service keeps its settings."""
        if self._types_given:
            return
        self.builder.config = dataclasses.replace(self.config, types=eb.type_rules(types))

    # --- building (GraphBuilder) -------------------------------------------------------
    @property
    def config(self) -> eb.BuildConfig:
        """The settings edges are built with (see :class:`cairn.graph.edges.BuildConfig`)."""
        return self.builder.config

    def is_stale(self) -> bool:
        """Whether documents changed, or links were resolved again, since the last update
        (or the settings differ from those the graph was built with)."""
        return self.builder.is_stale()

    def update(
        self,
        changed: Iterable[str] | None = None,
        removed: Iterable[str] | None = None,
        *,
        run_id: str | None = None,
    ) -> UpdateReport:
        """Bring the graph up to date after an index run (see :meth:`GraphBuilder.update`).

        Raises:
            cairn.errors.StoreError: the store failed.
        """
        return self.builder.update(changed, removed, run_id=run_id)

    def rebuild(self, *, run_id: str | None = None) -> UpdateReport:
        """Drop every edge and build the graph from scratch."""
        return self.builder.rebuild(run_id=run_id)

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
                    spans = [(i, u) for i, u in enumerate(self.es.unit_spans(d.id))
                             if u.line_start <= line <= u.line_end]
                    if spans:  # as `cairn show PATH:LINE`: latest start, then later unit
                        u = max(spans, key=lambda p: (p[1].line_start, p[0]))[1]
                        return NodeRef((u.id,), u.title or d.title, d.id, rel)
            if len(docs) == 1:
                return NodeRef(docs[0].unit_ids, docs[0].title or rel, docs[0].id, rel)
            ids = tuple(i for d in docs for i in d.unit_ids)
            return NodeRef(ids, rel, None, rel)
        return None

    # --- queries ----------------------------------------------------------------------
    def _shown(self, ids: Iterable[str]) -> Callable[[str], GraphNode]:
        """``shown(id)``: the node of each of ``ids`` as results show it (one lookup)."""
        info = self.es.nodes(ids)
        return lambda i: info.get(i) or GraphNode.unknown(i)

    def neighbors(
        self,
        ref: str,
        *,
        hops: int = 1,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
        direction: str = "both",
        limit: int | None = 500,
    ) -> Neighbors:
        """Nodes within ``hops`` of ``ref``, nearest first.

        Raises:
            NotFound: ``ref`` names nothing. QueryError: bad hops or direction.
        """
        node = self.resolve(ref)
        found = tv.neighbors(self.es, node.ids, hops=hops, relations=relations,
                             origins=origins, direction=direction, limit=limit)
        shown = self._shown(n.node for n in found)
        return Neighbors(node, tuple(Reached(shown(n.node), n.hop, n.via) for n in found))

    def backlinks(self, ref: str, *, include_internal: bool = False) -> Backlinks:
        """Declared edges into ``ref``, one
        :class:`~cairn.model.graph_results.InboundLink` per linking unit; ``count`` is
        link occurrences, ``sources`` distinct source documents.

        Raises:
            NotFound: ``ref`` names nothing.
        """
        node = self.resolve(ref)
        bl = tv.backlinks(self.es, node.ids, include_internal=include_internal)
        shown = self._shown([x for b in bl for x in (b.source, b.target)])
        items: list[InboundLink] = []
        for b in bl:
            source = shown(b.source)
            if b.lines:
                source = dataclasses.replace(source, line=b.lines[0])
            items.append(InboundLink(source, shown(b.target), tuple(b.relations), b.count,
                                  tuple(b.lines), tuple(b.edge_ids)))
        docs = {i.source.document_id for i in items}
        return Backlinks(node, sum(b.count for b in bl), len(docs), tuple(items))

    def path(
        self,
        a: str,
        b: str,
        *,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
        direction: str = "both",
        max_hops: int = 12,
    ) -> GraphPath:
        """A shortest path between two references; ``length`` is ``None`` when none
        exists."""
        na, nb = self.resolve(a), self.resolve(b)
        steps = tv.shortest_path(self.es, na.ids, nb.ids, relations=relations,
                                 origins=origins, direction=direction, max_hops=max_hops)
        shown = self._shown([x for s in steps or [] for x in (s.frm, s.to)])
        return GraphPath(na, nb, None if steps is None else len(steps),
                         tuple(PathStep(s, shown(s.frm), shown(s.to)) for s in steps or []))

    def subgraph(
        self,
        ref: str,
        *,
        hops: int = 1,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
    ) -> NodeLinkGraph:
        """The nodes within ``hops`` of ``ref`` and the edges among them (of
        ``relations`` / ``origins``, all by default), as export data.

        Raises:
            NotFound: ``ref`` matches nothing.
        """
        node = self.resolve(ref)
        nodes, edge_ids = tv.subgraph(self.es, node.ids, hops=hops, relations=relations,
                                      origins=origins)
        data = tv.graph_data(self.es, nodes, edge_ids)
        return NodeLinkGraph(tuple(data["nodes"]), tuple(data["edges"]))

    def orphans(self) -> list[OrphanDocument]:
        """Documents with no resolved declared link in or out, one entry per document
        (each conversation of a chat export is one), by root, path and id (see
        :func:`cairn.graph.traverse.orphans`)."""
        return list(tv.orphans(self.es))

    def stats(self, *, origins: Sequence[str] | None = None) -> GraphStats:
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
