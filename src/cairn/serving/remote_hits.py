"""A warm server's search answer rebuilt as the CLI's hits (:mod:`cairn.serving.warm`).

Imports only the standard library at module level: it runs in the CLI's fast path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class RemoteResult:
    """A server's answer in the shape of :class:`cairn.search.service.SearchResult`
    (``hits``, ``notes``, ``took_ms``), the hits rebuilt as :class:`cairn.model.Hit`."""

    def __init__(self, result: Mapping[str, Any]) -> None:
        self.hits = tuple(hit_from_data(h) for h in result["hits"])
        self.notes = tuple(str(n) for n in result["notes"])
        self.took_ms = float(result["took_ms"])


def hit_from_data(data: Mapping[str, Any]) -> Any:
    """The :class:`cairn.model.Hit` whose :func:`cairn.model.serialize.to_data` is
    ``data`` (tuples and timestamps rebuilt).

    Raises:
        KeyError / TypeError: ``data`` is not a serialised hit.
    """
    from cairn.model import Hit, Timestamp

    d = dict(data)
    for key in ("outline_path", "tags", "siblings"):
        d[key] = tuple(d[key])
    d["highlights"] = tuple((int(a), int(b)) for a, b in d["highlights"])
    d["planning"] = tuple(Timestamp(**t) for t in d["planning"])
    return Hit(**d)
