"""The graph part of :class:`cairn.app.Cairn`: thin calls into the graph service."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from cairn.app.parts import Parts
from cairn.errors import CairnError, QueryError

if TYPE_CHECKING:
    from cairn.graph.service import GraphService


class GraphMixin(Parts):
    """Neighbours, backlinks, paths, orphans, statistics and export."""

    def _fresh_graph(self) -> GraphService:
        """The graph service, brought up to date first if the index changed — one
        refresh at a time, and none while a door's index run (:meth:`indexing`) writes:
        that run brings the graph up to date when it ends.

        The check itself (a join of every document against the graph's built state)
        is skipped while the store's :meth:`~cairn.store.Store.change_token` says
        nothing was written since this thread last found the graph fresh."""
        if self._index_running:
            return self.graph
        graph = self.graph
        seen = (self.store.change_token(), graph, graph.config)
        fresh_at: dict[int, tuple[Any, ...]] = self.__dict__.setdefault("_graph_fresh_at", {})
        key = threading.get_ident()
        last = fresh_at.get(key)
        if (seen[0] is not None and last is not None and seen[0] == last[0]
                and seen[1] is last[1] and seen[2] is last[2]):
            return graph  # nothing was written since this thread found it fresh
        if graph.is_stale():
            with self._graph_refresh:
                if not self._index_running and graph.is_stale():
                    graph.update()
            return graph
        fresh_at[key] = seen
        return graph

    def neighbors(
        self,
        node: str,
        *,
        hops: int = 1,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
        direction: str = "both",
        limit: int | None = 500,
    ) -> dict[str, Any]:
        """Nodes within ``hops`` of ``node`` (see :meth:`GraphService.neighbors`).

        ``node`` is a unit, document or stub id, a unique id prefix, or ``PATH[:LINE]``;
        ``direction`` is ``out``, ``in`` or ``both``.

        Raises:
            NotFound: no such node. QueryError: bad ``hops`` or ``direction``.
        """
        with _query_errors():
            return self._fresh_graph().neighbors(
                node,
                hops=hops,
                relations=relations,
                origins=origins,
                direction=direction,
                limit=limit,
            )

    def backlinks_of(self, node: str, *, include_internal: bool = False) -> dict[str, Any]:
        """Declared edges into ``node`` (see :meth:`GraphService.backlinks`): ``{"node",
        "count", "sources", "backlinks"}``.

        Raises:
            NotFound: no such node.
        """
        with _query_errors():
            return self._fresh_graph().backlinks(node, include_internal=include_internal)

    def graph_path(
        self,
        source: str,
        target: str,
        *,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
        direction: str = "both",
        max_hops: int = 12,
    ) -> dict[str, Any]:
        """A shortest path between two nodes (see :meth:`GraphService.path`);
        ``length`` is ``None`` when there is none within ``max_hops``.

        Raises:
            NotFound: no such node. QueryError: bad arguments.
        """
        with _query_errors():
            return self._fresh_graph().path(
                source,
                target,
                relations=relations,
                origins=origins,
                direction=direction,
                max_hops=max_hops,
            )

    def orphans(self) -> list[dict[str, Any]]:
        """Notes with no link in or out (see :meth:`GraphService.orphans`)."""
        with _query_errors():
            return list(self._fresh_graph().orphans())

    def graph_stats(self, *, origins: Sequence[str] | None = None) -> dict[str, Any]:
        """Nodes, edges per relation and origin, degrees, components (see
        :meth:`GraphService.stats`)."""
        with _query_errors():
            return self._fresh_graph().stats(origins=origins)

    def export_graph(
        self,
        fmt: str = "json",
        *,
        around: str | None = None,
        hops: int = 1,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
    ) -> str:
        """The graph (or the subgraph ``hops`` around a node) as text: ``json``
        (node-link), ``graphml`` or ``cytoscape``.

        Raises:
            QueryError: unknown format. NotFound: ``around`` names no node.
        """
        with _query_errors():
            return self._fresh_graph().export(
                fmt, around=around, hops=hops, relations=relations, origins=origins
            )


@contextmanager
def _query_errors() -> Iterator[None]:
    """Bad arguments surface as :class:`QueryError`, never a bare ``ValueError``."""
    try:
        yield
    except CairnError:
        raise
    except ValueError as exc:
        raise QueryError(str(exc)) from exc
