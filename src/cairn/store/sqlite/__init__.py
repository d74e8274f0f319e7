"""The embedded SQLite backend of the store protocol (:mod:`cairn.store.base`).

Split by role: ``schema`` (connection, migrations, transactions), ``writes`` (roots,
files, documents), ``reads`` (lookups, links, runs, counts), ``fts`` (keyword search and
filters), ``vectors`` (chunks and embeddings), ``edges`` (the graph tables); ``store``
composes them into :class:`SQLiteStore`.
"""

from __future__ import annotations

from cairn.model import FileState
from cairn.store.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from cairn.store.sqlite.store import SQLiteStore

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "FileState", "SQLiteStore"]
