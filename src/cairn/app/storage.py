"""``Cairn`` methods that move the index itself between backends."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cairn.app.parts import Parts

if TYPE_CHECKING:
    from cairn.store.copy import CopyReport


class StorageMixin(Parts):
    """``copy_index``: this index into another backend (``cairn store copy``)."""

    def copy_index(
        self, target: str, *, progress: Callable[[str, int], None] | None = None
    ) -> CopyReport:
        """Copy this index, as it is, into an empty index at ``target`` — a PostgreSQL
        URL (``postgresql://…``) or a SQLite file — without re-parsing or re-embedding.

        The source is only read; the writer lock is held so no run changes it meanwhile.

        Raises:
            StoreError: the target holds an index already, or cannot be opened/written.
            ProviderUnavailable: a PostgreSQL target without psycopg installed.
        """
        from cairn.store import open_store, open_url

        if target.startswith(("postgresql://", "postgres://")):
            dest = open_url(target)
        else:
            dest = open_store(Path(target).expanduser())
        try:
            from cairn.store.copy import copy_store

            with self.writer_lock.hold(wait=0):
                return copy_store(self.store, dest, progress=progress)
        finally:
            dest.close()
