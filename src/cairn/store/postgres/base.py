"""The PostgreSQL store's connections, transactions and writers' lock.

Each thread has its own connection (like the SQLite store: readers never wait for one
another; :mod:`cairn.store.postgres.connection`), borrowed from a ``psycopg_pool`` pool
and given back when the thread ends, in autocommit mode outside
:meth:`PostgresBase.transaction`. The schema's migrations are
:mod:`cairn.store.postgres.schema`'s.

Writers serialise on a transaction-level advisory lock, so two indexers against one
database never interleave: the second waits (``wait`` seconds, default 5) and is then
refused with a clear message.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from cairn.config.locations import redact_password
from cairn.errors import StoreError
from cairn.store.lock import WriterLock
from cairn.store.postgres.connection import (
    Connection,
    configure,
    error_class,
    row_factory,
)
from cairn.store.postgres.schema import PostgresSchema
from cairn.store.postgres.steps import PG_TABLES
from cairn.store.sql.base import TableCopyMixin

WRITE_LOCK_KEY = 0x6361_6972_6E00  # "cairn\0": the advisory lock of index writers

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


class PostgresBase(PostgresSchema):
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
        self.path = redact_password(url)
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
                    kwargs={"autocommit": True, "row_factory": row_factory,
                            "connect_timeout": 10},
                    configure=configure, name="cairn")
            return self._pool

    def _connect(self) -> Any:
        """One connection outside the pool.

        Raises:
            StoreError: the server cannot be reached.
        """
        import psycopg

        try:
            raw = psycopg.connect(self.url, autocommit=True, row_factory=row_factory,
                                  connect_timeout=10)
        except psycopg.Error as exc:
            raise StoreError(f"{self.path}: cannot connect: {exc}".strip()) from exc
        configure(raw)
        return raw

    # --- lifecycle and transactions ---------------------------------------------------
    def writer_lock(self) -> WriterLock:
        """A new handle on the index's writer lock: a session-level advisory lock (see
        :mod:`cairn.store.postgres.lock`)."""
        from cairn.store.postgres.lock import AdvisoryWriterLock

        return AdvisoryWriterLock(self.url, self.path)

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
                raise error_class(exc)(f"{self.path}: cannot commit: {exc}") from exc
            self._analyze_grown()

    def _analyze_grown(self) -> None:
        """``ANALYZE`` the tables that changed by more than :data:`ANALYZE_GROWTH` of their
        rows (and at least :data:`ANALYZE_FROM`) since their statistics were taken; looked
        at after a commit, at most every :data:`ANALYZE_EVERY` seconds.

        Autovacuum does the same, but a minute or more later: during a first bulk load
        the planner would otherwise plan the graph step's queries over ``units`` for an
        empty table (a nested loop over every unit, which then takes most of the run).
        Errors (no right to analyze) are ignored."""
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
