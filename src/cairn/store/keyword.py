"""Keyword search in the store and the hit data search builds results from.

Search hands the store a parsed query (terms, phrases, exclusions, filters) and gets
ranked unit ids with scores back; turning that into backend syntax (FTS5 MATCH,
``tsquery``) is the backend's job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from cairn.model import ContextUnit, HitUnit, Term, TextQuery, UnitFacts


class KeywordIndex(Protocol):
    """Ranked keyword search, filters, facets and typed hit data."""

    def search_text(
        self,
        query: TextQuery,
        *,
        limit: int,
        weights: Mapping[str, float],
        whole_documents: bool = True,
    ) -> list[tuple[str, float]]:
        """``(unit id, score)`` best first for a parsed query: any positive term
        matches (BM25-like score, higher is better), negative terms exclude, filters
        restrict, units off a conversation's canonical branch only with the query's
        ``alternates``; no positive term: filter-only (score 0, in rounds: each document's
        first matching unit in path order, then each one's second, and so on).
        ``weights``: per-field weights ``title``, ``outline_path``, ``tags``, ``body``
        (and ``meta``: frontmatter, properties, TODO keywords). ``whole_documents``:
        in a filter-only query, a match by a document's own metadata is one hit (the
        document's first unit), not every unit; ``False`` gives every unit.

        Raises:
            QueryError: ``limit`` < 1 or an unknown filter field. StoreError: backend.
        """
        ...

    def best_in_documents(
        self,
        query: TextQuery,
        documents: Sequence[str],
        *,
        per_document: int,
        weights: Mapping[str, float],
    ) -> dict[str, list[str]]:
        """Each named document's ``per_document`` best units for ``query`` (with
        words), in the order :meth:`search_text` lists them: what ``query`` with
        ``id:DOC`` lists first, for every ``DOC`` of ``documents`` at once (``id:DOC``
        also names a unit whose id is ``DOC``). Every document is a key, ``[]`` when
        none of its units match.

        Raises:
            StoreError: the backend failed.
        """
        ...

    def text_query_syntax(self, query: TextQuery) -> str | None:
        """The backend's rendering of ``query`` (for explanations), ``None`` when it
        has no positive term."""
        ...

    def filter_units(self, unit_ids: Sequence[str], query: TextQuery) -> list[str]:
        """The given existing unit ids that pass ``query``'s filters (and its branch:
        canonical only unless ``alternates``), in the given order; its terms are not
        read."""
        ...

    def filter_values(self, field: str) -> list[str]:
        """Values of ``format``, ``kind``, ``todo`` or ``role`` present in the index.

        Raises:
            QueryError: another field.
        """
        ...

    def carried_named(
        self, key: str, carriers: int
    ) -> list[tuple[tuple[str, str, str], list[str]]]:
        """The ``(kind, name, value)`` units carry — tags, TODO keywords, note types,
        properties' names and values (:data:`cairn.store.sql.carried.Carried`) —
        filed under ``key`` (:func:`cairn.text.fold_key`) when they were stored, in that
        order, each with the ids of up to ``carriers`` units that carry it. Index
        look-ups, no scan.

        Raises:
            StoreError: the backend failed.
        """
        ...

    def headings_titled(self, term: Term, limit: int) -> list[tuple[str, str]]:
        """``(unit id, title)`` of up to ``limit`` headings whose title holds ``term`` (a
        keyword-index look-up; in no particular order).

        Raises:
            StoreError: the backend failed.
        """
        ...

    def facet_counts(
        self, unit_ids: Sequence[str], fields: Sequence[str] = ...
    ) -> dict[str, dict[str, int]]:
        """field -> value -> how many of ``unit_ids`` have it, for the facet fields
        ``format``, ``tag``, ``todo``, ``type``, ``root`` (all by default).

        Raises:
            QueryError: an unknown field. StoreError: the backend failed.
        """
        ...

    def unit_facts(self, unit_ids: Sequence[str]) -> dict[str, UnitFacts]:
        """``unit id -> UnitFacts`` for the ids that exist (ranking's light look-up)."""
        ...

    def hit_units(self, unit_ids: Sequence[str]) -> dict[str, HitUnit]:
        """``unit id -> HitUnit`` (unit plus document fields) for the ids that exist."""
        ...

    def siblings(self, document_id: str, parent_id: str | None, exclude: str) -> list[str]:
        """Titles of a unit's sibling headings, in order (at most 12)."""
        ...

    def siblings_many(
        self, units: Sequence[tuple[str, str | None, str]]
    ) -> dict[str, list[str]]:
        """:meth:`siblings` of many ``(document id, parent id, unit id)`` at once:
        ``unit id -> titles`` (one statement on a server)."""
        ...

    def neighbours(self, document_id: str, ordinal: int, kind: str) -> list[ContextUnit]:
        """The canonical units of ``kind`` just before and after ``ordinal``."""
        ...
