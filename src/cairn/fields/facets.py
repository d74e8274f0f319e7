"""The facets of a search (the web UI's search page): the query's candidates counted by
format, tag, TODO keyword, note type and root, each value with the filter that keeps it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cairn.model import Facets, FacetValue
    from cairn.store import Store

Candidates = Callable[[str, "str | None", int, bool], list[str]]
"""``candidates(query, mode, depth, include_alternates) -> unit ids``, ranked."""

FACET_DEPTH = 200
"""How many of a query's ranked candidates the facets count by default."""


def facet_filter(field: str, value: str) -> str | None:
    """The query-language filter that keeps units with ``value`` of ``field``
    (``root`` → ``source:``), quoted when it holds spaces; ``None`` when it holds a
    double quote (the query language cannot write one)."""
    if '"' in value or not value:
        return None
    name = "source" if field == "root" else field
    return f'{name}:"{value}"' if any(c.isspace() for c in value) else f"{name}:{value}"


def count_facets(store: Store, candidates: Candidates, query: str, *, mode: str | None = None,
                 depth: int = FACET_DEPTH, per_field: int = 12,
                 include_alternates: bool = False) -> Facets:
    """Count the query's candidates (its first ``depth`` ranked units) by facet.

    Args:
        query: any text in the query language; never raises for it.
        mode: as :meth:`cairn.app.Cairn.search`.
        depth: how many ranked candidates to count (at least 1).
        per_field: the most frequent values kept per field.

    Returns:
        :class:`~cairn.model.Facets`; ``fields`` holds every facet field, values
        sorted by count (descending) then value.
    """
    from cairn.model import FACET_FIELDS, Facets, FacetValue

    ids = candidates(query, mode, max(1, depth), include_alternates)
    counts = store.facet_counts(ids, FACET_FIELDS) if ids else {}
    fields: dict[str, tuple[FacetValue, ...]] = {}
    for f in FACET_FIELDS:
        ranked = sorted(counts.get(f, {}).items(), key=lambda kv: (-kv[1], kv[0]))
        fields[f] = tuple(FacetValue(f, v, n, facet_filter(f, v))
                          for v, n in ranked[:per_field])
    return Facets(query, len(ids), depth, fields)
