"""Whole tables, for moving an index between backends (:mod:`cairn.store.copy`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol


class TableAccess(Protocol):
    """Every table's rows as plain values, read and written in bulk."""

    def table_names(self) -> list[str]:
        """The index's own tables (backend bookkeeping excluded)."""
        ...

    def table_columns(self, table: str) -> list[str]:
        """The columns of ``table`` a copy reads and writes."""
        ...

    def read_table(self, table: str, columns: Sequence[str]) -> Iterator[tuple[Any, ...]]:
        """Every row of ``table``, those columns, as plain values."""
        ...

    def write_rows(self, table: str, columns: Sequence[str],
                   rows: Sequence[Sequence[Any]]) -> None:
        """Insert rows into ``table`` (inside :meth:`transaction`)."""
        ...

    def clear_table(self, table: str) -> None:
        """Delete every row of ``table``."""
        ...

    def finish_copy(self) -> None:
        """Bring the backend's counters (sequences) past copied values."""
        ...
