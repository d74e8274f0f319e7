"""``cairn.fields``: facets of a search, table columns of hits, and a term across the
index (:class:`FieldsService`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from cairn.fields.columns import FieldValue, hit_fields, hit_positions
from cairn.fields.facets import FACET_DEPTH, Candidates, count_facets
from cairn.fields.terms import TermsResult, find_term

if TYPE_CHECKING:
    from cairn.model import Facets, Hit
    from cairn.store import Store


class FieldsService:
    """Fields across one index.

    Args:
        store: the index.
        weights: ``[search] weights`` (the keyword index's per-field weights).
        candidates: ``candidates(query, mode, depth, include_alternates)``: a query's
            ranked unit ids.
    """

    def __init__(self, store: Store, weights: Mapping[str, float],
                 candidates: Candidates) -> None:
        self._store = store
        self._weights = weights
        self._candidates = candidates

    def facets(self, query: str, *, mode: str | None = None, depth: int = FACET_DEPTH,
               per_field: int = 12, include_alternates: bool = False) -> Facets:
        """Count the query's candidates by facet (see
        :func:`cairn.fields.facets.count_facets`); never raises for the query."""
        return count_facets(self._store, self._candidates, query, mode=mode, depth=depth,
                            per_field=per_field, include_alternates=include_alternates)

    def columns(
        self, hits: Sequence[Hit], fields: str | Sequence[str]
    ) -> list[dict[str, FieldValue]]:
        """One row per hit, ``{field: value}``, typed as JSON has it (see
        :func:`cairn.fields.columns.hit_fields`).

        Raises:
            QueryError: an unknown field name.
        """
        return hit_fields(self._store, hits, fields)

    def positions(self, hits: Sequence[Hit], query: str) -> list[tuple[int, int]]:
        """``(line, column)`` of each hit's first match of the query's words (see
        :func:`cairn.fields.columns.hit_positions`)."""
        return hit_positions(hits, query)

    def terms(self, term: str, *, include_alternates: bool = False) -> TermsResult:
        """Every document where ``term`` occurs, with counts (see
        :func:`cairn.fields.terms.find_term`).

        Raises:
            QueryError: the term holds no word.
        """
        return find_term(self._store, self._weights, term,
                         include_alternates=include_alternates)
