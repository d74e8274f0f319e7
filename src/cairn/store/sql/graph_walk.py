"""The graph's edges as a walk reads them: the arcs leaving or entering a set of nodes,
and whole edges by id, by origin or all of them (see ``edges.py`` for the writes).

Declared and derived edges are rows of ``edges``; structural ones (``parent``, ``next``,
``previous`` along a document's outline) are derived from the units on demand
(:mod:`cairn.store.sql.outline`) and kept per document while the index is unchanged, so
a walk sees both kinds the same way and in one order.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from cairn import model

if TYPE_CHECKING:
    from cairn.model import Arc, Edge, EdgeOrigin
from cairn.store.sql.outline import STRUCTURAL, OutlineArc, outline_arcs, wanted


def chunks(items: Sequence[Any], n: int = 500) -> Iterator[Sequence[Any]]:
    """``items`` in slices of at most ``n`` (SQLite's bound-parameter limit)."""
    for i in range(0, len(items), n):
        yield items[i : i + n]


def loads(text: str | None, default: Any) -> Any:
    """Stored JSON text as a value: a fresh empty one of ``default``'s type for an empty
    list or mapping (no parse), ``default`` for missing or broken text."""
    if not text or text in ("{}", "[]"):
        return type(default)()
    try:
        return json.loads(text) if text else default
    except ValueError:
        return default


def _edge(r: sqlite3.Row) -> Edge:
    ev = loads(r["evidence"], [])
    return model.Edge(
        r["id"], r["source"], r["target"], r["relation"], cast("EdgeOrigin", r["origin"]),
        float(r["weight"]), r["source_document_id"], r["target_document_id"],
        int(r["count"]), int(r["links"]),
        tuple(e for e in ev if isinstance(e, dict)) if isinstance(ev, list) else (),
    )


_KNOWN_MAX = 500_000
"""How many derived edge ids a store remembers the documents of (about 100 bytes each)."""
_CACHE_MAX = 200_000
"""How many derived edges a whole-index read keeps for the next calls."""

_EDGE_COLS = ("id, source, target, relation, origin, weight, count, links, evidence, "
              "source_document_id, target_document_id")


class GraphWalkMixin:
    """The arcs and edges a walk reads; ``db`` is the store's connection."""

    @property
    def db(self) -> sqlite3.Connection:
        """The store's connection."""
        raise NotImplementedError

    def out_arcs(self, nodes: Sequence[str], relations: Sequence[str] | None = None) -> list[Arc]:
        """The arcs (edge ids, ends, relation, origin, weight) leaving ``nodes``."""
        return self._adjacent("source", nodes, relations)

    def in_arcs(self, nodes: Sequence[str], relations: Sequence[str] | None = None) -> list[Arc]:
        """The arcs entering ``nodes``."""
        return self._adjacent("target", nodes, relations)

    def _adjacent(
        self, column: str, nodes: Sequence[str], relations: Sequence[str] | None
    ) -> list[Arc]:
        out: list[Arc] = []
        rel_sql = ""
        rel_args: list[str] = []
        if relations:
            rel_sql = f" AND relation IN ({','.join('?' * len(relations))})"
            rel_args = list(relations)
        for part in chunks(list(nodes), 900 - len(rel_args)):
            q = ",".join("?" * len(part))
            out.extend(
                model.Arc(*r) for r in self.db.execute(
                    f"SELECT id, source, target, relation, origin, weight FROM edges "
                    f"WHERE {column} IN ({q}){rel_sql}",
                    [*part, *rel_args],
                )
            )
        rels = wanted(relations)
        if rels:
            ends = set(nodes)
            docs = self._documents_of(nodes)
            out.extend(
                a.arc() for a in self._outline(docs, rels)
                if (a.source if column == "source" else a.target) in ends
            )
        # one order whichever table an arc came from: by the end asked about, relation,
        # origin and the other end (what the walks' "first step that reached a node" is
        # defined by)
        if column == "source":
            out.sort(key=lambda a: (a.source, a.relation, a.origin, a.target))
        else:
            out.sort(key=lambda a: (a.target, a.relation, a.origin, a.source))
        return out

    def _documents_of(self, nodes: Iterable[str]) -> list[str]:
        """The documents holding the units among ``nodes`` (stubs left out), sorted."""
        ids = [n for n in dict.fromkeys(nodes) if not n.startswith("stub:")]
        out: set[str] = set()
        for part in chunks(ids):
            q = ",".join("?" * len(part))
            out.update(r[0] for r in self.db.execute(
                f"SELECT DISTINCT document_id FROM units WHERE id IN ({q})", list(part)))
        return sorted(out)

    def _outline(
        self, document_ids: Sequence[str] | None, relations: Iterable[str]
    ) -> Iterator[OutlineArc]:
        """The structural edges of documents (``None``: all), derived from the units
        (see :mod:`cairn.store.sql.outline`); a document's are kept while the index
        is unchanged (:meth:`_outline_cache`)."""
        rels = set(relations)
        if not rels:
            return
        cache = self._outline_cache()
        known = self._outline_known()
        if document_ids is None:
            by_doc: dict[str, list[OutlineArc]] = {}
            n = 0
            for a in outline_arcs(self.db, None):
                by_doc.setdefault(a.document_id, []).append(a)
                known[a.id] = a.document_id
                n += 1
                if a.relation in rels:
                    yield a
            if n < _CACHE_MAX:
                cache.update(by_doc)
            return
        todo = [d for d in dict.fromkeys(document_ids) if d not in cache]
        for part in chunks(todo):
            fresh: dict[str, list[OutlineArc]] = {d: [] for d in part}
            for a in outline_arcs(self.db, part):
                fresh[a.document_id].append(a)
                known[a.id] = a.document_id
            cache.update(fresh)
        for d in document_ids:
            yield from (a for a in cache.get(d, ()) if a.relation in rels)

    def _outline_cache(self) -> dict[str, list[OutlineArc]]:
        """``document id -> its derived structural edges``, valid while this thread's
        connection sees the index unchanged (SQLite's ``data_version`` and the
        connection's own change count); a fresh, empty one otherwise (and always on a
        backend without those counters)."""
        db = self.db
        stamp: tuple[int, int, int] | None = None
        if isinstance(db, sqlite3.Connection):
            stamp = (id(db), int(db.execute("PRAGMA data_version").fetchone()[0]),
                     db.total_changes)
        held: tuple[tuple[int, int, int] | None, dict[str, list[OutlineArc]]] | None = (
            getattr(self, "_outline_held", None))
        if stamp is None or held is None or held[0] != stamp:
            held = (stamp, {})
            self._outline_held = held
        return held[1]

    def _outline_known(self) -> dict[str, str]:
        """``structural edge id -> document id`` of the derived edges met so far (an id
        stands for one (source, target, relation) for ever; at most :data:`_KNOWN_MAX`
        are kept, then it starts again)."""
        known: dict[str, str] | None = getattr(self, "_known_outline", None)
        if known is None or len(known) > _KNOWN_MAX:
            known = {}
            self._known_outline = known
        return known

    def edges_by_ids(self, ids: Sequence[str]) -> dict[str, Edge]:
        """Full edges by id (missing ids left out)."""
        out: dict[str, Edge] = {}
        for part in chunks(list(dict.fromkeys(ids))):
            q = ",".join("?" * len(part))
            for r in self.db.execute(f"SELECT {_EDGE_COLS} FROM edges WHERE id IN ({q})",
                                     list(part)):
                out[r["id"]] = _edge(r)
        missing = {i for i in ids if i not in out}
        if missing:
            # structural edges are derived: an id met before names its document (an id
            # stands for one (source, target, relation) for ever), so only that
            # document's outline is derived again; an id never met, every document's
            known = self._outline_known()
            docs = {known.get(i) for i in missing}
            scope = None if None in docs else sorted(d for d in docs if d)
            for a in self._outline(scope, wanted(None)):
                eid = a.id
                if eid in missing:
                    out[eid] = a.edge()
        return out

    def all_edges(
        self, *, relations: Sequence[str] | None = None, origins: Sequence[str] | None = None
    ) -> list[Edge]:
        """Every edge passing the filters (``None``: all), by id."""
        where: list[str] = []
        args: list[str] = []
        if relations:
            where.append(f"relation IN ({','.join('?' * len(relations))})")
            args += list(relations)
        if origins:
            where.append(f"origin IN ({','.join('?' * len(origins))})")
            args += list(origins)
        sql = f"SELECT {_EDGE_COLS} FROM edges" + (" WHERE " + " AND ".join(where)
                                                   if where else "")
        out = [_edge(r) for r in self.db.execute(sql + " ORDER BY id", args)]
        rels = wanted(relations or None, origins or None)
        if rels:
            out.extend(a.edge() for a in self._outline(None, rels))
            out.sort(key=lambda e: e.id)
        return out

    def edges_of_origin(
        self, origin: str, source_document_ids: Sequence[str] | None = None
    ) -> dict[str, Edge]:
        """``id -> edge`` of one origin, leaving the given documents (``None``: all)."""
        if origin == STRUCTURAL:
            docs = None if source_document_ids is None else sorted(set(source_document_ids))
            return {a.id: a.edge() for a in self._outline(docs, wanted(None))}
        if source_document_ids is None:
            return {r["id"]: _edge(r) for r in self.db.execute(
                f"SELECT {_EDGE_COLS} FROM edges WHERE origin=?", (origin,))}
        out: dict[str, Edge] = {}
        for part in chunks(list(source_document_ids)):
            q = ",".join("?" * len(part))
            for r in self.db.execute(
                f"SELECT {_EDGE_COLS} FROM edges WHERE origin=? AND source_document_id IN ({q})",
                [origin, *part],
            ):
                out[r["id"]] = _edge(r)
        return out
