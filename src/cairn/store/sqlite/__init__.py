"""The embedded SQLite backend of the store protocol (:mod:`cairn.store.base`).

Only what is SQLite's: ``base`` (connection, migrations, transactions, error mapping),
``connect`` (opening the file: WAL, read-only media, SQL functions), ``fts`` and
``match`` (FTS5 keyword search); ``store`` composes them with the shared SQL of
:mod:`cairn.store.sql` into :class:`SQLiteStore`.
"""

from __future__ import annotations

from cairn.model import FileState
from cairn.store.sql.migrations import MIGRATIONS, SCHEMA_VERSION
from cairn.store.sqlite.store import SQLiteStore

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "FileState", "SQLiteStore"]
