"""Write batches: the backups (and created files) of one dream run or one restore,
undone together by a bare ``cairn restore``.

A backup logged inside :meth:`cairn.writeback.Backups.batch` carries that batch's id.
A restore logs its own safety copies in batch ``restore:<id>`` (``<id>``: the batch or
backup it undid), so those copies are never taken for a batch to undo, and an undone
batch is not undone twice. Backups logged before batches existed are each their own
batch (and one whose reason is ``restore <id>`` counts as that restore's copy).
"""

from __future__ import annotations

from dataclasses import dataclass

from cairn.errors import NotFound
from cairn.writeback.atomic import Backup, WriteResult, sha256_bytes
from cairn.writeback.backups import Backups, NotRemoved

RESTORE = "restore:"


@dataclass(frozen=True, slots=True)
class Batch:
    """One write batch.

    Attributes:
        id: the batch id (``dream-…``, ``restore:<id>``, or a lone backup's id).
        entries: its backups and created-file records, oldest first.
        undone: a restore of this batch has been made.
    """

    id: str
    entries: tuple[Backup, ...]
    undone: bool = False

    @property
    def is_restore(self) -> bool:
        """Whether this batch holds a restore's own safety copies."""
        return self.id.startswith(RESTORE)

    @property
    def time(self) -> str:
        """When its first backup was taken (ISO 8601 UTC)."""
        return self.entries[0].time


def _batch_of(b: Backup) -> str:
    if b.batch:
        return b.batch
    if b.reason.startswith("restore "):  # a safety copy logged before batches
        return RESTORE + b.reason.split(None, 1)[1]
    return b.id


def batches(backups: Backups) -> list[Batch]:
    """Every batch of the backup folder, oldest first."""
    grouped: dict[str, list[Backup]] = {}
    for b in backups.list():
        grouped.setdefault(_batch_of(b), []).append(b)
    undone = {k[len(RESTORE):] for k in grouped if k.startswith(RESTORE)}
    out = [Batch(k, tuple(v), k in undone) for k, v in grouped.items()]
    out.sort(key=lambda x: x.entries[0].id)
    return out


@dataclass(frozen=True, slots=True)
class Restored:
    """What :func:`restore_batch` did.

    Attributes:
        batch: the batch undone.
        results: per file, the backup or record used and the write made (a removed
            file's ``WriteResult.previous_sha256`` is the bytes it held).
    """

    batch: Batch
    results: tuple[tuple[Backup, WriteResult], ...]


def pick(backups: Backups, batch_id: str | None) -> Batch:
    """Batch ``batch_id`` (or a unique prefix), or by default the newest batch that is
    not a restore's safety copies and has not been undone.

    Raises:
        NotFound: no such batch, or nothing left to undo.
    """
    every = batches(backups)
    if batch_id is None:
        left = [b for b in every if not b.is_restore and not b.undone]
        if not left:
            raise NotFound(f"{backups.folder}: no write batch left to restore")
        return left[-1]
    found = [b for b in every if b.id == batch_id] or [
        b for b in every if b.id.startswith(batch_id)]
    if len(found) != 1:
        raise NotFound(f"{backups.folder}: no single batch with id {batch_id!r} "
                       f"({f'{len(found)} match' if found else 'none matches'})")
    return found[0]


def restore_batch(backups: Backups, batch_id: str | None = None) -> Restored:
    """Undo a whole batch (default: the newest one not yet undone, see :func:`pick`):
    every file it changed gets the bytes it had before the batch, and every file it
    created is removed. The files it created are checked first, so when one of them has
    changed since, nothing is done. The bytes replaced are kept in batch
    ``restore:<batch id>``.

    Raises:
        NotFound: no such batch, or a backup's bytes are lost.
        NotRemoved: a file the batch created has changed since (nothing written).
        WriteConflict: a file changed while restoring.
        OSError: a file or the backup folder cannot be written.
    """
    batch = pick(backups, batch_id)
    first: dict[str, Backup] = {}
    for b in batch.entries:
        first.setdefault(str(b.path), b)  # the state before the batch's first write
    for b in first.values():
        if b.action == "created":
            try:
                data = b.path.read_bytes()
            except FileNotFoundError:
                continue
            if sha256_bytes(data) != b.sha256:
                raise NotRemoved(b, sha256_bytes(data))
        else:
            backups.read(b)  # lost bytes: stop before writing anything
    results: list[tuple[Backup, WriteResult]] = []
    with backups.batch(RESTORE + batch.id):
        for b in first.values():
            results.append((b, backups.restore(b.id)))
    return Restored(batch, tuple(results))


__all__ = ["Batch", "NotRemoved", "Restored", "batches", "pick", "restore_batch"]

