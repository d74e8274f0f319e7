"""Storage backends. The embedded default is :class:`cairn.store.sqlite.SQLiteStore`.

Only :mod:`cairn.app` constructs a store; everything else receives one.
"""

from __future__ import annotations

from pathlib import Path

from cairn.store.sqlite import SQLiteStore

Store = SQLiteStore
"""The store type the rest of cairn is written against (one backend so far)."""


def open_store(path: str | Path) -> Store:
    """Open (creating and migrating as needed) the index at ``path``.

    Raises:
        cairn.errors.StoreError: the file cannot be opened or is not a cairn index.
    """
    return SQLiteStore(path)
