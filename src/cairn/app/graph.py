"""The graph part of :class:`cairn.app.Cairn`: thin calls into the graph service."""

from __future__ import annotations

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
        that run brings the graph up to date when it ends."""
        if self._index_running or not self.graph.is_stale():
            return self.graph
        with self._graph_refresh:
            if not self._index_running and self.graph.is_stale():
                self.graph.update()
        return self.graph

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
