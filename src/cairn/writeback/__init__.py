"""Safe write-back: the one way cairn changes a file a user owns.

Every writer (dream fixes, agent memory, tag normalisation, entity notes) goes through
:func:`write_file` or :func:`create_file`:

- **atomic**: the new bytes go to a temporary file in the same folder, which is fsynced,
  renamed over the target, and the folder fsynced — a reader (or a crash) sees the old
  bytes or the new ones, never a torn file;
- **compare-and-swap**: the caller passes the SHA-256 of the bytes it based its change
  on (the content hash the index holds); if the file on disk differs, nothing is written
  and :class:`WriteConflict` says so;
- **backed up**: the previous bytes are kept in a :class:`Backups` folder under the data
  folder, and :meth:`Backups.restore` puts them back (itself a backed-up write); the
  writes of one run form a batch (:meth:`Backups.batch`, files created included) that
  :func:`restore_batch` undoes as one;
- **reviewable**: :func:`unified_diff` renders a planned change for ``--dry-run``.

Writers in one process or several serialise per target file through a lock file in the
backup folder, so two agents editing one file never interleave; an editor outside cairn
is caught by the compare-and-swap.
"""

from __future__ import annotations

from cairn.writeback.atomic import (
    Backup,
    WriteConflict,
    WriteResult,
    create_file,
    sha256_bytes,
    unified_diff,
    write_file,
)
from cairn.writeback.backups import Backups, NotRemoved, Pruned
from cairn.writeback.batches import Batch, Restored, batches, restore_batch

__all__ = [
    "Backup",
    "Backups",
    "Batch",
    "NotRemoved",
    "Pruned",
    "Restored",
    "WriteConflict",
    "WriteResult",
    "batches",
    "create_file",
    "restore_batch",
    "sha256_bytes",
    "unified_diff",
    "write_file",
]
