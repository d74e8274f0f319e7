"""Atomic, compare-and-swap, backed-up writes of one file (see :mod:`cairn.writeback`)."""

from __future__ import annotations

import contextlib
import difflib
import errno
import fcntl
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cairn.errors import CairnError
from cairn.model.tempnames import remove_stale_temps, temp_path


class WriteConflict(CairnError):
    """The file is not what the writer based its change on (changed since indexing,
    created meanwhile, or removed): nothing was written.

    Attributes:
        path: the target file.
        expected: the SHA-256 hex the writer expected (``None``: expected no file).
        actual: the SHA-256 hex on disk (``None``: no file there).
    """

    def __init__(self, path: Path, expected: str | None, actual: str | None) -> None:
        if expected is None:
            why = "it already exists"
        elif actual is None:
            why = "it no longer exists"
        else:
            why = "it changed since it was indexed (re-index, then try again)"
        super().__init__(f"{path}: not written: {why}")
        self.path = path
        self.expected = expected
        self.actual = actual


@dataclass(frozen=True, slots=True)
class Backup:
    """One kept version of a file.

    Attributes:
        id: unique, sortable by time (``"20261201T123456123456Z-1a2b3c4d"``).
        path: the file it was taken from (absolute).
        sha256: SHA-256 hex of the kept bytes.
        time: when it was taken, ISO 8601 UTC.
        reason: what replaced it (``"dream: retarget link"``), may be ``""``.
        batch: the write batch it belongs to (one dream run, one restore), ``""`` for
            a backup logged before batches were recorded.
        action: ``"replaced"`` (the bytes a write replaced) or ``"created"`` (the bytes
            cairn wrote into a new file, which restoring removes).
        made_dirs: for a created file, how many of its parent folders cairn created
            for it (removed with it when they are left empty).
    """

    id: str
    path: Path
    sha256: str
    time: str
    reason: str
    batch: str = ""
    action: str = "replaced"
    made_dirs: int = 0


class BackupFolder(Protocol):
    """Where :func:`write_file` keeps the bytes it replaces and takes its per-file lock
    (:class:`cairn.writeback.Backups`; a protocol here so that the writer does not
    depend on how backups are stored)."""

    def lock_path(self, target: Path) -> Path:
        """The lock file that serialises writers of ``target``."""
        ...

    def save(self, path: Path, data: bytes, *, reason: str = "") -> Backup:
        """Keep ``data``, the bytes about to be replaced at ``path``, durably."""
        ...


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What one write did.

    Attributes:
        path: the file written (absolute).
        sha256: SHA-256 hex of the new bytes.
        previous_sha256: SHA-256 hex of the bytes replaced, ``None`` for a new file.
        backup: where the previous bytes were kept, ``None`` for a new file or when no
            backup folder was given.
    """

    path: Path
    sha256: str
    previous_sha256: str | None
    backup: Backup | None


def sha256_bytes(data: bytes) -> str:
    """SHA-256 hex digest of ``data`` (the content hash the index stores)."""
    return hashlib.sha256(data).hexdigest()


def unified_diff(
    path: Path | str, old: bytes, new: bytes, *, context: int = 3, created: bool = False
) -> str:
    """A unified diff of ``old`` → ``new`` for ``--dry-run`` output (``""`` if equal).

    Bytes are decoded as UTF-8 with replacement characters; line endings are kept.
    ``path`` names the file in the headers as git does (``--- a/notes/x.md``): pass it
    relative to its root; an absolute path loses its leading ``/`` there rather than
    reading ``a//…``. ``created``: the file is new (``--- /dev/null``).
    """
    a = old.decode("utf-8", "replace").splitlines(keepends=True)
    b = new.decode("utf-8", "replace").splitlines(keepends=True)
    name = Path(path).as_posix().lstrip("/")
    before = "/dev/null" if created else f"a/{name}"
    lines = difflib.unified_diff(a, b, before, f"b/{name}", n=context)
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def _current(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temp_beside(path: Path, data: bytes, mode: int | None) -> Path:
    """Write ``data`` to a new hidden temporary file beside ``path`` and fsync it."""
    remove_stale_temps(path.parent)  # leftovers of killed writers (dead PIDs only)
    tmp = temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return tmp


@contextlib.contextmanager
def _locked(path: Path, backups: BackupFolder | None) -> Iterator[None]:
    """Serialise cairn writers of one file (an flock in the backup folder)."""
    if backups is None:
        yield
        return
    lock = backups.lock_path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def write_file(
    path: Path,
    data: bytes,
    *,
    expected_sha256: str | None,
    backups: BackupFolder | None,
    reason: str = "",
) -> WriteResult:
    """Replace (or create) ``path`` with ``data``, atomically and only if unchanged.

    Args:
        path: the target file; its folder must exist.
        data: the complete new content.
        expected_sha256: SHA-256 hex of the bytes the change was based on, or ``None``
            when the file must not exist yet.
        backups: where the previous bytes are kept (``None``: no backup, no lock —
            only for files cairn itself owns, e.g. an export destination).
        reason: a short note stored with the backup (``"dream: retarget link"``).

    Returns:
        A :class:`WriteResult`. Writing bytes equal to the current ones is a no-op that
        still returns a result (``backup`` is ``None``).

    Raises:
        WriteConflict: the file on disk is not ``expected_sha256`` (nothing written).
        OSError: the folder is missing or unwritable, the disk is full (the target is
            untouched; the temporary file is removed).
    """
    path = Path(os.path.abspath(path))
    with _locked(path, backups):
        old = _current(path)
        actual = None if old is None else sha256_bytes(old)
        if actual != expected_sha256:
            raise WriteConflict(path, expected_sha256, actual)
        new_hash = sha256_bytes(data)
        if old is not None and actual == new_hash:
            return WriteResult(path, new_hash, actual, None)
        mode = None
        if old is not None:
            mode = path.stat().st_mode & 0o7777
        backup = None
        if old is not None and backups is not None:
            backup = backups.save(path, old, reason=reason)
        tmp = _temp_beside(path, data, mode if mode is not None else 0o644)
        try:
            # a last look: an editor may have saved while the backup was written
            again = _current(path)
            if (None if again is None else sha256_bytes(again)) != expected_sha256:
                raise WriteConflict(
                    path, expected_sha256, None if again is None else sha256_bytes(again)
                )
            if old is None:
                try:
                    os.link(tmp, path)  # fails if the file appeared meanwhile
                except FileExistsError:
                    raise WriteConflict(path, None, sha256_bytes(path.read_bytes())) from None
                tmp.unlink()
            else:
                os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        _fsync_dir(path.parent)
        return WriteResult(path, new_hash, actual, backup)


def create_file(path: Path, data: bytes, *, make_parents: bool = True) -> WriteResult:
    """Create ``path`` with ``data`` atomically; never overwrite.

    The file appears complete or not at all (written beside it, fsynced, then hard-linked
    into place, which fails if the name is taken).

    Raises:
        WriteConflict: a file of that name already exists (nothing written).
        OSError: the folder cannot be created or written.
    """
    path = Path(os.path.abspath(path))
    if make_parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_beside(path, data, 0o644)
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise WriteConflict(path, None, sha256_bytes(path.read_bytes())) from None
        except OSError as exc:  # file systems without hard links
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
                raise
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.close(fd)
            os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    _fsync_dir(path.parent)
    return WriteResult(path, sha256_bytes(data), None, None)
