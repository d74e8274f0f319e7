"""Connection, transactions and migrations of the PostgreSQL store.

Each thread has its own connection (like the SQLite store: readers never wait for one
another), borrowed from a ``psycopg_pool`` pool and given back when the thread ends, in
autocommit mode outside :meth:`PostgresBase.transaction`. Statements are
the store's shared SQL rendered by :mod:`cairn.store.postgres.dialect`; rows support
index and column-name access like ``sqlite3.Row``; every ``psycopg`` error becomes a
:class:`cairn.errors.StoreError` naming the database (password removed), the operation
and the server's reason.

Writers serialise on a transaction-level advisory lock, so two indexers against one
database never interleave: the second waits (``wait`` seconds, default 5) and is then
refused with a clear message.
"""

from __future__ import annotations

import re
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from cairn.errors import StoreError, StoreUnwritable
from cairn.store.lock import WriterLock
from cairn.store.postgres.dialect import COMPAT_FUNCTIONS, translate, translate_trigger
from cairn.store.postgres.migrate import schema_migration
from cairn.store.postgres.steps import PG_COMPONENT, PG_STEPS, PG_TABLES
from cairn.store.sql.base import SQLBase, TableCopyMixin
from cairn.store.sql.migrations import SCHEMA_VERSION

WRITE_LOCK_KEY = 0x6361_6972_6E00  # "cairn\0": the advisory lock of index writers
MIGRATION_WAIT = 120.0
"""Seconds a process that finds the schema behind waits for the writers' lock: another
process may be migrating it, and a search then waits for that migration (a migration
of a large index takes a while) instead of failing after the writers' ``wait``."""



def redact_url(url: str) -> str:
    """``url`` without its password (for messages and ``store.path``)."""
    return re.sub(r"(//[^:/@]+):[^@]*@", r"\1:***@", url)


class Row(tuple[Any, ...]):
    """A result row: a tuple that can also be indexed by column name."""

    _names: dict[str, int]

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        """The column names, in order."""
        return list(self._names)


def _row_factory(cursor: Any) -> Any:
    desc = cursor.description
    names = {d.name: i for i, d in enumerate(desc or ())}

    def make(values: Sequence[Any]) -> Row:
        row = Row(values)
        row._names = names
        return row

    return make


def _error(exc: Exception) -> type[StoreError]:
    state = getattr(getattr(exc, "diag", None), "sqlstate", None) or ""
    if state in ("53100", "25006") or state.startswith("53"):  # disk full, read-only
        return StoreUnwritable
    return StoreError


class Connection:
    """One thread's connection, speaking the store's shared SQL (see the module doc)."""

    def __init__(self, raw: Any, store: PostgresBase) -> None:
        self.raw = raw
        self._store = store

    def _sql(self, sql: str) -> str:
        return translate(sql, self._store.primary_keys)

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        """Run one statement; returns the cursor (iterable of :class:`Row`).

        Raises:
            StoreError: the server refused it.
        """
        import psycopg

        head = sql.lstrip()[:16].upper()
        try:
            if head.startswith("CREATE TRIGGER"):
                cur = None
                for stmt in translate_trigger(sql):
                    cur = self.raw.execute(stmt, ())
                return cur
            return self.raw.execute(self._sql(sql), tuple(params or ()))
        except psycopg.Error as exc:
            raise _error(exc)(f"{self._store.path}: {exc}".strip()) from exc

    def run(self, sql: str, *, rendered: bool) -> Any:
        """Run one statement already in PostgreSQL's dialect; ``rendered``: it came
        through :func:`cairn.store.postgres.dialect.translate` (its ``%`` escaped, so it
        takes an empty parameter list).

        Raises:
            StoreError: the server refused it.
        """
        import psycopg

        try:
            return self.raw.execute(sql, () if rendered else None)
        except psycopg.Error as exc:
            raise _error(exc)(f"{self._store.path}: {exc}".strip()) from exc

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]] | Any) -> Any:
        """Run one statement for each parameter row (pipelined).

        Raises:
            StoreError: the server refused it.
        """
        import psycopg

        rows = [tuple(r) for r in rows]
        cur = self.raw.cursor()
        if not rows:
            return cur
        try:
            cur.executemany(self._sql(sql), rows)
        except psycopg.Error as exc:
            raise _error(exc)(f"{self._store.path}: {exc}".strip()) from exc
        return cur

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on this connection."""
        from psycopg.pq import TransactionStatus

        return bool(self.raw.info.transaction_status != TransactionStatus.IDLE)


ANALYZE_FROM = 1_000
"""Rows changed since a table's last statistics from which a commit may analyze it."""

ANALYZE_GROWTH = 0.5
"""Share of a table's rows changed from which a commit analyzes it
(:meth:`PostgresBase._analyze_grown`): statistics are taken about every time a table
grows by half, so a load to any size analyzes each table a few dozen times at most."""

ANALYZE_EVERY = 2.0
"""Seconds between two looks at the tables' change counts."""

POOL_SIZE = 32
"""Most connections a store opens (one per thread that uses it at a time)."""


def _configure(raw: Any) -> None:
    """Set up a new connection: Python booleans as integers, as the shared schema
    stores them, and every statement planned for its own parameters: a generic plan
    (chosen once psycopg has prepared a statement) suits a rare word and ruins a common
    one (SciFact keyword p95 31 → 100 ms from the second pass on)."""
    import psycopg
    from psycopg.adapt import Dumper

    class _BoolAsInt(Dumper):
        oid = psycopg.adapters.types["int8"].oid

        def dump(self, obj: Any) -> bytes:
            return b"1" if obj else b"0"

    raw.adapters.register_dumper(bool, _BoolAsInt)
    raw.execute("SET plan_cache_mode = force_custom_plan")


def _give_back(store_ref: weakref.ref[PostgresBase], raw: Any) -> None:
    """Return a thread's connection to its store's pool when the thread has ended."""
    store = store_ref()
    if store is None:
        return
    with store._lock:
        if raw not in store._connections:
            return  # closed with the store
        store._connections.remove(raw)
        pool = None if store._closed else store._pool
    with suppress(Exception):
        if pool is not None:
            pool.putconn(raw)
        else:
            raw.close()


class PostgresBase(SQLBase):
    """Connections, transactions and migrations on PostgreSQL.

    Args:
        url: a ``postgresql://`` connection URL (libpq syntax).
        wait: seconds a writer waits for another writer's lock before it is refused.

    Raises:
        StoreError: the server cannot be reached, the database is not a cairn index, or
            its schema is newer than this cairn.
    """

    def __init__(self, url: str, *, wait: float = 5.0, pool_size: int = POOL_SIZE) -> None:
        self.url = url
        self.path = redact_url(url)
        self.wait = wait
        self.pool_size = pool_size
        self.primary_keys: dict[str, tuple[str, ...]] = {}
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[Any] = []
        self._pool: Any = None
        self._closed = False
        self._analyzed_at = 0.0
        self._migrate()

    # --- connections ------------------------------------------------------------------
    @property
    def db(self) -> Connection:  # type: ignore[override]
        """This thread's connection: borrowed from the store's pool on first use and
        kept by the thread (a transaction stays on one connection) until the thread
        ends, when it goes back to the pool for the next thread.

        Raises:
            StoreError: the store is closed, the server cannot be reached, or every
                pooled connection stayed busy for 30 s.
        """
        conn: Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        with self._lock:
            if self._closed:
                raise StoreError(f"{self.path}: the index is closed")
            pool = self._pool
        if pool is None:
            pool = self._open_pool()
        try:
            raw = pool.getconn(timeout=30)
        except Exception as exc:
            raise StoreError(f"{self.path}: no database connection within 30 s "
                             f"({self.pool_size} in the pool are busy): {exc}") from exc
        conn = Connection(raw, self)
        with self._lock:
            self._connections.append(raw)
        self._local.conn = conn
        weakref.finalize(threading.current_thread(), _give_back, weakref.ref(self), raw)
        return conn

    def _open_pool(self) -> Any:
        """The store's connection pool (``psycopg_pool``, at most :attr:`pool_size`
        connections), made once; a first direct connection makes an unreachable server a
        clear error.

        Raises:
            StoreError: the server cannot be reached.
        """
        from psycopg_pool import ConnectionPool

        self._connect().close()
        with self._lock:
            if self._pool is None:
                self._pool = ConnectionPool(
                    self.url, min_size=0, max_size=max(1, self.pool_size), open=True,
                    kwargs={"autocommit": True, "row_factory": _row_factory,
                            "connect_timeout": 10},
                    configure=_configure, name="cairn")
            return self._pool

    def _connect(self) -> Any:
        """One connection outside the pool.

        Raises:
            StoreError: the server cannot be reached.
        """
        import psycopg

        try:
            raw = psycopg.connect(self.url, autocommit=True, row_factory=_row_factory,
                                  connect_timeout=10)
        except psycopg.Error as exc:
            raise StoreError(f"{self.path}: cannot connect: {exc}".strip()) from exc
        _configure(raw)
        return raw

    def _load_primary_keys(self) -> None:
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

    # --- migrations -------------------------------------------------------------------
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

    def writer_lock(self) -> WriterLock:
        """A new handle on the index's writer lock: a session-level advisory lock (see
        :mod:`cairn.store.postgres.lock`)."""
        from cairn.store.postgres.lock import AdvisoryWriterLock

        return AdvisoryWriterLock(self.url, self.path)

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
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS components (name TEXT PRIMARY KEY, version BIGINT)"
            )
            row = self.db.execute("SELECT version FROM components WHERE name=?",
                                  (name,)).fetchone()
            version = int(row[0]) if row else 0
            if version > len(migrations):
                raise StoreError(
                    f"{self.path}: component {name!r} is at version {version}, newer than "
                    f"this cairn ({len(migrations)}); upgrade cairn or rebuild the index"
                )
            for i in range(version, len(migrations)):
                for stmt in migrations[i].split(";"):
                    if stmt.strip():
                        self.db.execute(stmt)
                self.db.execute(
                    "INSERT INTO components(name, version) VALUES (?, ?) "
                    "ON CONFLICT(name) DO UPDATE SET version=excluded.version",
                    (name, i + 1),
                )
        if len(migrations) > version:
            self._load_primary_keys()

    # --- lifecycle and transactions ---------------------------------------------------
    def close(self) -> None:
        """Close every connection, borrowed or pooled, and the pool (idempotent); the
        store cannot be used afterwards."""
        with self._lock:
            self._closed = True
            conns, self._connections = self._connections, []
            pool, self._pool = self._pool, None
        for conn in conns:
            with suppress(Exception):
                conn.close()
        if pool is not None:
            with suppress(Exception):
                pool.close()
        self._local = threading.local()

    def open_connections(self) -> int:
        """Connections of this store open now (borrowed by threads or idle in the pool)."""
        with self._lock:
            borrowed = sum(1 for c in self._connections if not c.closed)
            pool = self._pool
        idle = int(pool.get_stats().get("pool_available", 0)) if pool is not None else 0
        return borrowed + idle

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

    @contextmanager
    def transaction(self, *, wait: float | None = None,
                    busy: str | None = None) -> Iterator[None]:
        """A write transaction holding the writers' advisory lock; rolled back if the
        block raises. Inside an open transaction it nests as a savepoint.

        Args:
            wait: seconds to wait for the lock (default: the store's ``wait``).
            busy: the message when it stays taken (default: another process writes).

        Raises:
            StoreError: another writer held the lock for longer than ``wait`` seconds.
        """
        wait = self.wait if wait is None else wait
        db = self.db
        if db.in_transaction:
            with self.savepoint():
                yield
            return
        db.raw.execute("BEGIN")
        self._local.next_rowid = None  # see PostgresWritesMixin._first_rowid
        try:
            wait_ms = 0 if wait < 0 else max(1, int(wait * 1000))
            db.raw.execute(f"SET LOCAL lock_timeout = '{wait_ms}ms'")
            try:
                db.raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
            except Exception as exc:
                raise StoreError(busy or (
                    f"{self.path}: another cairn process is writing this index "
                    f"(waited {wait:g} s); try again when it has finished")) from exc
            db.raw.execute("SET LOCAL lock_timeout = 0")
            # pipeline mode: statements whose results nobody reads are queued, not
            # waited for one by one; every savepoint (a file) ends with a sync, so an
            # error is raised inside the block that caused it
            with db.raw.pipeline() as pipe:
                self._local.pipe = pipe
                try:
                    yield
                    pipe.sync()
                finally:
                    self._local.pipe = None
        except BaseException:
            with suppress(Exception):
                db.raw.execute("ROLLBACK")
            raise
        else:
            try:
                db.raw.execute("COMMIT")
            except Exception as exc:
                with suppress(Exception):
                    db.raw.execute("ROLLBACK")
                raise _error(exc)(f"{self.path}: cannot commit: {exc}") from exc
            self._analyze_grown()

    def _analyze_grown(self) -> None:
        """``ANALYZE`` the tables that changed by more than :data:`ANALYZE_GROWTH` of their
        rows (and at least :data:`ANALYZE_FROM`) since their statistics were taken; looked
        at after a commit, at most every :data:`ANALYZE_EVERY` seconds.

        Autovacuum does the same, but a minute or more later: during a first bulk load
        the planner would otherwise plan the graph step's queries over ``units`` for an
        empty table (a nested loop over every unit: 98 of a 134 s run at 12,000
        chunks, 149 ms with statistics). Errors (no right to analyze) are ignored."""
        now = time.monotonic()
        if now - self._analyzed_at < ANALYZE_EVERY:
            return
        self._analyzed_at = now
        with suppress(Exception):
            raw = self.db.raw
            # this connection's own counts reach the server's statistics when it is
            # next idle: after this statement, so the look below sees the commit's rows
            raw.execute("SELECT pg_stat_force_next_flush()")
            rows = raw.execute(
                "SELECT quote_ident(relname) FROM pg_stat_user_tables WHERE "
                "schemaname = current_schema() AND n_mod_since_analyze >= %s AND "
                "n_mod_since_analyze > %s * greatest(n_live_tup - n_mod_since_analyze, 0)",
                (ANALYZE_FROM, ANALYZE_GROWTH)).fetchall()
            if rows:
                raw.execute("ANALYZE " + ", ".join(str(r[0]) for r in rows))

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested unit of work inside a transaction; undone alone if the block raises."""
        depth = getattr(self._local, "sp", 0) + 1
        self._local.sp = depth
        name = f"sp{depth}"
        raw = self.db.raw
        raw.execute(f"SAVEPOINT {name}")
        try:
            yield
            pipe = getattr(self._local, "pipe", None)
            if pipe is not None:
                pipe.sync()
        except BaseException:
            with suppress(Exception):
                raw.execute(f"ROLLBACK TO SAVEPOINT {name}")
                raw.execute(f"RELEASE SAVEPOINT {name}")
            raise
        else:
            raw.execute(f"RELEASE SAVEPOINT {name}")
        finally:
            self._local.sp = depth - 1


class PostgresTableCopy(TableCopyMixin, PostgresBase):
    """Whole-table reads and writes (see :class:`cairn.store.sql.base.TableCopyMixin`)."""

    def table_names(self) -> list[str]:
        """The index's own tables."""
        rows = self.db.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = "
            "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
        )
        return [str(r[0]) for r in rows
                if r[0] not in ("components", "cairn_schema", *PG_TABLES)]

    def table_columns(self, table: str) -> list[str]:
        """The writable columns of ``table`` (generated ones left out)."""
        rows = self.db.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = "
            "current_schema() AND table_name = ? AND is_generated = 'NEVER' "
            "ORDER BY ordinal_position", (table,))
        return [str(r[0]) for r in rows]

    def finish_copy(self) -> None:
        """Move every serial column's sequence past the copied values, and give the
        copied vectors their pgvector rows."""
        vectors = getattr(self, "vectors", None)
        if vectors is not None and getattr(vectors, "pgvector", False):
            vectors.fill()
        rows = self.db.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE "
            "table_schema = current_schema() AND column_default LIKE 'nextval(%'").fetchall()
        for table, column in rows:
            self.db.raw.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                f"coalesce((SELECT max(\"{column}\") FROM \"{table}\"), 0) + 1, false)")
