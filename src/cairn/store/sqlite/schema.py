"""Schema, migrations and the connection of the SQLite store (see ``store.py``)."""

from __future__ import annotations

import functools
import inspect
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FunctionType
from typing import Any, TypeVar

from cairn.errors import StoreError, StoreUnwritable
from cairn.store.lock import WriterLock
from cairn.store.sqlite import connect as _files
from cairn.store.sqlite.connect import _connect_read_only, _read_only_media, _set_wal

MIGRATIONS: tuple[str, ...] = (
    # 0 -> 1: the initial schema
    """
    CREATE TABLE roots (
        id TEXT PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        include TEXT NOT NULL DEFAULT '[]',
        exclude TEXT NOT NULL DEFAULT '[]',
        added TEXT NOT NULL
    );
    CREATE TABLE files (
        root_id TEXT NOT NULL REFERENCES roots(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime REAL NOT NULL,
        hash TEXT NOT NULL,
        format TEXT,
        status TEXT NOT NULL,
        reason TEXT,
        line INTEGER,
        PRIMARY KEY (root_id, path)
    );
    CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        root_id TEXT NOT NULL,
        path TEXT NOT NULL,
        key TEXT,
        format TEXT NOT NULL,
        title TEXT NOT NULL,
        metadata TEXT NOT NULL,
        tags TEXT NOT NULL,
        aliases TEXT NOT NULL,
        created TEXT,
        modified TEXT,
        visibility TEXT,
        type TEXT,
        declared_id TEXT,
        content_hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime REAL NOT NULL,
        warnings TEXT NOT NULL,
        FOREIGN KEY (root_id, path) REFERENCES files(root_id, path) ON DELETE CASCADE
    );
    CREATE INDEX documents_file ON documents(root_id, path);
    CREATE INDEX documents_declared ON documents(declared_id);
    CREATE TABLE units (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        parent_id TEXT,
        ordinal INTEGER NOT NULL,
        level INTEGER NOT NULL,
        kind TEXT NOT NULL,
        title TEXT NOT NULL,
        outline_path TEXT NOT NULL,
        body TEXT NOT NULL,
        tags TEXT NOT NULL,
        inherited_tags TEXT NOT NULL,
        properties TEXT NOT NULL,
        todo TEXT,
        todo_state TEXT,
        priority TEXT,
        timestamps TEXT NOT NULL,
        org_id TEXT,
        custom_id TEXT,
        declared_id TEXT,
        line_start INTEGER NOT NULL,
        line_end INTEGER NOT NULL,
        language TEXT,
        extra TEXT NOT NULL,
        role TEXT,
        time TEXT,
        alternate INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX units_document ON units(document_id, ordinal);
    CREATE INDEX units_parent ON units(parent_id);
    CREATE INDEX units_org_id ON units(org_id);
    CREATE TABLE unit_tags (
        unit_rowid INTEGER NOT NULL REFERENCES units(rowid) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        inherited INTEGER NOT NULL
    );
    CREATE INDEX unit_tags_tag ON unit_tags(tag);
    CREATE INDEX unit_tags_unit ON unit_tags(unit_rowid);
    CREATE TABLE links (
        id INTEGER PRIMARY KEY,
        unit_id TEXT NOT NULL REFERENCES units(id) ON DELETE CASCADE,
        document_id TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        kind TEXT NOT NULL,
        target TEXT NOT NULL,
        alias TEXT,
        anchor TEXT,
        line INTEGER,
        raw TEXT NOT NULL,
        resolved_document_id TEXT,
        resolved_unit_id TEXT,
        unresolved_reason TEXT
    );
    CREATE INDEX links_unit ON links(unit_id);
    CREATE INDEX links_document ON links(document_id);
    CREATE INDEX links_resolved_doc ON links(resolved_document_id);
    CREATE INDEX links_resolved_unit ON links(resolved_unit_id);
    CREATE TABLE attachments (
        root_id TEXT NOT NULL REFERENCES roots(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        PRIMARY KEY (root_id, path)
    );
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        started TEXT NOT NULL,
        finished TEXT,
        config_hash TEXT NOT NULL,
        seen INTEGER NOT NULL DEFAULT 0,
        added INTEGER NOT NULL DEFAULT 0,
        changed INTEGER NOT NULL DEFAULT 0,
        removed INTEGER NOT NULL DEFAULT 0,
        unchanged INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0,
        skipped INTEGER NOT NULL DEFAULT 0,
        failures TEXT NOT NULL DEFAULT '[]',
        warnings TEXT NOT NULL DEFAULT '[]',
        seconds REAL NOT NULL DEFAULT 0
    );
    CREATE VIRTUAL TABLE units_fts USING fts5(
        title, outline_path, tags, body, cjk,
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    """,
    # 1 -> 2: dream reports (cairn.maintain.dream): the last reports, newest by id
    """
    CREATE TABLE dream_reports (
        id TEXT PRIMARY KEY,
        created TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        checks TEXT NOT NULL,
        data TEXT NOT NULL
    );
    """,
    # 2 -> 3: a ``meta`` FTS column (frontmatter and property keys and values, TODO
    # keywords, tags: metadata searchable by plain words); FTS5 cannot add a column, so
    # the table is rebuilt with the old columns' text, and every document is marked to
    # be parsed and stored again by the next run (which fills ``meta``)
    """
    CREATE VIRTUAL TABLE units_fts_v2 USING fts5(
        title, outline_path, tags, body, cjk, meta,
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    INSERT INTO units_fts_v2(rowid, title, outline_path, tags, body, cjk, meta)
        SELECT rowid, title, outline_path, tags, body, cjk, '' FROM units_fts;
    DROP TABLE units_fts;
    ALTER TABLE units_fts_v2 RENAME TO units_fts;
    UPDATE runs SET config_hash = '';
    UPDATE documents SET content_hash = ''
    """,
    # 3 -> 4: a covering index of documents' content hashes, so finding what changed
    # since the last graph update reads the index, not every document row (a small
    # index run on a large root: cairn memory remember, cairn watch)
    """
    CREATE INDEX IF NOT EXISTS documents_hash ON documents(id, content_hash)
    """,
    # 4 -> 5: no duplicate text: ``units_fts`` becomes an external-content FTS5 table
    # over the view ``units_fts_source``, which reads a unit's title and body from
    # ``units`` and only what differs (normalised text, aliases, outline, tags, CJK
    # bigrams, metadata words) from ``units_fts_text`` (NULL: as in ``units``); the
    # index itself is rebuilt from the view (same tokens, same rowids); and the indexes
    # no query searches by go (EXPLAIN QUERY PLAN of every statement a run, a search
    # and the graph queries execute: bench/plans.py)
    """
    DROP INDEX IF EXISTS units_parent;
    DROP INDEX IF EXISTS units_org_id;
    DROP INDEX IF EXISTS unit_tags_tag;
    DROP INDEX IF EXISTS links_resolved_unit;
    DROP INDEX IF EXISTS documents_declared;
    CREATE TABLE units_fts_text (
        rowid INTEGER PRIMARY KEY,
        title TEXT,
        outline_path TEXT,
        tags TEXT,
        body TEXT,
        cjk TEXT,
        meta TEXT
    );
    INSERT INTO units_fts_text(rowid, title, outline_path, tags, body, cjk, meta)
        SELECT f.rowid, CASE WHEN f.title = u.title THEN NULL ELSE f.title END,
            nullif(f.outline_path, ''), nullif(f.tags, ''),
            CASE WHEN f.body = u.body THEN NULL ELSE f.body END,
            nullif(f.cjk, ''), nullif(f.meta, '')
        FROM units_fts f JOIN units u ON u.rowid = f.rowid;
    DROP TABLE units_fts;
    CREATE VIEW units_fts_source AS
        SELECT u.rowid AS rowid, coalesce(x.title, u.title) AS title,
            coalesce(x.outline_path, '') AS outline_path, coalesce(x.tags, '') AS tags,
            coalesce(x.body, u.body) AS body, coalesce(x.cjk, '') AS cjk,
            coalesce(x.meta, '') AS meta
        FROM units_fts_text x JOIN units u ON u.rowid = x.rowid;
    CREATE VIRTUAL TABLE units_fts USING fts5(
        title, outline_path, tags, body, cjk, meta,
        content = 'units_fts_source', content_rowid = 'rowid',
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    INSERT INTO units_fts(units_fts) VALUES ('rebuild')
    """,
    # 5 -> 6: what units carry, by the key a query phrase is looked up by (carried.py)
    """
    CREATE TABLE IF NOT EXISTS vocabulary (key TEXT NOT NULL, kind TEXT NOT NULL, name TEXT,
        value TEXT, source INTEGER, ord INTEGER, unit_id TEXT, document_id TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS vocabulary_key ON vocabulary(key, kind, name, value, source, ord);
    CREATE INDEX IF NOT EXISTS vocabulary_document ON vocabulary(document_id)
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

FTS_COLUMNS = ("rowid", "title", "outline_path", "tags", "body", "cjk", "meta")
"""The columns of a unit's keyword-index row (``units_fts``), in order."""


def _j(value: Any) -> str:
    """``value`` as stored JSON text (the empty list and mapping, most values, without
    calling the encoder)."""
    if not value and isinstance(value, list | dict):
        return "[]" if isinstance(value, list) else "{}"
    return json.dumps(value, ensure_ascii=False, default=str)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


_T = TypeVar("_T")


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


class SQLiteBase:
    """The connection, transactions and migrations; the role mixins build on it."""

    path: str

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._closed = False
        if self.path != ":memory:" and Path(self.path).is_dir():
            raise StoreError(f"{self.path}: a folder, not an index file (name a file such "
                             "as cairn.db, new or made by cairn)")
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._migrate()
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
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
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
        from cairn.store.sqlite.datefn import register

        register(conn)  # cairn_ts_match, the date filters' SQL function
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

    def _after_migration(self, version: int) -> None:
        """A migration's work beyond SQL: the vocabulary filed from the stored rows."""
        from cairn.store.sqlite.carried import VOCABULARY, refile_vocabulary  # builds on this
        if version == VOCABULARY:
            refile_vocabulary(self)

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
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise _error(exc)(f"{self.path}: cannot start a write: {_reason(exc)}") from exc
        try:
            yield
        except BaseException:
            with suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            raise
        else:
            try:
                self.db.execute("COMMIT")
            except sqlite3.Error as exc:
                with suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
                raise _error(exc)(f"{self.path}: cannot commit: {_reason(exc)}") from exc

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested unit of work inside a transaction; undone alone if the block raises."""
        depth = getattr(self._local, "sp", 0) + 1
        self._local.sp = depth
        name = f"sp{depth}"
        self.db.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            # SQLite may have rolled the whole transaction back already (a full disk)
            with suppress(sqlite3.Error):
                self.db.execute(f"ROLLBACK TO {name}")
                self.db.execute(f"RELEASE {name}")
            raise
        else:
            self.db.execute(f"RELEASE {name}")
        finally:
            self._local.sp = depth - 1

    def ensure_component(self, name: str, migrations: Sequence[str]) -> None:
        """Create or migrate the tables of an optional component (vectors, edges …).

        Each component keeps its own version in ``components``: ``migrations[i]`` is a
        script of ``;``-separated statements bringing it from version ``i`` to ``i + 1``.
        Idempotent; safe to call on every open.

        Raises:
            StoreError: the database holds a newer version of the component.
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
        for i in range(version, len(migrations)):
            with self.transaction():
                for stmt in migrations[i].split(";"):
                    if stmt.strip():
                        self.db.execute(stmt)
                self.db.execute(
                    "INSERT INTO components(name, version) VALUES (?, ?) "
                    "ON CONFLICT(name) DO UPDATE SET version=excluded.version",
                    (name, i + 1),
                )

    def writer_lock(self) -> WriterLock:
        """A new handle on the index's writer lock: ``<index>.lock`` beside the file."""
        return WriterLock(self.path)

    @property
    def schema_version(self) -> int:
        """The database's schema version (``PRAGMA user_version``)."""
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

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


class TableCopyMixin(SQLiteBase):
    """Whole-table reads and writes for moving an index between backends
    (``cairn store copy``); see :func:`cairn.store.copy.copy_store`."""

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
        return [str(r[1]) for r in self.db.execute(f"PRAGMA table_info({_ident(table)})")]

    def read_table(self, table: str, columns: Sequence[str]) -> Iterator[tuple[Any, ...]]:
        """Every row of ``table`` (those columns), in a stable order."""
        cols = ", ".join(_ident(c) for c in columns)
        for row in self.db.execute(f"SELECT {cols} FROM {_ident(table)}"):
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
        cols = ", ".join(_ident(c) for c in columns)
        marks = ", ".join("?" for _ in columns)
        self.db.executemany(f"INSERT INTO {_ident(table)}({cols}) VALUES ({marks})", rows)

    def clear_table(self, table: str) -> None:
        """Delete every row of ``table`` (a copy's target bookkeeping)."""
        self.db.execute(f"DELETE FROM {_ident(table)}")

    def finish_copy(self) -> None:
        """Bring counters up to date after a copy (nothing to do in SQLite)."""


def _ident(name: str) -> str:
    """``name`` as a quoted SQL identifier (table and column names from the catalogue)."""
    return '"' + name.replace('"', '""') + '"'
