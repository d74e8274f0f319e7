"""The connection, transactions and migrations of the SQLite store.

Every public method of :class:`cairn.store.sqlite.SQLiteStore` raises
:class:`cairn.errors.StoreError` (not ``sqlite3.Error``) naming the index file, the
operation and SQLite's reason (:func:`guard_errors`). ``PRAGMA user_version`` holds the
schema version of :data:`cairn.store.sql.migrations.MIGRATIONS`.
"""

from __future__ import annotations

import functools
import inspect
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FunctionType
from typing import Any, TypeVar

from cairn.errors import StoreError, StoreUnwritable
from cairn.store.lock import WriterLock
from cairn.store.sql.base import FTS_COLUMNS, SQLBase, TableCopyMixin, ident
from cairn.store.sql.migrations import MIGRATIONS, SCHEMA_VERSION
from cairn.store.sqlite import connect as _files
from cairn.store.sqlite.connect import (
    _connect_read_only,
    _read_only_media,
    _set_wal,
    register_functions,
)
from cairn.store.sqlite.held import HeldRows

_T = TypeVar("_T")

BULK_CHECKPOINT_PAGES = 10_000
"""The write-ahead log's automatic checkpoint inside :meth:`SQLiteBase.bulk_writes`, in
pages (SQLite's default: 1,000)."""


def guard_errors(cls: type[_T]) -> type[_T]:
    """Make every public method of ``cls`` (and of the classes it inherits) raise
    :class:`StoreError` instead of ``sqlite3.Error``, naming the index file, the
    operation and SQLite's reason — so no caller needs to know the backend."""
    for name in dir(cls):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(cls, name)
        if not isinstance(attr, FunctionType):
            continue

        def wrap(fn: Callable[..., Any], name: str = name) -> Callable[..., Any]:
            @functools.wraps(fn)
            def guarded(self: SQLiteBase, *args: Any, **kwargs: Any) -> Any:
                try:
                    return fn(self, *args, **kwargs)
                except sqlite3.Error as exc:
                    raise _error(exc)(f"{self.path}: {name} failed: {_reason(exc)}") from exc

            return guarded

        setattr(cls, name, wrap(attr))
    return cls


def _error(exc: sqlite3.Error) -> type[StoreError]:
    """:class:`StoreUnwritable` for a full disk or a read-only index, else
    :class:`StoreError`."""
    low = str(exc).lower()
    if "full" in low or "readonly" in low or "read-only" in low or _write_failed(exc):
        return StoreUnwritable
    return StoreError


def _write_failed(exc: sqlite3.Error) -> bool:
    """Whether the operating system refused a write to the index or its log: SQLite
    says "disk I/O error" for any errno but ENOSPC (a file-size limit's EFBIG, a quota,
    a failing disk)."""
    return getattr(exc, "sqlite_errorname", "") == "SQLITE_IOERR_WRITE"


def _reason(exc: sqlite3.Error) -> str:
    """SQLite's reason, with advice where the usual cause is known."""
    msg = str(exc)
    low = msg.lower()
    if "locked" in low or "busy" in low:
        return f"{msg} (another cairn process is writing this index; try again)"
    if "disk is full" in low or "database or disk is full" in low:
        return f"{msg} (free some disk space, then run the command again)"
    if "readonly" in low:
        return f"{msg} (the index file or its folder is read-only)"
    if _write_failed(exc):
        return (f"{msg}: a write to the index was refused (the disk is full, a file-size "
                "limit or quota is reached, or the disk fails)")
    return msg


class SQLiteBase(SQLBase):
    """The connection, transactions and migrations of one SQLite file."""

    path: str

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._closed = False
        self._made = False  # the file exists: later connections must not create one
        if self.path != ":memory:" and Path(self.path).is_dir():
            raise StoreError(f"{self.path}: a folder, not an index file (name a file such "
                             "as cairn.db, new or made by cairn)")
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._migrate()
            self._made = True
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open index: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create index folder: {exc}") from exc

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection (made on first use): each thread reads on its own
        connection, so readers never wait for one another and, in WAL mode, never for
        the writer; writers take SQLite's write lock one at a time (``busy_timeout``).
        An in-memory index has one connection, shared by every thread.

        Raises:
            StoreError: the store is closed or the connection cannot be made.
        """
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            if not _files.replaced(self.path, self._local, conn):
                return conn
            with self._lock:  # a restore or a sync tool put another file in its place
                if conn in self._connections:
                    self._connections.remove(conn)
            with suppress(sqlite3.Error):
                conn.close()
        with self._lock:
            if self._closed:
                raise StoreError(f"{self.path}: the index is closed")
            if self.path == ":memory:" and self._connections:
                conn = self._connections[0]
            else:
                try:
                    conn = self._connect()
                except sqlite3.Error as exc:
                    raise StoreError(f"{self.path}: cannot open index: {exc}") from exc
                self._connections.append(conn)
        self._local.conn = conn
        return conn

    def _connect(self) -> sqlite3.Connection:
        _files.remember_file(self.path, self._local)
        # once the index exists, a thread's new connection opens it ``mode=rw``: a file
        # deleted under a running server is then an error, never a new empty index
        target, uri = ((Path(self.path).absolute().as_uri() + "?mode=rw", True)
                       if self._made and self.path != ":memory:" else (self.path, False))
        conn = sqlite3.connect(target, uri=uri, isolation_level=None, check_same_thread=False)
        try:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA busy_timeout = 5000")
            conn.execute("PRAGMA foreign_keys = ON")
            if self.path != ":memory:":
                _set_wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.OperationalError:
            conn.close()
            if not _read_only_media(self.path):
                raise
            conn = _connect_read_only(self.path)
        register_functions(conn)  # cairn_ts_match, the date filters' SQL function
        return conn

    # --- lifecycle --------------------------------------------------------------------
    def _migrate(self) -> None:
        """Bring the schema to :data:`SCHEMA_VERSION`, under the write lock: the version
        is read again inside the transaction, so two processes opening a new index at
        once do not both create its tables."""
        if self._user_version() == SCHEMA_VERSION:
            return
        with self.transaction():
            version = self._user_version()
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: index schema version {version} is newer than this cairn "
                    f"({SCHEMA_VERSION}); upgrade cairn or rebuild the index"
                )
            if version == 0:
                tables = self.db.execute(
                    "SELECT count(*) FROM sqlite_master WHERE type='table'"
                ).fetchone()[0]
                if tables:
                    raise StoreError(
                        f"{self.path}: not a cairn index (unknown tables, no version)"
                    )
            for i in range(version, SCHEMA_VERSION):
                for stmt in MIGRATIONS[i].split(";"):
                    if stmt.strip():
                        self.db.execute(stmt)
                self._after_migration(i + 1)
                self.db.execute(f"PRAGMA user_version = {i + 1}")

    def _user_version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def change_token(self) -> tuple[int, int, int] | None:
        """``(connection, data_version, total_changes)`` of this thread's connection:
        ``data_version`` moves when another connection (or process) commits,
        ``total_changes`` when this one writes; the connection's identity keeps two
        threads' values apart (connections live as long as the store). ``None`` for a
        backend that is not SQLite underneath."""
        conn = self.db
        if not isinstance(conn, sqlite3.Connection):
            return None
        try:
            version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error:
            return None
        return (id(conn), version, conn.total_changes)

    def close(self) -> None:
        """Close every connection (idempotent); the store cannot be used afterwards."""
        with self._lock:
            self._closed = True
            conns, self._connections = self._connections, []
        for conn in conns:
            with suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction; rolled back if the block raises.

        Inside an open transaction it nests as a savepoint, so one file's failure can
        be rolled back without losing the rest of a batch.
        """
        if self.db.in_transaction:
            with self.savepoint():
                yield
            return
        held = HeldRows() if getattr(self._local, "bulk", False) else None
        # One try from BEGIN to COMMIT: Ctrl-C at any point of it (the held keyword
        # rows' insert and COMMIT included) rolls the transaction back. Left open, it
        # would swallow every later write of this connection (each a savepoint of it)
        # and lose them when the connection closes.
        phase = "start a write"
        try:
            self.db.execute("BEGIN IMMEDIATE")
            phase = ""
            self._local.held = held
            yield
            phase = "commit"
            self._write_held()
            self.db.execute("COMMIT")
        except BaseException as exc:
            self._roll_back()
            if phase and isinstance(exc, sqlite3.Error):
                raise _error(exc)(f"{self.path}: cannot {phase}: {_reason(exc)}") from exc
            raise
        finally:
            self._local.held = None

    def _roll_back(self) -> None:
        """End the open transaction, if one is, undoing it; a second Ctrl-C while it
        does so is raised only once it is done."""
        try:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        except KeyboardInterrupt:
            with suppress(sqlite3.Error):
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
            raise

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested unit of work inside a transaction; undone alone if the block raises."""
        depth = getattr(self._local, "sp", 0) + 1
        self._local.sp = depth
        name = f"sp{depth}"
        self.db.execute(f"SAVEPOINT {name}")
        held: HeldRows | None = getattr(self._local, "held", None)
        if held is not None:
            held.enter()
        try:
            yield
        except BaseException as exc:
            if held is not None:  # the keyword rows of what is undone go with it
                held.undo()
            # SQLite may have rolled the whole transaction back already (a full disk)
            with suppress(sqlite3.Error):
                self.db.execute(f"ROLLBACK TO {name}")
                self.db.execute(f"RELEASE {name}")
            if isinstance(exc, sqlite3.Error) and (
                _error(exc) is StoreUnwritable or not self.db.in_transaction
            ):
                # Not one unit of work's fault: the index cannot be written, or SQLite
                # ended the whole transaction. A caller that records the failure and
                # goes on would write outside any transaction and then fail to commit,
                # so the run must stop here with the reason.
                raise StoreUnwritable(f"{self.path}: cannot write: {_reason(exc)}") from exc
            raise
        else:
            self.db.execute(f"RELEASE {name}")
            if held is not None:
                held.release()
        finally:
            self._local.sp = depth - 1

    @contextmanager
    def bulk_writes(self) -> Iterator[None]:
        """Many files written in a row (an index run, its link resolution and graph
        step) on this thread's connection.

        Inside, each transaction's keyword-index rows are held and go into FTS5 in one
        statement before it commits (see :mod:`cairn.store.sqlite.held`), and the log
        is checkpointed less often (:data:`BULK_CHECKPOINT_PAGES`), so a page changed
        by many commits is copied into the index file fewer times; the setting is put
        back on exit. (A larger page cache saved few bytes written for a visibly larger
        resident memory: not changed.)
        """
        conn = self.db
        checkpoint = int(conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
        was = getattr(self._local, "bulk", False)
        conn.execute(f"PRAGMA wal_autocheckpoint = {max(checkpoint, BULK_CHECKPOINT_PAGES)}")
        self._local.bulk = True
        try:
            yield
        finally:
            self._local.bulk = was
            with suppress(sqlite3.Error):
                conn.execute(f"PRAGMA wal_autocheckpoint = {checkpoint}")

    def _hold_keyword_rows(self, rows: Sequence[Sequence[Any]]) -> bool:
        """Hold ``rows`` for ``units_fts`` (see :meth:`bulk_writes`); ``False``: not in
        such a transaction, the caller writes them now."""
        held: HeldRows | None = getattr(self._local, "held", None)
        if held is None:
            return False
        if held.add(rows):
            self._write_held()
        return True

    def _write_held(self) -> None:
        """Insert the held keyword-index rows that wait, if any."""
        held: HeldRows | None = getattr(self._local, "held", None)
        if held is None:
            return
        waiting = held.waiting()
        if waiting:
            self.db.executemany(
                "INSERT INTO units_fts(rowid, title, outline_path, tags, body, cjk, meta) "
                "VALUES (?,?,?,?,?,?,?)",
                waiting,
            )
        held.wrote()

    def ensure_component(self, name: str, migrations: Sequence[str]) -> None:
        """Create or migrate the tables of an optional component (vectors, edges …).

        Each component keeps its own version in ``components``: ``migrations[i]`` is a
        script of ``;``-separated statements bringing it from version ``i`` to ``i + 1``.
        Idempotent; safe to call on every open.

        Raises:
            StoreError: the database holds a newer version of the component.
        """
        version = self._component_version(name, migrations)
        for i in range(version, len(migrations)):
            with self.transaction():
                self._component_step(name, migrations, i)

    def writer_lock(self) -> WriterLock:
        """A new handle on the index's writer lock: ``<index>.lock`` beside the file."""
        return WriterLock(self.path)

    @property
    def schema_version(self) -> int:
        """The database's schema version (``PRAGMA user_version``)."""
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])


class SQLiteTableCopy(TableCopyMixin, SQLiteBase):
    """Whole-table reads and writes (see :class:`cairn.store.sql.base.TableCopyMixin`)
    with SQLite's catalogue."""

    def table_names(self) -> list[str]:
        """The index's own tables (FTS shadow tables and bookkeeping excluded)."""
        rows = self.db.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE 'units\\_fts\\_%' ESCAPE '\\' ORDER BY name"
        )
        return [str(r[0]) for r in rows if r[0] != "components"]

    def table_columns(self, table: str) -> list[str]:
        """The columns a copy reads and writes (``rowid`` first for ``units_fts``)."""
        if table == "units_fts":
            return list(FTS_COLUMNS)
        return [str(r[1]) for r in self.db.execute(f"PRAGMA table_info({ident(table)})")]
