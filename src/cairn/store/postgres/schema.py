"""The schema of a PostgreSQL index: its migrations and its optional components.

The steps are SQLite's (:mod:`cairn.store.sql.migrations`) rendered for PostgreSQL
(:mod:`cairn.store.postgres.migrate`), then PostgreSQL's own tables
(:data:`cairn.store.postgres.steps.PG_STEPS`). A migration runs under the writers'
advisory lock, taken only when the versions read without it are behind, so readers of
an up-to-date index never wait for a writer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

from cairn.errors import StoreError
from cairn.store.postgres.connection import Connection
from cairn.store.postgres.dialect import COMPAT_FUNCTIONS
from cairn.store.postgres.migrate import schema_migration
from cairn.store.postgres.steps import PG_COMPONENT, PG_STEPS
from cairn.store.sql.base import SQLBase
from cairn.store.sql.migrations import SCHEMA_VERSION

MIGRATION_WAIT = 120.0
"""Seconds a process that finds the schema behind waits for the writers' lock: another
process may be migrating it, and a search then waits for that migration (a migration
of a large index takes a while) instead of failing after the writers' ``wait``."""


class PostgresSchema(SQLBase):
    """Migrations and components; the host (:class:`cairn.store.postgres.base.PostgresBase`)
    provides the connection and the writers' transaction."""

    wait: float
    primary_keys: dict[str, tuple[str, ...]]

    @property
    def db(self) -> Connection:  # type: ignore[override]
        """This thread's connection (provided by the host)."""
        raise NotImplementedError

    def transaction(self, *, wait: float | None = None,
                    busy: str | None = None) -> AbstractContextManager[None]:
        """A write transaction holding the writers' lock (provided by the host)."""
        raise NotImplementedError

    def _load_primary_keys(self) -> None:
        """Read every table's primary key columns (the dialect renders an upsert's
        conflict target with them)."""
        rows = self.db.execute(
            "SELECT tc.table_name, kcu.column_name FROM information_schema.table_constraints tc "
            "JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = "
            "tc.constraint_name AND kcu.table_schema = tc.table_schema "
            "WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = current_schema() "
            "ORDER BY tc.table_name, kcu.ordinal_position"
        )
        keys: dict[str, list[str]] = {}
        for table, column in rows:
            keys.setdefault(str(table), []).append(str(column))
        self.primary_keys = {t: tuple(c) for t, c in keys.items()}

    def _migrate(self) -> None:
        """Bring the schema to :data:`SCHEMA_VERSION` (the same steps as SQLite's,
        rendered for PostgreSQL), under the writers' lock, which is taken only when the
        versions read without it are behind (readers never wait for a writer): they are
        read again under it. Behind, the lock is waited for up to :data:`MIGRATION_WAIT`
        seconds, for another process's migration to end.

        Raises:
            StoreError: the schema is newer than this cairn, or the lock stayed taken.
        """
        if (self._read_version("cairn_schema") == SCHEMA_VERSION
                and self._read_version("components", PG_COMPONENT) == len(PG_STEPS)):
            self._load_primary_keys()
            return
        with self._migrating():
            db = self.db
            db.execute("CREATE TABLE IF NOT EXISTS cairn_schema (version BIGINT NOT NULL)")
            row = db.execute("SELECT version FROM cairn_schema").fetchone()
            version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: index schema version {version} is newer than this cairn "
                    f"({SCHEMA_VERSION}); upgrade cairn or rebuild the index"
                )
            if version < SCHEMA_VERSION:
                for fn in COMPAT_FUNCTIONS:
                    db.raw.execute(fn)
            for i in range(version, SCHEMA_VERSION):
                for stmt in schema_migration(i):
                    db.run(stmt.sql, rendered=stmt.rendered)
                self._after_migration(i + 1)
            db.execute("DELETE FROM cairn_schema")
            db.execute("INSERT INTO cairn_schema(version) VALUES (?)", (SCHEMA_VERSION,))
            self._pg_steps()
        self._load_primary_keys()

    def _pg_steps(self) -> None:
        """Bring PostgreSQL's own tables (:data:`PG_STEPS`) up to date; inside the
        migration's transaction.

        Raises:
            StoreError: the database holds a newer version of them than this cairn.
        """
        db = self.db
        db.execute("CREATE TABLE IF NOT EXISTS components (name TEXT PRIMARY KEY, version BIGINT)")
        row = db.execute("SELECT version FROM components WHERE name=?",
                         (PG_COMPONENT,)).fetchone()
        version = int(row[0]) if row else 0
        if version > len(PG_STEPS):
            raise StoreError(
                f"{self.path}: PostgreSQL tables at version {version}, newer than this cairn "
                f"({len(PG_STEPS)}); upgrade cairn or rebuild the index")
        for i in range(version, len(PG_STEPS)):
            for stmt in PG_STEPS[i]:
                db.raw.execute(stmt)
            db.execute("INSERT INTO components(name, version) VALUES (?, ?) ON CONFLICT(name) "
                       "DO UPDATE SET version=excluded.version", (PG_COMPONENT, i + 1))

    def _read_version(self, table: str, name: str | None = None) -> int:
        """The version in ``cairn_schema``, or of component ``name`` in ``components``,
        read without the writers' lock; 0 when the table or the row is missing."""
        if self.db.execute("SELECT to_regclass(?)", (table,)).fetchone()[0] is None:
            return 0
        row = (self.db.execute("SELECT version FROM components WHERE name=?", (name,))
               if name else self.db.execute("SELECT max(version) FROM cairn_schema")).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def _user_version(self) -> int:
        row = self.db.execute("SELECT version FROM cairn_schema").fetchone()
        return int(row[0]) if row else 0

    @property
    def schema_version(self) -> int:
        """The database's schema version (the ``cairn_schema`` table)."""
        return self._user_version()

    def ensure_component(self, name: str, migrations: Sequence[str]) -> None:
        """Create or migrate an optional component's tables (see the SQLite store);
        the shared DDL is rendered for PostgreSQL.

        Raises:
            StoreError: the database holds a newer version of the component.
        """
        if self._read_version("components", name) == len(migrations):
            return  # current: no writer's lock for a reader
        with self._migrating():
            version = self._component_version(name, migrations)
            for i in range(version, len(migrations)):
                self._component_step(name, migrations, i)
        if len(migrations) > version:
            self._load_primary_keys()

    @contextmanager
    def _migrating(self) -> Iterator[None]:
        """A write transaction for a migration: waits up to :data:`MIGRATION_WAIT`
        seconds (or the store's ``wait``, when longer) for the writers' lock.

        Raises:
            StoreError: the lock stayed taken (another process migrates or writes)."""
        wait = self.wait if self.wait < 0 else max(self.wait, MIGRATION_WAIT)
        with self.transaction(wait=wait, busy=(
                f"{self.path}: this index's schema must be brought up to date, and another "
                f"cairn process is upgrading or writing it (waited {wait:g} s); try again "
                "when it has finished")):
            yield
