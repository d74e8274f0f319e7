"""What the shared SQL (:mod:`cairn.store.sql`) asks of a backend's connection.

The role mixins of this package are written against :class:`SQLBase`: ``db`` (this
thread's connection, speaking SQLite's dialect of SQL with ``?`` parameters and rows
readable by index and column name), ``transaction``/``savepoint``, ``ensure_component``
(an optional component's own migrations) and the keyword index's row writers. Each
backend's base class (:class:`cairn.store.sqlite.base.SQLiteBase`,
:class:`cairn.store.postgres.base.PostgresBase`) provides them.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from json.encoder import encode_basestring
from typing import Any

from cairn.errors import StoreError
from cairn.store.lock import WriterLock

FTS_COLUMNS = ("rowid", "title", "outline_path", "tags", "body", "cjk", "meta")
"""The columns of a unit's keyword-index row (``units_fts``), in order."""


_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str).encode
"""``json.dumps(value, ensure_ascii=False, default=str)`` without making an encoder per
call."""


def _j(value: Any) -> str:
    """``value`` as stored JSON text, as ``json.dumps(value, ensure_ascii=False,
    default=str)`` writes it; the empty list and mapping and a list of strings (outline
    paths, tags: most values) without the encoder's Python."""
    if type(value) is list:
        if not value:
            return "[]"
        if all(type(v) is str for v in value):
            return "[" + ", ".join(map(encode_basestring, value)) + "]"
    elif type(value) is dict and not value:
        return "{}"
    return _ENCODE(value)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())



class SQLBase:
    """The connection, transactions and migrations the role mixins build on; each
    method here is implemented by the backend's base class."""

    path: str
    _local: threading.local

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection (a DB-API connection in SQLite's dialect).

        Raises:
            StoreError: the store is closed or the connection cannot be made.
        """
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction; rolled back if the block raises; nested, a savepoint."""
        raise NotImplementedError

    def savepoint(self) -> AbstractContextManager[None]:
        """A nested unit of work inside a transaction; undone alone if the block raises."""
        raise NotImplementedError

    def bulk_writes(self) -> AbstractContextManager[None]:
        """Many files written in a row (an index run): the backend may batch or hold
        writes until each transaction commits (default: nothing changes)."""
        return nullcontext()

    def _hold_keyword_rows(self, rows: Sequence[Sequence[Any]]) -> bool:
        """Hold keyword-index rows until the transaction commits; ``False``: the
        caller writes them now (default)."""
        return False

    def _write_held(self) -> None:
        """Write the held keyword-index rows (default: none are held)."""

    def ensure_component(self, name: str, migrations: Sequence[str]) -> None:
        """Create or migrate the tables of an optional component (vectors, edges …):
        ``migrations[i]`` brings it from version ``i`` to ``i + 1``; idempotent.

        Raises:
            StoreError: the database holds a newer version of the component.
        """
        raise NotImplementedError

    def _component_version(self, name: str, migrations: Sequence[str]) -> int:
        """The version of optional component ``name`` this index holds (0: none; the
        ``components`` table made when missing), for :meth:`ensure_component`.

        Raises:
            StoreError: the index holds a newer version than ``migrations`` reach.
        """
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS components (name TEXT PRIMARY KEY, version INTEGER)"
        )
        row = self.db.execute("SELECT version FROM components WHERE name=?", (name,)).fetchone()
        version = int(row[0]) if row else 0
        if version > len(migrations):
            raise StoreError(
                f"{self.path}: component {name!r} is at version {version}, newer than this "
                f"cairn ({len(migrations)}); upgrade cairn or rebuild the index"
            )
        return version

    def _component_step(self, name: str, migrations: Sequence[str], step: int) -> None:
        """Run ``migrations[step]`` (``;``-separated statements) and record component
        ``name`` at version ``step + 1``; inside the caller's transaction."""
        for stmt in migrations[step].split(";"):
            if stmt.strip():
                self.db.execute(stmt)
        self.db.execute(
            "INSERT INTO components(name, version) VALUES (?, ?) "
            "ON CONFLICT(name) DO UPDATE SET version=excluded.version",
            (name, step + 1),
        )

    def _after_migration(self, version: int) -> None:
        """A migration's work beyond its SQL, the same on every backend (each backend's
        migration loop calls it once the schema is at ``version``); the role mixins
        that own a table add theirs (:class:`cairn.store.sql.carried.CarriedMixin`)."""

    def close(self) -> None:
        """Close every connection (idempotent); the store cannot be used afterwards."""
        raise NotImplementedError

    def writer_lock(self) -> WriterLock:
        """A new handle on the index's writer lock."""
        raise NotImplementedError

    @property
    def schema_version(self) -> int:
        """The database's schema version."""
        raise NotImplementedError

    def change_token(self) -> tuple[int, int, int] | None:
        """A value that changes when the index does, or ``None`` when the backend has
        none (then callers look again every time)."""
        return None

    # --- the keyword index's rows (written by the keyword-search mixin of a backend) ---
    def _write_fts(
        self, rows: Sequence[Sequence[Any]], units: Sequence[tuple[str, str]] | None = None
    ) -> None:
        """Add units' keyword-index rows (:data:`FTS_COLUMNS`); ``units``: each row's
        unit title and body as ``units`` holds them (``None``: read them)."""
        raise NotImplementedError

    def _delete_fts(self, document_id: str, kinds: Sequence[str] = ()) -> None:
        """Delete the keyword-index rows of a document's units (before the units go);
        ``kinds``: only of units of these kinds (none: of every unit)."""
        raise NotImplementedError


class TableCopyMixin(SQLBase):
    """Whole-table reads and writes for moving an index between backends
    (``cairn store copy``); see :func:`cairn.store.copy.copy_store`."""

    def table_names(self) -> list[str]:
        """The index's own tables (the backend's bookkeeping and search shadow tables
        excluded)."""
        raise NotImplementedError

    def table_columns(self, table: str) -> list[str]:
        """The columns a copy reads and writes."""
        raise NotImplementedError

    def read_table(self, table: str, columns: Sequence[str]) -> Iterator[tuple[Any, ...]]:
        """Every row of ``table`` (those columns), in a stable order."""
        cols = ", ".join(ident(c) for c in columns)
        for row in self.db.execute(f"SELECT {cols} FROM {ident(table)}"):
            yield tuple(row)

    def write_rows(self, table: str, columns: Sequence[str],
                   rows: Sequence[Sequence[Any]]) -> None:
        """Insert rows into ``table`` (call inside :meth:`transaction`); rows of the
        keyword index (``units_fts``) go through the backend's own writer."""
        if table == "units_fts":
            at = {c: i for i, c in enumerate(columns)}
            self._write_fts([tuple(r[at[c]] if c in at else "" for c in FTS_COLUMNS)
                             for r in rows])
            return
        cols = ", ".join(ident(c) for c in columns)
        marks = ", ".join("?" for _ in columns)
        self.db.executemany(f"INSERT INTO {ident(table)}({cols}) VALUES ({marks})", rows)

    def clear_table(self, table: str) -> None:
        """Delete every row of ``table`` (a copy's target bookkeeping)."""
        self.db.execute(f"DELETE FROM {ident(table)}")

    def finish_copy(self) -> None:
        """Bring counters up to date after a copy (nothing to do in SQLite)."""


def ident(name: str) -> str:
    """``name`` as a quoted SQL identifier (table and column names from the catalogue)."""
    return '"' + name.replace('"', '""') + '"'
