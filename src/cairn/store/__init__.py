"""Storage: the :class:`Store` protocol (:mod:`cairn.store.base`) and its backends.

A backend is chosen by the scheme of the index's location (:mod:`cairn.store.registry`):
a file path is the embedded default, :class:`cairn.store.sqlite.SQLiteStore`;
``postgresql://`` is :class:`cairn.store.postgres.PostgresStore`. Both run the SQL of
:mod:`cairn.store.sql`. Only the composition root (:mod:`cairn.app`) opens a store;
everything else receives one and is written against the protocol, so another backend
can take its place.
"""

from __future__ import annotations

from pathlib import Path

from cairn.store.base import (
    DocumentIndex,
    FileIndex,
    KeywordIndex,
    LinkIndex,
    RunLog,
    Store,
    TableAccess,
)
from cairn.store.indexes import EdgeIndex, VectorIndex
from cairn.store.registry import open_location

__all__ = [
    "DocumentIndex", "EdgeIndex", "FileIndex", "KeywordIndex", "LinkIndex", "RunLog", "Store",
    "TableAccess", "VectorIndex", "open_location", "open_store", "open_url",
]


def open_store(path: str | Path) -> Store:
    """Open (creating and migrating as needed) the SQLite index file at ``path`` (a
    path, never read as a URL: a file name may hold a ``:``).

    Raises:
        cairn.errors.StoreError: the file cannot be opened or is not a cairn index.
    """
    return open_location(Path(path))


def open_url(url: str) -> Store:
    """Open (creating and migrating as needed) the index at ``url``, with the backend
    its scheme names (:mod:`cairn.store.registry`): ``postgresql://…`` (needs ``pip
    install 'cairn[postgres]'``), ``sqlite:///path``, or a plain file path.

    Raises:
        cairn.errors.ProviderUnavailable: the backend's driver (psycopg) is not
            installed.
        cairn.errors.StoreError: no backend opens that scheme, the server cannot be
            reached, or the database is not a cairn index.
    """
    return open_location(url)
