"""The backup folder: every byte cairn ever replaced, and how to put it back.

Layout (one folder, by default ``<index file>.backups`` beside the index)::

    objects/<sha256>      the previous bytes, content-addressed (stored once)
    log.jsonl             one JSON object per backup: id, path, sha256, time, reason
    log.lock              held while the log is appended to or rewritten
    locks/<key>.lock      per-target lock files (see :func:`cairn.writeback.write_file`)

Backups are pruned by :meth:`Backups.prune` (``[writeback] keep_days`` and
``keep_per_file``): a copy older than the days or beyond the newest copies of its file
goes, except the newest copy of each file, which is always kept.

Nothing in it has a note extension, so indexing a root that contains it indexes none of
it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cairn.errors import NotFound
from cairn.writeback.atomic import (
    Backup,
    WriteConflict,
    WriteResult,
    _fsync_dir,
    _locked,
    _temp_beside,
    sha256_bytes,
    write_file,
)


class NotRemoved(WriteConflict):
    """A file cairn created no longer holds the bytes it wrote: it is not removed."""

    def __init__(self, backup: Backup, actual: str) -> None:
        super().__init__(backup.path, backup.sha256, actual)
        self.args = (f"{backup.path}: not removed: it changed since cairn created it "
                     f"(backup {backup.id})",)


@dataclass(frozen=True, slots=True)
class Pruned:
    """What :meth:`Backups.prune` removed (or, on a dry run, would remove).

    Attributes:
        removed: the backups dropped from the log, oldest first.
        kept: backups left.
        freed_bytes: bytes of the kept-bytes objects deleted (an object shared by a
            kept backup stays).
        dry_run: nothing was changed.
    """

    removed: tuple[Backup, ...]
    kept: int
    freed_bytes: int
    dry_run: bool = False


def _age_days(b: Backup, now: datetime) -> float:
    try:
        taken = datetime.fromisoformat(b.time)
    except ValueError:
        return 0.0  # an unreadable time: never counted as old
    if taken.tzinfo is None:
        taken = taken.replace(tzinfo=UTC)
    return (now - taken).total_seconds() / 86400.0


# the batch open for a backup folder: (folder, batch id)
_BATCH: ContextVar[tuple[Path, str] | None] = ContextVar("cairn_backup_batch", default=None)


class Backups:
    """A backup folder (created on first use)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(os.path.abspath(folder))

    @property
    def _batch(self) -> str:
        open_ = _BATCH.get()
        return open_[1] if open_ is not None and open_[0] == self.folder else ""

    @contextlib.contextmanager
    def batch(self, batch_id: str) -> Iterator[str]:
        """Log every backup taken in this folder inside the block (through any
        :class:`Backups` of it, in this thread or task) as part of batch ``batch_id``
        (what a bare ``cairn restore`` undoes as one)."""
        token = _BATCH.set((self.folder, batch_id))
        try:
            yield batch_id
        finally:
            _BATCH.reset(token)

    def record_created(self, path: Path, data: bytes, *, reason: str = "",
                       made_dirs: int = 0) -> Backup:
        """Log that cairn created ``path`` with ``data`` (restoring it removes the file
        while it still holds exactly these bytes, and the ``made_dirs`` parent folders
        created for it when they are left empty).

        Raises:
            OSError: the backup folder cannot be written.
        """
        with self._log_lock():
            return self._save(path, data, reason, action="created", made_dirs=made_dirs)

    @classmethod
    def beside(cls, db_path: Path) -> Backups:
        """The default backup folder of the index at ``db_path``: ``<db>.backups``."""
        db_path = Path(os.path.abspath(db_path))
        return cls(db_path.with_name(db_path.name + ".backups"))

    def lock_path(self, target: Path) -> Path:
        """The lock file that serialises writers of ``target``."""
        key = hashlib.sha1(str(target).encode("utf-8", "surrogateescape")).hexdigest()
        return self.folder / "locks" / f"{key}.lock"

    def save(self, path: Path, data: bytes, *, reason: str = "") -> Backup:
        """Keep ``data`` (the bytes about to be replaced at ``path``).

        The object is fsynced and the log line appended (and fsynced) before this
        returns, so a crash after it loses nothing.

        Raises:
            OSError: the backup folder cannot be written (the caller must not go on).
        """
        with self._log_lock():
            return self._save(path, data, reason)

    @contextlib.contextmanager
    def _log_lock(self) -> Iterator[None]:
        """Hold ``log.lock``: one writer of the log (and of objects) at a time."""
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / "log.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _save(self, path: Path, data: bytes, reason: str, *, action: str = "replaced",
              made_dirs: int = 0) -> Backup:
        digest = sha256_bytes(data)
        objects = self.folder / "objects"
        objects.mkdir(parents=True, exist_ok=True)
        obj = objects / digest
        if not obj.exists():
            tmp = _temp_beside(obj, data, 0o600)
            os.replace(tmp, obj)
            _fsync_dir(objects)
        now = datetime.now(UTC)
        stamp = now.strftime("%Y%m%dT%H%M%S") + f"{time.time_ns() % 1_000_000_000:09d}Z"
        backup = Backup(
            f"{stamp}-{digest[:8]}",
            Path(os.path.abspath(path)),
            digest,
            now.isoformat(timespec="microseconds"),
            reason,
            self._batch,
            action,
            made_dirs,
        )
        entry: dict[str, str | int] = {"id": backup.id, "path": str(backup.path), "sha256": digest,
                 "time": backup.time, "reason": reason}
        if self._batch:
            entry["batch"] = self._batch
        if action != "replaced":
            entry["action"] = action
        if made_dirs:
            entry["made_dirs"] = made_dirs
        line = json.dumps(entry, ensure_ascii=False)
        fd = os.open(self.folder / "log.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, (line + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        return backup

    def list(self, path: Path | None = None) -> list[Backup]:
        """Every backup, oldest first; only those of ``path`` when given.

        A torn last log line (a crash mid-append) is skipped.
        """
        log = self.folder / "log.jsonl"
        try:
            text = log.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        want = None if path is None else Path(os.path.abspath(path))
        out: list[Backup] = []
        for raw in text.splitlines():
            with contextlib.suppress(ValueError, KeyError, TypeError):
                d = json.loads(raw)
                b = Backup(
                    str(d["id"]),
                    Path(d["path"]),
                    str(d["sha256"]),
                    str(d["time"]),
                    str(d.get("reason", "")),
                    str(d.get("batch", "")),
                    str(d.get("action", "replaced")),
                    int(d.get("made_dirs", 0)),
                )
                if want is None or b.path == want:
                    out.append(b)
        return out

    def prune(
        self,
        *,
        keep_days: float,
        keep_per_file: int,
        now: datetime | None = None,
        dry_run: bool = False,
    ) -> Pruned:
        """Drop old backups: per file, a copy goes when it is older than ``keep_days``
        days or beyond the newest ``keep_per_file`` copies (``0``: no such limit); the
        newest copy of each file always stays. The log is rewritten atomically and
        objects no kept backup names are deleted (so are objects no backup names).

        Raises:
            OSError: the backup folder cannot be written.
        """
        if not (self.folder / "log.jsonl").exists():
            return Pruned((), 0, 0, dry_run)
        now = now or datetime.now(UTC)
        with self._log_lock():
            every = self.list()
            by_path: dict[Path, list[Backup]] = {}
            for b in every:
                by_path.setdefault(b.path, []).append(b)
            drop: set[str] = set()
            for copies in by_path.values():
                for i, b in enumerate(sorted(copies, key=lambda b: b.id, reverse=True)):
                    too_many = keep_per_file > 0 and i >= keep_per_file
                    too_old = keep_days > 0 and _age_days(b, now) > keep_days
                    if i > 0 and (too_many or too_old):
                        drop.add(b.id)
            removed = tuple(b for b in every if b.id in drop)
            live = {b.sha256 for b in every if b.id not in drop}
            objects = self.folder / "objects"
            dead = [o for o in (objects.iterdir() if objects.is_dir() else ())
                    if o.name not in live and len(o.name) == 64]
            freed = 0
            for o in dead:
                with contextlib.suppress(OSError):
                    freed += o.stat().st_size
            if dry_run or not (removed or dead):
                return Pruned(removed, len(every) - len(removed), freed, dry_run)
            log = self.folder / "log.jsonl"
            lines = []
            for raw in log.read_text(encoding="utf-8", errors="replace").splitlines():
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    if str(json.loads(raw)["id"]) not in drop:
                        lines.append(raw + "\n")
            os.replace(_temp_beside(log, "".join(lines).encode("utf-8"), 0o600), log)
            _fsync_dir(self.folder)
            for o in dead:
                with contextlib.suppress(FileNotFoundError):
                    o.unlink()
        return Pruned(removed, len(every) - len(removed), freed)

    def get(self, backup_id: str) -> Backup:
        """The backup with this id (or a unique prefix of it).

        Raises:
            NotFound: no backup, or more than one, has that id.
        """
        found = [b for b in self.list() if b.id == backup_id or b.id.startswith(backup_id)]
        exact = [b for b in found if b.id == backup_id]
        if len(exact) == 1:
            return exact[0]
        if len(found) != 1:
            raise NotFound(
                f"{self.folder}: no single backup with id {backup_id!r} "
                f"({f'{len(found)} match' if found else 'none matches'})"
            )
        return found[0]

    def read(self, backup: Backup) -> bytes:
        """The kept bytes (checked against their hash).

        Raises:
            NotFound: the object is missing or damaged.
        """
        try:
            data = (self.folder / "objects" / backup.sha256).read_bytes()
        except FileNotFoundError:
            raise NotFound(f"{self.folder}: backup {backup.id} has lost its bytes") from None
        if sha256_bytes(data) != backup.sha256:
            raise NotFound(f"{self.folder}: backup {backup.id} is damaged (hash mismatch)")
        return data

    def restore(self, backup_id: str) -> WriteResult:
        """Put a backup's bytes back at its path (the current bytes are backed up first,
        in batch ``restore:<id>`` unless a batch is open). A ``created`` record removes
        the file instead (:func:`remove_created`).

        Raises:
            NotFound: unknown backup or lost bytes.
            WriteConflict: the file changed while restoring, or a created file no longer
                holds the bytes cairn wrote (nothing written).
            OSError: the file's folder is gone or unwritable.
        """
        backup = self.get(backup_id)
        with contextlib.ExitStack() as stack:
            if not self._batch:
                stack.enter_context(self.batch(f"restore:{backup.id}"))
            if backup.action == "created":
                return remove_created(self, backup)
            data = self.read(backup)
            try:
                current: str | None = sha256_bytes(backup.path.read_bytes())
            except FileNotFoundError:
                current = None
            return write_file(backup.path, data, expected_sha256=current, backups=self,
                              reason=f"restore {backup.id}")
        raise AssertionError("unreachable")  # pragma: no cover


def remove_created(backups: Backups, record: Backup) -> WriteResult:
    """Remove the file ``record`` says cairn created, if it still holds exactly the
    bytes written (a copy is kept in the backup folder first). A file already gone is
    left gone (``previous_sha256`` ``None``).

    Raises:
        NotRemoved: the file's bytes differ from what cairn wrote (nothing changed).
        OSError: the file or the backup folder cannot be written.
    """
    path = record.path
    with _locked(path, backups):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return WriteResult(path, sha256_bytes(b""), None, None)
        actual = sha256_bytes(data)
        if actual != record.sha256:
            raise NotRemoved(record, actual)
        kept = backups.save(path, data, reason=f"restore {record.id}: removed")
        path.unlink()
        with contextlib.suppress(OSError):
            _fsync_dir(path.parent)
        folder = path.parent
        for _ in range(max(0, record.made_dirs)):
            try:
                folder.rmdir()  # only when empty: anything put there since stays
            except OSError:
                break
            folder = folder.parent
    return WriteResult(path, sha256_bytes(b""), actual, kept)
