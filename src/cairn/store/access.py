"""The narrow store protocol of agent memory's access log, reached as
``store.access_log``: which concepts of which bundle were recalled, and which of those
recalls a maintenance cycle has already counted (Hebbian decay reads it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class AccessLog(Protocol):
    """Recalls of bundle concepts, in the order they happened."""

    def record(self, bundle: str, concepts: Sequence[str], query: str, at: str) -> int:
        """Record one recall of each concept (bundle-relative paths) of the bundle
        folder ``bundle`` (absolute); ``at`` is ISO 8601 UTC. Returns how many rows."""
        ...

    def pending(self, bundle: str) -> tuple[dict[str, int], int]:
        """Recalls not yet counted by a cycle: ``({concept path: count}, last row id)``
        (``0`` when there are none)."""
        ...

    def consume(self, bundle: str, upto: int) -> int:
        """Mark the bundle's recalls up to row ``upto`` as counted; returns how many."""
        ...

    def total(self, bundle: str) -> int:
        """Every recall ever recorded for the bundle."""
        ...
