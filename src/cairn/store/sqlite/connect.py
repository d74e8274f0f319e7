"""Opening an SQLite index file: WAL mode despite a second process creating the same
new file, and a read-only connection for an index on read-only media."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path


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
