"""One agent-memory bundle on disk, read and written: files, seals, the log, the lock
(its layout and vocabulary: :mod:`cairn.memory.layout`).

The layout and fields are those of ``OKF-MEMORY.md`` (see :mod:`cairn.memory`)::

    <bundle>/index.md  log.md
    memories/{active,subsumed,archive}/<YYYYMMDD_HHMMSS>_<type>_<id>.md   layer 1
    concepts/{active,archive}/concept-<id>.md                              layer 2

Every write goes through :mod:`cairn.writeback`: new files with :func:`create_file`
(never overwrites), changes with :func:`write_file` (compare-and-swap on the SHA-256 of
the bytes read, previous bytes backed up), moves as a create at the new place and a
removal of the old file only when its bytes are still those read. Writers of one
bundle, in one process or several, take the bundle lock (:meth:`MemoryBundle.locked`),
so two agents never lose each other's changes; an editor outside cairn is caught by the
compare-and-swap and the operation is retried from a fresh read.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cairn.memory import journal
from cairn.memory.files import (  # the bundle's file format, re-exported
    LOG_TITLE as LOG_TITLE,
)
from cairn.memory.files import (
    MemoryError_ as MemoryError_,
)
from cairn.memory.files import link_label, with_log_lines
from cairn.memory.files import (
    now_iso as now_iso,
)
from cairn.memory.files import (
    parse_file as parse_file,
)
from cairn.memory.files import (
    render_file as render_file,
)
from cairn.memory.files import (
    seal as seal,
)
from cairn.memory.files import (
    split_log as split_log,
)
from cairn.memory.journal import Step
from cairn.memory.layout import (
    CONCEPT_DIRS,
    LOG_ARCHIVE,
    LOG_MAX_BYTES,
    Entry,
    foreign_entries,
    is_memory_bundle,
)
from cairn.memory.layout import INDEX_TEXT as INDEX_TEXT
from cairn.memory.layout import MEMORY_DIRS as MEMORY_DIRS
from cairn.writeback import Backups, WriteConflict, create_file, sha256_bytes


@dataclass
class Changes:
    """What one operation wrote: bundle-relative paths created, changed and removed, and
    the log lines it added (for ``--dry-run``, the unified diffs it would write)."""

    created: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)

    def touched(self) -> list[str]:
        """Every path written or removed, once, in order."""
        return list(dict.fromkeys([*self.created, *self.changed, *self.removed]))


class MemoryBundle:
    """A memory bundle folder and the safe ways to change it.

    Args:
        folder: the bundle (created with its layout by :meth:`ensure`).
        backups: the backup folder of safe write-back (``Config.backup_folder``); also
            holds the bundle lock.
        dry_run: plan only: nothing is written, :attr:`changes` gets the diffs.
    """

    def __init__(self, folder: Path, backups: Backups, *, dry_run: bool = False) -> None:
        self.folder = Path(os.path.abspath(folder))
        self.backups = backups
        self.dry_run = dry_run
        self.changes = Changes()
        self.recovery: journal.Recovery | None = None
        """What :meth:`locked` found and finished of a killed writer's work."""
        self._steps: list[Step] | None = None
        self._log_written = 0

    # --- layout, lock -----------------------------------------------------------------
    def ensure(self) -> list[str]:
        """Create the folders, ``index.md`` and ``log.md`` when missing; returns the
        bundle-relative files created. Existing files are never touched.

        Raises:
            MemoryError_: the folder exists and is not a directory, or it is neither a
                bundle nor empty (:func:`foreign_entries`: a notes folder never becomes
                a bundle by mistake).
        """
        self.check_folder()
        made: list[str] = []
        for d in (*MEMORY_DIRS, *CONCEPT_DIRS):
            if not (self.folder / d).is_dir():
                (self.folder / d).mkdir(parents=True, exist_ok=True)
        for name, text in (("index.md", INDEX_TEXT), ("log.md", LOG_TITLE)):
            if (self.folder / name).exists():  # the common case: no temp file, no fsync
                continue
            with contextlib.suppress(WriteConflict):
                create_file(self.folder / name, text.encode())
                made.append(name)
        return made

    def check_folder(self) -> None:
        """Refuse a folder that cannot be (or become) a bundle; a missing one is fine.

        Raises:
            MemoryError_: the folder exists and is not a directory, or it is neither a
                bundle nor empty (:func:`foreign_entries`: a notes folder never becomes
                a bundle by mistake).
        """
        if self.folder.exists() and not self.folder.is_dir():
            raise MemoryError_(f"{self.folder}: not a folder")
        if self.folder.is_dir() and not is_memory_bundle(self.folder):
            foreign = foreign_entries(self.folder)
            if foreign:
                shown = ", ".join(foreign[:3]) + (", …" if len(foreign) > 3 else "")
                raise MemoryError_(
                    f"{self.folder}: not a memory bundle (no index.md with memories/ and "
                    f"concepts/) and not empty (it holds {shown}); a bundle is made only "
                    "in a new or empty folder, so notes are never mixed into one: name "
                    "a new folder for it (such as ~/memory)"
                )

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the bundle's writer lock (an OS lock in the backup folder, released by
        the OS if the process dies) for the block, first finishing what a killed writer
        left (:mod:`cairn.memory.journal`; not on a dry run)."""
        key = hashlib.sha1(str(self.folder).encode("utf-8", "surrogateescape")).hexdigest()
        lock = self.backups.folder / "locks" / f"memory-{key}.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._recover()
            yield
        finally:
            os.close(fd)

    # --- reading ----------------------------------------------------------------------
    def abs(self, rel: str) -> Path:
        """The absolute path of a bundle-relative path.

        Raises:
            MemoryError_: the path leaves the bundle.
        """
        rel = rel.lstrip("/")
        path = Path(os.path.normpath(self.folder / rel))
        if path != self.folder and self.folder not in path.parents:
            raise MemoryError_(f"{rel}: outside the bundle {self.folder}")
        return path

    def rel(self, path: Path | str) -> str:
        """A bundle-relative POSIX path for ``path`` (absolute, bundle-relative or
        ``/``-rooted in the bundle).

        Raises:
            MemoryError_: the path is not inside the bundle.
        """
        p = Path(path)
        if not p.is_absolute() or not str(p).startswith(str(self.folder)):
            p = self.abs(str(path))
        p = Path(os.path.normpath(p))
        if self.folder not in p.parents:
            raise MemoryError_(f"{path}: not inside the bundle {self.folder}")
        return p.relative_to(self.folder).as_posix()

    def read(self, rel: str) -> Entry:
        """Read one bundle file.

        Raises:
            MemoryError_: missing, unreadable, not UTF-8, or bad frontmatter.
        """
        path = self.abs(rel)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise MemoryError_(f"{rel}: no such file in the bundle") from None
        except OSError as exc:
            raise MemoryError_(f"{rel}: cannot read: {exc.strerror or exc}") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise MemoryError_(f"{rel}: not UTF-8 text") from None
        meta, body = parse_file(text, rel)
        return Entry(rel, meta, body, sha256_bytes(data))

    def listing(self, folder: str) -> list[str]:
        """Bundle-relative ``.md`` files of one layout folder, sorted (no hidden ones)."""
        d = self.folder / folder
        try:
            names = sorted(n for n in os.listdir(d) if n.endswith(".md") and not n.startswith("."))
        except FileNotFoundError:
            return []
        return [f"{folder}/{n}" for n in names]

    def entries(self, folder: str, problems: list[str] | None = None) -> list[Entry]:
        """Every readable file of one layout folder; unreadable ones are reported in
        ``problems`` (``"<rel>: <reason>"``) and skipped."""
        out: list[Entry] = []
        for rel in self.listing(folder):
            try:
                out.append(self.read(rel))
            except MemoryError_ as exc:
                if problems is not None:
                    problems.append(str(exc))
        return out

    def find(self, name: str, folders: tuple[str, ...]) -> str:
        """The bundle-relative path of a file given by path, name or stem, looked up in
        ``folders``.

        Raises:
            MemoryError_: no such file, or the name is ambiguous.
        """
        cand = name.strip()
        if "/" in cand.strip("/"):
            rel = self.rel(cand)
            if not self.abs(rel).is_file():
                raise MemoryError_(f"{name}: no such file in the bundle")
            return rel
        stem = cand.removesuffix(".md")
        hits = [r for f in folders for r in self.listing(f) if Path(r).stem == stem]
        if not hits:
            raise MemoryError_(f"{name}: no such memory or concept in {', '.join(folders)}")
        if len(hits) > 1:
            raise MemoryError_(f"{name}: ambiguous ({', '.join(hits)})")
        return hits[0]

    # --- writing ----------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self, label: str) -> Iterator[None]:
        """Plan the block's writes (and its log lines), then make them all or nothing
        across a crash (:mod:`cairn.memory.journal`). An exception in the block writes
        nothing; a dry run only plans.

        Raises:
            WriteConflict: a file changed since it was read.
        """
        if self.dry_run or self._steps is not None:
            yield
            return
        self._steps = []
        try:
            yield
            steps = [*self._steps, *self._log_steps()]
        finally:
            self._steps = None
        journal.run(self.folder, steps, self.backups, label)
        self._log_written = len(self.changes.log)

    def _write(self, steps: list[Step]) -> None:
        """Plan ``steps`` in the open transaction, or apply them now as one."""
        if self._steps is not None:
            self._steps.extend(steps)
        else:
            journal.run(self.folder, steps, self.backups, "memory write")

    def _recover(self) -> None:
        """Finish what a killed writer left (see :func:`cairn.memory.journal.recover`)
        and log it; the files it wrote are indexed with this operation's."""
        if self.dry_run or not self.folder.is_dir():
            return
        rec = journal.recover(self.folder, self.backups)
        self.recovery = rec
        if rec.operation is None:
            return
        self.changes.changed.extend(rec.done)
        more = ", …" if len(rec.skipped) > 3 else ""
        shown = "; ".join(link_label(x, "write") for x in rec.skipped[:3])
        skipped = f"; not replayed: {shown}{more}" if rec.skipped else ""
        self.note(
            f"**Recovery**: finished an interrupted {link_label(rec.operation, 'write')} "
            f"({len(rec.done)} files){skipped}"
        )

    def create(self, rel: str, data: bytes) -> None:
        """Create a new file (never overwrites).

        Raises:
            WriteConflict: a file of that name exists.
        """
        if self.dry_run:
            self.changes.diffs.append(_diff(rel, b"", data))
        else:
            self.abs(rel)
            self._write([Step(rel, None, data)])
        self.changes.created.append(rel)

    def update(self, entry: Entry, meta: Mapping[str, Any], body: str, reason: str) -> bool:
        """Rewrite ``entry`` with new frontmatter and body if they differ; returns
        whether anything changed.

        Raises:
            WriteConflict: the file changed since ``entry`` was read (nothing written).
        """
        path = self.abs(entry.rel)
        new = render_file(meta, body)
        if self.dry_run:
            old = path.read_bytes()
            if old != new:
                self.changes.diffs.append(_diff(entry.rel, old, new))
                self.changes.changed.append(entry.rel)
                return True
            return False
        if sha256_bytes(new) == entry.sha256:
            return False
        self._write([Step(entry.rel, entry.sha256, new, reason)])
        self.changes.changed.append(entry.rel)
        entry.sha256 = sha256_bytes(new)
        return True

    def move(self, entry: Entry, folder: str, data: bytes | None = None) -> str:
        """Move ``entry`` into another layout folder (same name), optionally with new
        bytes; returns the new bundle-relative path. The copy is made first, and the
        old file (its bytes kept as a backup) removed only when its bytes are still
        those read; a copy already in place with the same bytes (a move a crash
        interrupted) is kept.

        Raises:
            WriteConflict: the file changed since it was read, or another file holds
                the new name.
        """
        name = Path(entry.rel).name
        new_rel = f"{folder}/{name}"
        old_path = self.abs(entry.rel)
        old = old_path.read_bytes()
        payload = old if data is None else data
        if self.dry_run:
            self.changes.diffs.append(_diff(new_rel, b"", payload))
            self.changes.diffs.append(_diff(entry.rel, old, b""))
        else:
            if sha256_bytes(old) != entry.sha256:
                raise WriteConflict(old_path, entry.sha256, sha256_bytes(old))
            self.abs(new_rel)
            self._write([
                Step(new_rel, None, payload),
                Step(entry.rel, entry.sha256, None, f"memory: moved to {new_rel}"),
            ])
        self.changes.created.append(new_rel)
        self.changes.removed.append(entry.rel)
        return new_rel

    def note(self, line: str) -> None:
        """Queue one log line (``**Verb**: what``) for :meth:`flush_log`."""
        self.changes.log.append(line)

    def flush_log(self) -> None:
        """Prepend the queued lines under today's ``## YYYY-MM-DD`` heading of
        ``log.md`` (newest first, OKF §9); in a :meth:`transaction`, with its other
        writes when it ends. Appended to an append-only log, so no backup copy is kept
        (the previous bytes are the new ones minus these lines); the write is atomic and
        compare-and-swapped under the bundle lock.

        Raises:
            MemoryError_: the log kept changing under twenty attempts.
        """
        if self._steps is not None:  # written when the transaction ends
            if self.changes.log[self._log_written:] and "log.md" not in self.changes.changed:
                self.changes.changed.append("log.md")
            return
        if self.dry_run:
            self._log_steps()
            return
        for _ in range(20):
            try:
                journal.run(self.folder, self._log_steps(), self.backups, "log")
            except WriteConflict:
                continue
            self._log_written = len(self.changes.log)
            return
        raise MemoryError_(f"{self.folder / 'log.md'}: could not append to the log (it keeps "
                           "changing)")

    def _log_steps(self) -> list[Step]:
        """The steps that add the lines not yet written to ``log.md`` (older entries
        moved to a new ``log/<date>[-n]/log.md`` when it grows too big); on a dry run,
        their diffs."""
        lines = self.changes.log[self._log_written:]
        if not lines:
            return []
        path = self.folder / "log.md"
        try:
            old: bytes | None = path.read_bytes()
        except FileNotFoundError:
            old = None
        base = old if old is not None else LOG_TITLE.encode()
        text, older = split_log(with_log_lines(base.decode("utf-8", "replace"), lines),
                                LOG_MAX_BYTES)
        if self.dry_run:
            self.changes.diffs.append(_diff("log.md", base, text.encode()))
            self._log_written = len(self.changes.log)
            return []
        steps: list[Step] = []
        if older:
            rel = self._rotated_name(older)
            steps.append(Step(rel, None, (LOG_TITLE + "\n" + older).encode()))
            self.changes.created.append(rel)
        steps.append(Step("log.md", None if old is None else sha256_bytes(old), text.encode()))
        if "log.md" not in self.changes.changed:
            self.changes.changed.append("log.md")
        return steps

    def _rotated_name(self, older: str) -> str:
        """A free ``log/<date>[-n]/log.md`` for ``older`` (dated log sections)."""
        m = re.search(r"^## (\d{4}-\d{2}-\d{2})", older, re.M)
        day = m.group(1) if m else datetime.now(UTC).strftime("%Y-%m-%d")
        for n in range(1, 10_000):
            rel = f"{LOG_ARCHIVE}/{day}{'' if n == 1 else f'-{n}'}/log.md"
            if not self.abs(rel).exists():
                return rel
        raise MemoryError_(f"{self.folder}: no free name for an older log of {day}")


def _diff(rel: str, old: bytes, new: bytes) -> str:
    from cairn.writeback import unified_diff

    return unified_diff(rel, old, new)
