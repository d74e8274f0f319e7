"""Structural edges derived from the units on demand, never stored.

A document's outline gives ``parent``, ``next`` and ``previous`` edges (origin
``structural``, weight 1.0, evidence ``[{"via": "outline"}]``): a unit's parent is its
``parent_id``, or — for a top-level unit of a document whose first unit is a preamble —
that preamble; siblings are the units with the same (effective) parent, in ordinal
order. They are most of a graph's edges (71 % on the shared corpus) and every one of
them follows from four columns of ``units``, so the store computes them with one SQL
query per call (a window over the documents asked about) and gives them the same
deterministic ids the builders would (:func:`cairn.model.edge_ids.edge_id`). This is
the rule of :func:`cairn.graph.structural.build_structural`; the graph tests check the
two agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # a keyword search reads no edges: the graph types load on first use
    from cairn.model import Arc, Edge, EdgeOrigin

STRUCTURAL: EdgeOrigin = "structural"
PARENT, NEXT, PREVIOUS = "parent", "next", "previous"
RELATIONS = frozenset({PARENT, NEXT, PREVIOUS})
EVIDENCE = ({"via": "outline"},)

_ROWS = """
WITH g AS (
    SELECT id, document_id, ordinal, COALESCE(NULLIF(parent_id, ''), CASE
        WHEN first_kind = 'preamble' AND id != first_id THEN first_id END) AS parent,
        first_kind = 'preamble' AND id = first_id AS is_root
    FROM (SELECT id, document_id, ordinal, kind, parent_id,
                 first_value(kind) OVER w AS first_kind, first_value(id) OVER w AS first_id
          FROM units {where} WINDOW w AS (PARTITION BY document_id ORDER BY ordinal)) x
)
SELECT id, parent, lead(id) OVER (
    PARTITION BY document_id, parent ORDER BY ordinal) AS nxt, document_id
FROM g WHERE is_root IS NOT TRUE
"""
"""Per unit of the documents in ``{where}`` (except a document's preamble root): its
effective parent (``NULL``: none), its next sibling (``NULL``: last) and its document.
One pass of window functions, no join: a document's first unit (by ordinal) is the
root when it is a preamble. (A correlated ``min(ordinal)`` joined back to the units is
planned on PostgreSQL as a nested loop rescanning every unit per unit while the
statistics are young, as they are during a first load.)"""

_COUNTS = (
    "SELECT count(parent), count(nxt) FROM (" + _ROWS + ") s"
)


class OutlineArc:
    """One derived structural edge: ``source``, ``target``, ``relation``, the
    ``document_id`` of both ends and its deterministic ``id``."""

    __slots__ = ("document_id", "id", "relation", "source", "target")

    def __init__(self, source: str, target: str, relation: str, document_id: str) -> None:
        self.source, self.target, self.relation = source, target, relation
        self.document_id = document_id
        from cairn.model.edge_ids import edge_id

        self.id = edge_id(source, target, relation, STRUCTURAL)

    def arc(self) -> Arc:
        """As an :class:`cairn.model.Arc`."""
        from cairn import model

        return model.Arc(self.id, self.source, self.target, self.relation, STRUCTURAL, 1.0)

    def edge(self) -> Edge:
        """As a full :class:`cairn.model.Edge`."""
        from cairn import model

        return model.Edge(self.id, self.source, self.target, self.relation, STRUCTURAL, 1.0,
                    self.document_id, self.document_id, 1, 0, EVIDENCE)


def wanted(relations: Iterable[str] | None, origins: Iterable[str] | None = None) -> set[str]:
    """The structural relations a filter lets through (``None``: no filter)."""
    if origins is not None and STRUCTURAL not in set(origins):
        return set()
    if relations is None:
        return set(RELATIONS)
    return set(RELATIONS & set(relations))


def _where(document_ids: Sequence[str] | None) -> tuple[str, list[Any]]:
    if document_ids is None:
        return "", []
    return f"WHERE document_id IN ({','.join('?' * len(document_ids))})", list(document_ids)


def outline_arcs(
    db: Any, document_ids: Sequence[str] | None, relations: Iterable[str] = RELATIONS
) -> Iterator[OutlineArc]:
    """Every structural edge of the given documents (``None``: all), of ``relations``.

    Args:
        db: a connection (SQLite's, or the PostgreSQL store's, which renders the SQL).
        document_ids: at most 900 ids (the caller slices larger lists).
    """
    rels = set(relations)
    if not rels or document_ids == []:
        return
    where, args = _where(document_ids)
    for uid, parent, nxt, did in db.execute(_ROWS.format(where=where), args):
        if parent and PARENT in rels:
            yield OutlineArc(uid, parent, PARENT, did)
        if nxt:
            if NEXT in rels:
                yield OutlineArc(uid, nxt, NEXT, did)
            if PREVIOUS in rels:
                yield OutlineArc(nxt, uid, PREVIOUS, did)


_DOC_COUNTS = (
    "SELECT document_id, count(parent) + 2 * count(nxt) FROM (" + _ROWS + ") s"
    " GROUP BY document_id"
)


def outline_counts_by_document(db: Any, document_ids: Sequence[str] | None) -> dict[str, int]:
    """``document id -> structural edges`` (parent, next and previous) of the given
    documents (at most 900; ``None``: every document, in one pass); a document with
    none is absent."""
    if document_ids == []:
        return {}
    where, args = _where(document_ids)
    return {str(d): int(n) for d, n in db.execute(_DOC_COUNTS.format(where=where), args)}


def outline_counts(db: Any) -> dict[str, int]:
    """``relation -> number of structural edges`` in the whole index (no ids made)."""
    n_parent, n_next = db.execute(_COUNTS.format(where=""), []).fetchone()
    counts = {PARENT: int(n_parent or 0), NEXT: int(n_next or 0), PREVIOUS: int(n_next or 0)}
    return {k: v for k, v in counts.items() if v}
