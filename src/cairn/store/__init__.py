"""Storage: the :class:`Store` protocol (:mod:`cairn.store.base`) and its backends.

The embedded default is :class:`cairn.store.sqlite.SQLiteStore`. Only the composition
root (:mod:`cairn.app`) opens a store; everything else receives one and is written
against the protocol, so another backend can take its place.
"""

from __future__ import annotations

from pathlib import Path

from cairn.store.base import Store
from cairn.store.indexes import EdgeIndex, VectorIndex

__all__ = ["EdgeIndex", "Store", "VectorIndex", "open_store"]


def open_store(path: str | Path) -> Store:
    """Open (creating and migrating as needed) the SQLite index at ``path``.

    Raises:
        cairn.errors.StoreError: the file cannot be opened or is not a cairn index.
    """
    from cairn.store.sqlite import SQLiteStore

    return SQLiteStore(path)
