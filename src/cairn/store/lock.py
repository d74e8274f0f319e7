"""The writer lock of an index: one writer at a time, readers never block.

An OS file lock (``flock``) on ``<index>.lock`` beside the database. The operating
system releases it when the process dies (a SIGKILL, a power cut), so a crashed run
never leaves a stale lock. Readers do not take it: SQLite's WAL mode lets them read
the last committed state while a writer works.

Example::

    lock = WriterLock("notes.db")
    with lock.hold(wait=30):   # IndexBusy after 30 s
        ...write...
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cairn.errors import StoreError, StoreUnwritable

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]


class IndexBusy(StoreError):
    """Another process holds the index's writer lock (it is indexing or watching)."""


def lock_path(db_path: str | os.PathLike[str]) -> Path:
    """The lock file of an index: ``<index>.lock`` beside it."""
    return Path(f"{os.fspath(db_path)}.lock")


class WriterLock:
    """The writer lock of one index file; re-entrant within one holder.

    Args:
        db_path: the index file (``:memory:`` or ``""``: no lock, always granted).
    """

    def __init__(self, db_path: str | os.PathLike[str]) -> None:
        self.db_path = os.fspath(db_path)
        self._handle: Any = None
        self._depth = 0

    @property
    def held(self) -> bool:
        """Whether this object holds the lock now."""
        return self._depth > 0

    def acquire(
        self, wait: float | None = 0.0, on_wait: Callable[[str], None] | None = None
    ) -> None:
        """Take the lock.

        Args:
            wait: seconds to wait for another writer to finish (``0``: do not wait;
                ``None``: wait as long as it takes).
            on_wait: called once with a message when the lock is taken by another
                process and this call starts waiting.

        Raises:
            IndexBusy: another process still holds it after ``wait`` seconds.
            StoreError: the lock cannot be made or taken (:class:`StoreUnwritable` for a
                read-only folder).
        """
        if self._depth:
            self._depth += 1
            return
        if self._always_granted():
            self._depth = 1
            return
        handle = self._open()
        deadline = None if wait is None else time.monotonic() + max(0.0, wait)
        told = False
        try:
            while not self._try(handle):
                if deadline is not None and time.monotonic() >= deadline:
                    raise IndexBusy(
                        f"{self.db_path}: another cairn process is writing this index "
                        "(`cairn index` or `cairn watch`); the index is fine: wait for it "
                        "to finish, or run again with --wait"
                    )
                if not told and on_wait is not None:
                    on_wait(f"{self.db_path}: another cairn process is writing this index; "
                            "waiting…")
                    told = True
                time.sleep(0.05)
        except BaseException:
            self._close(handle)
            raise
        self._handle = handle
        self._depth = 1

    def release(self) -> None:
        """Give the lock back (the last of nested :meth:`acquire` calls releases it)."""
        if self._depth == 0:
            return
        self._depth -= 1
        if self._depth == 0 and self._handle is not None:
            handle, self._handle = self._handle, None
            try:
                self._unlock(handle)
            finally:
                self._close(handle)

    # --- the backend's lock: a flock on ``<index>.lock`` here ---------------------------
    def _always_granted(self) -> bool:
        """No lock to take (an in-memory index, or no ``flock`` on this system)."""
        return self.db_path in ("", ":memory:") or fcntl is None

    def _open(self) -> Any:
        """What the lock is held on (here the lock file's descriptor).

        Raises:
            StoreError: it cannot be made.
        """
        path = lock_path(self.db_path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as exc:
            if exc.errno in (13, 30):  # EACCES, EROFS: nobody can write this index
                raise StoreUnwritable(
                    f"{self.db_path}: cannot write the index: {exc.strerror} "
                    "(the index file or its folder is read-only)"
                ) from exc
            raise StoreError(f"{path}: cannot create the writer lock: {exc.strerror}") from exc

    def _try(self, handle: Any) -> bool:
        """Take the lock if it is free; whether it was taken.

        Raises:
            StoreError: the lock cannot be taken at all.
        """
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        except OSError as exc:
            raise StoreError(f"{lock_path(self.db_path)}: cannot take the writer lock: "
                             f"{exc.strerror}") from exc

    def _unlock(self, handle: Any) -> None:
        fcntl.flock(handle, fcntl.LOCK_UN)

    def _close(self, handle: Any) -> None:
        os.close(handle)

    @contextmanager
    def hold(
        self, wait: float | None = 0.0, on_wait: Callable[[str], None] | None = None
    ) -> Iterator[None]:
        """``acquire`` … ``release`` as a context (see :meth:`acquire`)."""
        self.acquire(wait, on_wait)
        try:
            yield
        finally:
            self.release()
