"""Facets of a search: how many of a query's candidates have each value of a field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FacetField = Literal["format", "tag", "todo", "type", "root"]
FACET_FIELDS: tuple[FacetField, ...] = ("format", "tag", "todo", "type", "root")
"""The facet fields, in the order a page shows them."""


@dataclass(frozen=True, slots=True)
class FacetValue:
    """One value of a facet field among a query's candidates.

    Attributes:
        field: ``format``, ``tag``, ``todo`` (the TODO keyword), ``type`` (the
            document's note type) or ``root`` (the registered folder's path).
        value: the value as stored (a tag lower-cased; a root as its absolute path).
        count: how many candidate units have it (a unit counts once per value).
        filter: the query-language filter that keeps only those units
            (``tag:work``, ``source:"/home/me/notes"``), or ``None`` when the value
            cannot be written as a filter (it holds a double quote).
    """

    field: FacetField
    value: str
    count: int
    filter: str | None


@dataclass(frozen=True, slots=True)
class Facets:
    """The facets of one query: ``fields`` maps each facet field to its values, most
    frequent first (at most ``per_field`` of them), counted over ``candidates`` units
    (the query's ranked candidates, at most ``depth``)."""

    query: str
    candidates: int
    depth: int
    fields: dict[str, tuple[FacetValue, ...]]
