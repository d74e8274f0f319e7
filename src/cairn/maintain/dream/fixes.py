"""``--apply`` and ``--dry-run``: the findings' fixes as planned edits of whole files,
written through :mod:`cairn.writeback` (atomic, compare-and-swap, backed up).

The index keeps a BLAKE2b content hash of each file (:func:`cairn.sources.content_hash`)
while the write-back compare-and-swap works on SHA-256: a file is read once, its BLAKE2b
compared with the indexed hash (a file changed since indexing is refused), and the
SHA-256 of exactly those bytes is what :func:`cairn.writeback.write_file` must still
find on disk when it renames the new bytes into place. An OKF concept that changes gets
an entry in its bundle's ``log.md``."""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cairn.maintain.dream import edits
from cairn.maintain.dream.base import Finding, Fix
from cairn.model import SourceRoot
from cairn.store import Store
from cairn.writeback import Backups, WriteConflict, create_file, sha256_bytes, unified_diff
from cairn.writeback import write_file as _write_file
from cairn.writeback.okflog import add_log_entry


@dataclass(frozen=True, slots=True)
class FileChange:
    """What ``--apply`` did (or ``--dry-run`` would do) to one file.

    Attributes:
        path: the file (absolute).
        action: ``changed``, ``created``, ``refused`` (nothing written) or ``planned``
            (dry run).
        fixes: the descriptions of the fixes in it.
        diff: the unified diff of the change (``""`` when refused).
        reason: why it was refused, or which fixes were skipped.
        backup: the backup id of the previous bytes, or for a created file the id of
            its creation record (``cairn restore ID`` puts back / removes it).
    """

    path: str
    action: str
    fixes: tuple[str, ...] = ()
    diff: str = ""
    reason: str = ""
    backup: str | None = None


@dataclass(slots=True)
class _Plan:
    path: Path
    old: bytes | None
    text: str
    fixes: list[Fix] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    refused: str = ""


def _blake(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _root_of(path: Path, roots: Sequence[SourceRoot]) -> tuple[SourceRoot, str] | None:
    for r in roots:
        base = Path(r.path)
        if base in path.parents:
            return r, path.relative_to(base).as_posix()
    return None


def _bundle_log(path: Path, root: Path) -> Path:
    """The ``log.md`` an OKF file's change is logged in: the nearest one in a folder
    above it (inside the root), else one beside the top-most ``index.md``."""
    top: Path | None = None
    folder = path.parent
    while folder == root or root in folder.parents:
        if (folder / "log.md").is_file():
            return folder / "log.md"
        if (folder / "index.md").is_file():
            top = folder
        if folder == root:
            break
        folder = folder.parent
    return (top or path.parent) / "log.md"


def _apply_fix(plan: _Plan, fix: Fix) -> None:
    try:
        if fix.kind == "retarget_link":
            plan.text = edits.retarget_link(plan.text, fix.params)
        elif fix.kind == "add_org_id":
            plan.text = edits.add_org_id(plan.text, fix.params, path=str(plan.path))
        elif fix.kind == "mark_status":
            plan.text = edits.mark_status(plan.text, fix.params)
        elif fix.kind == "normalise_tag":
            plan.text = edits.normalise_tag(plan.text, fix.params)
        elif fix.kind == "create_note":
            plan.text = edits.entity_note(fix.params)
        else:
            raise edits.EditRefused(f"unknown fix kind {fix.kind!r}")
        plan.fixes.append(fix)
    except edits.EditRefused as exc:
        plan.skipped.append(f"{fix.description}: {exc}")


def plan_fixes(
    store: Store,
    findings: Iterable[Finding],
    *,
    kinds: Sequence[str] | None = None,
    proposed: bool = False,
) -> list[_Plan]:
    """The planned edit of every file some fix touches (in first-finding order);
    fixes that are only proposed (``Fix.auto`` false) are left out unless ``proposed``."""
    roots = store.roots()
    plans: dict[str, _Plan] = {}
    todo: dict[str, list[Fix]] = {}
    for f in findings:
        fix = f.fix
        if fix is None or (kinds and fix.kind not in kinds) or not (fix.auto or proposed):
            continue
        if fix.kind == "memory_maintain":  # a maintenance cycle, run by the app
            continue
        path = Path(os.path.abspath(fix.path))
        if str(path) not in plans:
            plans[str(path)] = _load(store, roots, path, fix)
        todo.setdefault(str(path), []).append(fix)
    for key, plan in plans.items():
        # bottom up: a fix that inserts lines (a property drawer) must not move the
        # lines the file's other fixes name; the file level (line 0) goes last
        for fix in sorted(todo[key], key=lambda x: -int(x.params.get("line") or 0)):
            if not plan.refused:
                _apply_fix(plan, fix)
    return list(plans.values())


def _load(store: Store, roots: Sequence[SourceRoot], path: Path, fix: Fix) -> _Plan:
    where = _root_of(path, roots)
    if where is None:
        return _Plan(path, None, "", refused="not inside a registered source root")
    if fix.kind == "create_note":
        if path.exists() or path.is_symlink():
            return _Plan(path, None, "", refused="a file of that name exists already")
        return _Plan(path, None, "")
    root, rel = where
    try:
        data = path.read_bytes()
    except OSError as exc:
        return _Plan(path, None, "", refused=f"cannot read it: {exc.strerror or exc}")
    state = store.file_states(root.id).get(rel)
    if state is None or _blake(data) != state.hash:
        return _Plan(path, data, "", refused="it changed since it was indexed "
                     "(re-index with `cairn index`, then run `cairn dream` again)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _Plan(path, data, "", refused="it is not valid UTF-8")
    return _Plan(path, data, text)


def apply_fixes(
    store: Store,
    findings: Iterable[Finding],
    *,
    backups: Backups,
    dry_run: bool = False,
    kinds: Sequence[str] | None = None,
    today: _dt.date | None = None,
    proposed: bool = False,
) -> list[FileChange]:
    """Make (or with ``dry_run`` only show) every fix of ``findings``.

    Args:
        store: the index the findings came from (its content hashes guard the files).
        findings: findings; those without a fix are ignored.
        backups: where replaced bytes are kept.
        dry_run: plan and diff only; nothing is written.
        kinds: only fixes of these kinds (:data:`cairn.maintain.dream.base.FIX_KINDS`).
        today: the date of OKF ``log.md`` entries.
        proposed: make the fixes that are only proposed too (``Fix.auto`` false).

    Returns:
        One :class:`FileChange` per file, ``log.md`` files included.
    """
    day = (today or _dt.datetime.now(_dt.UTC).date()).isoformat()
    roots = store.roots()
    out: list[FileChange] = []
    logs: dict[Path, list[str]] = {}
    for plan in plan_fixes(store, findings, kinds=kinds, proposed=proposed):
        descs = tuple(f.description for f in plan.fixes)
        if plan.refused or not plan.fixes:
            out.append(FileChange(str(plan.path), "refused", descs, "",
                                  plan.refused or "; ".join(plan.skipped)))
            continue
        new = plan.text.encode("utf-8")
        diff = unified_diff(_diff_name(plan.path, roots), plan.old or b"", new,
                            created=plan.old is None)
        note = "; ".join(plan.skipped)
        if dry_run:
            out.append(FileChange(str(plan.path), "planned", descs, diff, note))
        else:
            out.append(_write(plan, new, descs, diff, note, backups))
        if out[-1].action in ("planned", "changed", "created"):
            where = _root_of(plan.path, roots)
            if where and plan.path.suffix == ".md" and plan.path.name != "log.md" \
                    and _is_okf(store, where):
                log = _bundle_log(plan.path, Path(where[0].path))
                rel = plan.path.relative_to(log.parent).as_posix()
                logs.setdefault(log, []).extend(
                    f"**Update** `{rel}` by cairn dream: {d}" for d in descs)
    for log, entries in logs.items():
        out.append(_log(log, entries, day, dry_run, backups, _diff_name(log, roots)))
    return out


def _is_okf(store: Store, where: tuple[SourceRoot, str]) -> bool:
    return any(d.format == "okf" for d in store.documents_at(where[0].id, where[1]))


def _write(plan: _Plan, new: bytes, descs: tuple[str, ...], diff: str, note: str,
           backups: Backups) -> FileChange:
    try:
        if plan.old is None:
            missing = 0
            while not plan.path.parents[missing].exists():
                missing += 1
            create_file(plan.path, new)
            # logged so that restoring the run removes the file (while unchanged)
            made = backups.record_created(plan.path, new, made_dirs=missing,
                                          reason="dream: " + "; ".join(descs)[:200])
            return FileChange(str(plan.path), "created", descs, diff, note, made.id)
        res = _write_file(plan.path, new, expected_sha256=sha256_bytes(plan.old),
                          backups=backups, reason="dream: " + "; ".join(descs)[:200])
    except WriteConflict as exc:
        return FileChange(str(plan.path), "refused", descs, "", str(exc))
    except OSError as exc:
        return FileChange(str(plan.path), "refused", descs, "", f"{plan.path}: {exc}")
    return FileChange(str(plan.path), "changed", descs, diff, note,
                      res.backup.id if res.backup else None)


def _diff_name(path: Path, roots: Sequence[SourceRoot]) -> str:
    """How a diff header names ``path``: relative to its root, like git (``a/notes/x.md``),
    else the path as given."""
    where = _root_of(path, roots)
    return where[1] if where else path.as_posix()


def _log(log: Path, entries: list[str], day: str, dry_run: bool, backups: Backups,
         name: str) -> FileChange:
    try:
        old = log.read_bytes() if log.exists() else None
    except OSError as exc:
        return FileChange(str(log), "refused", (), "", f"cannot read it: {exc}")
    text = (old or b"").decode("utf-8", "replace")
    for e in reversed(entries):
        text = add_log_entry(text, day, e)
    new = text.encode("utf-8")
    diff = unified_diff(name, old or b"", new, created=old is None)
    descs = (f"log {len(entries)} change(s) in {log.name}",)
    if dry_run:
        return FileChange(str(log), "planned", descs, diff)
    plan = _Plan(log, old, text)
    return _write(plan, new, descs, diff, "", backups)
