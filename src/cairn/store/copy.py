"""Moving an index between backends without re-parsing or re-embedding.

:func:`copy_store` copies every table of one store into an empty other one, table by
table in batches, in an order that satisfies the foreign keys (roots, files, documents,
units first; the graph's and vectors' bookkeeping last, so the target's triggers cannot
undo it). Columns are matched by name; a column only one backend has (PostgreSQL's
computed ``tsvector``, its ``runs.rowid``) is left to the target. :class:`IndexCopier`
(``Cairn.storage``) copies one open index into a location, under its writer lock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from cairn.errors import StoreError
from cairn.store.base import Store
from cairn.store.lock import WriterLock
from cairn.store.registry import location_of, open_location

_FIRST = ("roots", "files", "documents", "units", "unit_tags", "links", "attachments",
          "runs", "units_fts", "chunks", "embeddings", "vector_spaces", "edges")
_LAST = ("graph_docs", "graph_meta", "vector_meta")
BATCH = 2000


@dataclass(frozen=True, slots=True)
class CopyReport:
    """What :func:`copy_store` moved.

    Attributes:
        source / target: the two indexes (URLs without passwords, or file paths).
        rows: table → rows copied, in copy order.
        seconds: wall time.
    """

    source: str
    target: str
    rows: dict[str, int]
    seconds: float


def copy_store(
    source: Store, target: Store, *, progress: Callable[[str, int], None] | None = None
) -> CopyReport:
    """Copy every table of ``source`` into ``target`` (which must hold no documents).

    Args:
        progress: called with (table, rows copied so far) after each batch.

    Returns:
        A :class:`CopyReport`.

    Raises:
        StoreError: ``target`` already holds an index, or either backend failed (the
            target is left as it was: the copy is one transaction).
    """
    start = time.monotonic()
    if target.counts()["documents"]:
        raise StoreError(f"{target.path}: already holds an index; copy into an empty one")
    for store in (source, target):  # create the optional components' tables
        _ = store.vectors, store.edges, store.enrichments
        store.edges.counts()
    have = set(target.table_names())
    tables = [t for t in source.table_names() if t in have]
    order = ([t for t in _FIRST if t in tables]
             + sorted(t for t in tables if t not in _FIRST and t not in _LAST)
             + [t for t in _LAST if t in tables])
    rows: dict[str, int] = {}
    with target.transaction():
        for table in order:
            if table in _LAST:
                target.clear_table(table)
            wanted = set(target.table_columns(table))
            cols = [c for c in source.table_columns(table) if c in wanted]
            n = 0
            batch: list[tuple[object, ...]] = []
            for row in source.read_table(table, cols):
                batch.append(row)
                if len(batch) >= BATCH:
                    target.write_rows(table, cols, batch)
                    n += len(batch)
                    batch = []
                    if progress is not None:
                        progress(table, n)
            if batch:
                target.write_rows(table, cols, batch)
                n += len(batch)
            rows[table] = n
        target.finish_copy()
    return CopyReport(source.path, target.path, rows, round(time.monotonic() - start, 3))


class IndexCopier:
    """``cairn store copy``: one open index copied into another location.

    Args:
        store: the source index (only read).
        writer_lock: its writer lock, held during the copy so no run changes it.
    """

    def __init__(self, store: Store, writer_lock: WriterLock) -> None:
        self.store = store
        self.writer_lock = writer_lock

    def copy(
        self, target: str, *, progress: Callable[[str, int], None] | None = None
    ) -> CopyReport:
        """Copy the index, as it is, into an empty index at ``target`` — a PostgreSQL
        URL (``postgresql://…``) or a SQLite file — without re-parsing or re-embedding.

        Args:
            progress: called with (table, rows copied so far) after each batch.

        Raises:
            StoreError: the target holds an index already, or cannot be opened/written.
            IndexBusy: another process is writing the source index.
            ProviderUnavailable: a PostgreSQL target without psycopg installed.
        """
        dest = open_location(location_of(target))
        try:
            with self.writer_lock.hold(wait=0):
                return copy_store(self.store, dest, progress=progress)
        finally:
            dest.close()
