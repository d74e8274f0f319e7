"""Opening an SQLite index file: WAL mode despite a second process creating the same
new file, and a read-only connection for an index on read-only media."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any


def _read_only_media(path: str) -> bool:
    """Whether ``path`` is an index that can only be read where it lies: a file on a
    read-only file system, or in a folder this user may not write, with no write-ahead
    log beside it (a WAL-mode database needs its ``-shm`` file, which cannot be made
    there, and a reader cannot take a lock)."""
    if path == ":memory:" or not os.path.isfile(path) or os.path.exists(path + "-wal"):
        return False
    folder = os.path.dirname(os.path.abspath(path))
    try:
        if os.statvfs(folder).f_flag & getattr(os, "ST_RDONLY", 0):
            return True
    except (OSError, AttributeError):
        pass
    return not os.access(folder, os.W_OK)


def _connect_read_only(path: str) -> sqlite3.Connection:
    """A read-only connection to an index on read-only media (see
    :func:`_read_only_media`): ``immutable`` tells SQLite that nobody writes the file,
    which holds there, so it needs neither the ``-shm`` file nor locks. A write on it
    fails as "attempt to write a readonly database" (:class:`StoreUnwritable`)."""
    uri = Path(path).absolute().as_uri() + "?mode=ro&immutable=1"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _set_wal(conn: sqlite3.Connection, seconds: float = 10.0) -> None:
    """Put ``conn``'s database in WAL mode, retrying while another process holds it.

    Changing the journal mode takes an exclusive lock, and SQLite answers "database is
    locked" at once (without its busy handler) when another connection is creating or
    converting the same brand-new file, as two ``cairn index`` runs started together
    do; the second then waits here for the first and meets the writer lock instead.

    Raises:
        sqlite3.OperationalError: still locked after ``seconds``, or any other error.
    """
    deadline = time.monotonic() + seconds
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


FILE_CHECK_SECONDS = 1.0
"""How often (at most, per thread) a connection checks that its index file is still
the one at its path."""


def _file_id(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def remember_file(path: str, local: Any) -> None:
    """Before a thread connects: note which file ``path`` is now (device and inode)."""
    local.file_id = None if path == ":memory:" else _file_id(path)
    local.checked = time.monotonic()


def replaced(path: str, local: Any, conn: sqlite3.Connection) -> bool:
    """Whether the thread's connection should be made again because another file was
    put at ``path`` (a restore, a sync tool's rename) since it connected: its reads
    would see the old file, and its writes corrupt the new one beside the old WAL.
    Checked at most every :data:`FILE_CHECK_SECONDS`, never inside a transaction."""
    known = getattr(local, "file_id", None)
    now = time.monotonic()
    if known is None or now - local.checked < FILE_CHECK_SECONDS or conn.in_transaction:
        return False
    local.checked = now
    current = _file_id(path)
    return current is not None and current != known


def register_functions(conn: sqlite3.Connection) -> None:
    """Make the shared SQL's own functions callable on ``conn``: ``cairn_ts_match``,
    the date filters' matching (:func:`cairn.store.sql.datefn.ts_match`)."""
    from cairn.store.sql.datefn import ts_match

    conn.create_function("cairn_ts_match", 4, ts_match, deterministic=True)
