"""``cairn.graph``: the graph as the doors ask it — neighbours, backlinks, paths,
orphans, statistics and export — each over a graph brought up to date first
(:class:`GraphQueries`), with bad arguments as :class:`~cairn.errors.QueryError`; the
results are the typed values of :mod:`cairn.model.graph_results`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from cairn.errors import CairnError, QueryError

if TYPE_CHECKING:
    from cairn.graph.service import GraphService, UpdateReport
    from cairn.model import OrphanDocument
    from cairn.model.graph_results import (
        Backlinks,
        GraphPath,
        GraphStats,
        Neighbors,
        NodeLinkGraph,
        NodeRef,
    )
    from cairn.store import Store


class GraphQueries:
    """The graph of one index, fresh on every read.

    Args:
        store: the index (its change token says when nothing was written).
        service: gives the graph service (built on first use).
        busy: whether a door's index run is writing (a read then does not refresh:
            that run brings the graph up to date when it ends).
        refresh_lock: serialises refreshes triggered by reads (a refresh writes).
    """

    def __init__(self, store: Store, service: Callable[[], GraphService],
                 busy: Callable[[], bool], refresh_lock: threading.Lock) -> None:
        self._store = store
        self._service = service
        self._busy = busy
        self._refresh = refresh_lock
        self._fresh_at: dict[int, tuple[Any, ...]] = {}

    @property
    def service(self) -> GraphService:
        """The graph service itself (no refresh)."""
        return self._service()

    def fresh(self) -> GraphService:
        """The graph service, brought up to date first if the index changed — one
        refresh at a time, and none while a door's index run writes.

        The check itself (a join of every document against the graph's built state)
        is skipped while the store's :meth:`~cairn.store.Store.change_token` says
        nothing was written since this thread last found the graph fresh."""
        graph = self._service()
        if self._busy():
            return graph
        seen = (self._store.change_token(), graph, graph.config)
        key = threading.get_ident()
        last = self._fresh_at.get(key)
        if (seen[0] is not None and last is not None and seen[0] == last[0]
                and seen[1] is last[1] and seen[2] is last[2]):
            return graph  # nothing was written since this thread found it fresh
        if graph.is_stale():
            with self._refresh:
                if not self._busy() and graph.is_stale():
                    graph.update()
            return graph
        self._fresh_at[key] = seen
        return graph

    def update(self) -> UpdateReport:
        """Bring the graph up to date now (see :meth:`GraphService.update`)."""
        return self._service().update()

    def rebuild(self) -> UpdateReport:
        """Rebuild every edge (see :meth:`GraphService.rebuild`)."""
        return self._service().rebuild()

    def resolve(self, ref: str) -> NodeRef:
        """The node ``ref`` names (see :meth:`GraphService.resolve`).

        Raises:
            NotFound: ``ref`` names nothing.
        """
        return self._service().resolve(ref)

    def neighbors(
        self,
        node: str,
        *,
        hops: int = 1,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
        direction: str = "both",
        limit: int | None = 500,
    ) -> Neighbors:
        """Nodes within ``hops`` of ``node`` (see :meth:`GraphService.neighbors`).

        ``node`` is a unit, document or stub id, a unique id prefix, or ``PATH[:LINE]``;
        ``direction`` is ``out``, ``in`` or ``both``.

        Raises:
            NotFound: no such node. QueryError: bad ``hops`` or ``direction``.
        """
        with _query_errors():
            return self.fresh().neighbors(node, hops=hops, relations=relations,
                                          origins=origins, direction=direction, limit=limit)

    def backlinks(self, node: str, *, include_internal: bool = False) -> Backlinks:
        """Declared edges into ``node`` (see :meth:`GraphService.backlinks`), one
        :class:`~cairn.model.graph_results.InboundLink` per linking unit. The one
        backlinks API (a document's view, :attr:`cairn.model.DocumentView.backlinks`, lists the same
        links by line).

        Raises:
            NotFound: no such node.
        """
        with _query_errors():
            return self.fresh().backlinks(node, include_internal=include_internal)

    def path(
        self,
        source: str,
        target: str,
        *,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
        direction: str = "both",
        max_hops: int = 12,
    ) -> GraphPath:
        """A shortest path between two nodes (see :meth:`GraphService.path`);
        ``length`` is ``None`` when there is none within ``max_hops``.

        Raises:
            NotFound: no such node. QueryError: bad arguments.
        """
        with _query_errors():
            return self.fresh().path(source, target, relations=relations, origins=origins,
                                     direction=direction, max_hops=max_hops)

    def orphans(self) -> list[OrphanDocument]:
        """Notes with no link in or out (see :meth:`GraphService.orphans`)."""
        with _query_errors():
            return list(self.fresh().orphans())

    def stats(self, *, origins: Sequence[str] | None = None) -> GraphStats:
        """Nodes, edges per relation and origin, degrees, components (see
        :meth:`GraphService.stats`)."""
        with _query_errors():
            return self.fresh().stats(origins=origins)

    def subgraph(
        self,
        around: str,
        *,
        hops: int = 1,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
    ) -> NodeLinkGraph:
        """The subgraph ``hops`` around a node (see :meth:`GraphService.subgraph`);
        its JSON is ``export("json", around=...)``'s.

        Raises:
            NotFound: ``around`` names no node. QueryError: bad arguments.
        """
        with _query_errors():
            return self.fresh().subgraph(around, hops=hops, relations=relations,
                                         origins=origins)

    def export(
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
            return self.fresh().export(fmt, around=around, hops=hops, relations=relations,
                                       origins=origins)


@contextmanager
def _query_errors() -> Iterator[None]:
    """Bad arguments surface as :class:`QueryError`, never a bare ``ValueError``."""
    try:
        yield
    except CairnError:
        raise
    except ValueError as exc:
        raise QueryError(str(exc)) from exc
