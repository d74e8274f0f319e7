"""The body every door answers a search with: ``{"query", "took_ms", "notes",
"hits"}`` — ``cairn search --json``, ``POST /v1/search``, the MCP ``search`` tool (which
adds its notice and provenance) and the warm-model socket's ``result``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from cairn.model.serialize import to_data

if TYPE_CHECKING:
    from cairn.model.core import Hit


class Answered(Protocol):
    """What a search gives back, as far as the body reads it (a local
    :class:`cairn.search.service.SearchResult` or a warm server's answer)."""

    @property
    def hits(self) -> Sequence[Hit]: ...

    @property
    def notes(self) -> Sequence[str]: ...

    @property
    def took_ms(self) -> float: ...


def search_body(query: str, result: Answered) -> dict[str, Any]:
    """The JSON body of a search, plain data only.

    Args:
        query: the query text as the door shows it back (the doors differ: the CLI and
            HTTP echo what they were given, the warm socket the request's text with its
            filters, MCP that text stripped).
        result: the search's hits, notes and time.

    Returns:
        ``{"query", "took_ms", "notes": [str], "hits": [hit]}`` (hits as
        :func:`cairn.model.serialize.to_data` writes them, docs/reference/json.md).
    """
    return {"query": query, "took_ms": result.took_ms, "notes": list(result.notes),
            "hits": to_data(result.hits)}
