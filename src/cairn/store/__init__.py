"""Storage: the :class:`Store` protocol (:mod:`cairn.store.base`) and its backends.

The embedded default is :class:`cairn.store.sqlite.SQLiteStore`. Only the composition
root (:mod:`cairn.app`) opens a store; everything else receives one and is written
against the protocol, so another backend can take its place.
"""

from __future__ import annotations

from pathlib import Path

from cairn.store.base import Store
from cairn.store.indexes import EdgeIndex, VectorIndex

__all__ = ["EdgeIndex", "Store", "VectorIndex", "open_store", "open_url"]


def open_store(path: str | Path) -> Store:
    """Open (creating and migrating as needed) the SQLite index at ``path``.

    Raises:
        cairn.errors.StoreError: the file cannot be opened or is not a cairn index.
    """
    from cairn.store.sqlite import SQLiteStore

    return SQLiteStore(path)


def open_url(url: str) -> Store:
    """Open (creating and migrating as needed) the PostgreSQL index at ``url``
    (``postgresql://…``; needs ``pip install 'cairn[postgres]'``).

    Raises:
        cairn.errors.ProviderUnavailable: psycopg is not installed.
        cairn.errors.StoreError: the server cannot be reached or the database is not a
            cairn index.
    """
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        from cairn.errors import ProviderUnavailable

        raise ProviderUnavailable(
            "the PostgreSQL backend needs psycopg: pip install 'cairn[postgres]'"
        ) from exc
    from cairn.store.postgres import PostgresStore

    return PostgresStore(url)
