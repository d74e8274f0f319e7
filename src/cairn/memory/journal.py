"""The intent journal of a memory bundle: a write of several files (consolidation
creates a concept and moves each memory, a move is a create and a removal, the log
follows) is made all or nothing across a crash.

The steps are planned first; then the journal (``<bundle>/.cairn-journal.json``, every
step with the SHA-256 of the bytes it expects and the bytes it leaves) is written
atomically, the steps are applied in order and the journal removed. A process killed
on the way leaves the journal; the next writer of the bundle (under the bundle lock)
replays it before anything else (:func:`recover`): a step already done is skipped, a
step still to do is done, so the interrupted operation is finished exactly once. A
file changed in between (neither the expected bytes nor the final ones) is left as it
is and reported. Temporary files of a dead writer (``.<name>.cairn-<pid>-<hex>.tmp``,
see :mod:`cairn.writeback`) are removed at the same time.

``CAIRN_MEMORY_CRASH_AT=<n>`` (tests only) ends the process with ``os._exit`` just
before step ``n`` is applied (``n`` = the number of steps: after the last one, before
the journal is removed), so a test can kill a writer at every point of a write.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cairn.model.tempnames import pid_alive
from cairn.writeback import Backups, WriteConflict, create_file, sha256_bytes, write_file

JOURNAL = ".cairn-journal.json"
"""The journal's name at the top of the bundle (hidden: never indexed or listed)."""
CRASH_ENV = "CAIRN_MEMORY_CRASH_AT"
_TEMP = re.compile(r"^\..+\.cairn-(\d+)-[0-9a-f]+\.tmp$")


@dataclass(frozen=True)
class Step:
    """One file's change: ``rel`` (bundle-relative) goes from the bytes whose SHA-256
    is ``before`` (``None``: absent) to ``after`` (``None``: removed). ``reason``: the
    note of the backup kept of the replaced bytes (``None``: no backup, for files cairn
    only appends to or creates)."""

    rel: str
    before: str | None
    after: bytes | None
    reason: str | None = None

    @property
    def after_sha(self) -> str | None:
        """The SHA-256 of ``after`` (``None`` when the step removes the file)."""
        return None if self.after is None else sha256_bytes(self.after)


def _current(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def preflight(folder: Path, steps: Sequence[Step]) -> None:
    """Check that every step starts from the bytes it expects (or is done already),
    following earlier steps of the same file.

    Raises:
        WriteConflict: a file is in neither state (nothing has been written).
    """
    state: dict[str, str | None] = {}
    for s in steps:
        if s.rel in state:
            cur = state[s.rel]
        else:
            data = _current(folder / s.rel)
            cur = None if data is None else sha256_bytes(data)
        if cur not in (s.before, s.after_sha):
            raise WriteConflict(folder / s.rel, s.before, cur)
        state[s.rel] = s.after_sha


def apply_step(folder: Path, step: Step, backups: Backups) -> bool:
    """Bring one file to the step's final state; ``False`` when it is already there.

    Raises:
        WriteConflict: the file is in neither the expected nor the final state.
        OSError: the file or the backup cannot be written.
    """
    path = folder / step.rel
    data = _current(path)
    cur = None if data is None else sha256_bytes(data)
    if cur == step.after_sha:
        return False
    if cur != step.before:
        raise WriteConflict(path, step.before, cur)
    if step.after is None:
        assert data is not None  # cur == before, and a removal starts from a file
        if step.reason is not None:
            backups.save(path, data, reason=step.reason)
        path.unlink()
        _fsync_dir(path.parent)
    elif data is None:
        create_file(path, step.after)
    else:
        write_file(
            path,
            step.after,
            expected_sha256=step.before,
            backups=backups if step.reason is not None else None,
            reason=step.reason or "",
        )
    return True


def run(folder: Path, steps: Sequence[Step], backups: Backups, label: str) -> None:
    """Apply ``steps`` all or nothing across a crash (see the module docstring).

    Raises:
        WriteConflict: a file changed before the journal was written (nothing
            written), or while the steps were applied (the journal stays and the next
            writer finishes what can be finished).
    """
    if not steps:
        return
    preflight(folder, steps)
    doc = {
        "version": 1,
        "operation": label,
        "steps": [
            {
                "rel": s.rel,
                "before": s.before,
                "after": None if s.after is None else base64.b64encode(s.after).decode(),
                "reason": s.reason,
            }
            for s in steps
        ],
    }
    journal = folder / JOURNAL
    write_file(journal, json.dumps(doc).encode(), expected_sha256=None, backups=None)
    crash = _crash_point()
    for i, s in enumerate(steps):
        if crash == i:
            os._exit(70)
        apply_step(folder, s, backups)
    if crash == len(steps):
        os._exit(70)
    journal.unlink()
    _fsync_dir(folder)


def pending(folder: Path) -> str | None:
    """The operation of a journal left by an interrupted write, ``None`` when there is
    none (an unreadable journal is named as such)."""
    path = folder / JOURNAL
    if not path.exists():
        return None
    try:
        return str(json.loads(path.read_bytes()).get("operation") or "unknown")
    except (OSError, ValueError, AttributeError):
        return "unreadable"


@dataclass
class Recovery:
    """What :func:`recover` did: the ``operation`` finished (``None``: no journal), the
    files ``done`` (bundle-relative; in their final state now, by this replay or before
    the crash), the ones ``skipped`` because they changed
    meanwhile (``"<rel>: why"``), and the stale temporary files ``removed``."""

    operation: str | None = None
    done: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def recover(folder: Path, backups: Backups) -> Recovery:
    """Finish the write a killed process left (replay its journal, then remove it) and
    remove the temporary files of dead writers (at the top of the bundle, and in all
    of it when a journal was found: every other write is journaled). Call it under the
    bundle lock.

    Raises:
        OSError: a file cannot be written (the journal stays for the next attempt).
    """
    rec = Recovery()
    path = folder / JOURNAL
    if path.exists():
        try:
            doc = json.loads(path.read_bytes())
            steps = [
                Step(
                    str(s["rel"]),
                    None if s.get("before") is None else str(s["before"]),
                    None if s.get("after") is None else base64.b64decode(s["after"]),
                    None if s.get("reason") is None else str(s["reason"]),
                )
                for s in doc["steps"]
            ]
            rec.operation = str(doc.get("operation") or "unknown")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            rec.operation = "unreadable"
            rec.skipped.append(f"{JOURNAL}: not a journal ({exc}); moved to the backups")
            backups.save(path, path.read_bytes(), reason="memory: unreadable journal")
            steps = []
        for s in steps:
            target = Path(os.path.normpath(folder / s.rel))
            if folder not in target.parents:
                rec.skipped.append(f"{s.rel}: outside the bundle; not replayed")
                continue
            try:
                apply_step(folder, s, backups)
                rec.done.append(s.rel)
            except WriteConflict:
                rec.skipped.append(f"{s.rel}: changed since the interrupted write; left as is")
        path.unlink()
        _fsync_dir(folder)
    rec.removed = remove_stale_temps(folder, deep=rec.operation is not None)
    return rec


def remove_stale_temps(folder: Path, *, deep: bool = True) -> list[str]:
    """Remove the temporary files of writers that no longer run (the process id in
    the name is gone) from the bundle's folders (``deep=False``: its top folder only);
    their bundle-relative paths."""
    out: list[str] = []
    for d, dirs, names in os.walk(folder):
        if not deep:
            dirs.clear()
        for n in names:
            m = _TEMP.match(n)
            if m is None or pid_alive(int(m.group(1))):
                continue
            p = Path(d) / n
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
                out.append(p.relative_to(folder).as_posix())
    return sorted(out)


def _crash_point() -> int | None:
    raw = os.environ.get(CRASH_ENV)
    return int(raw) if raw and raw.strip().isdigit() else None


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
