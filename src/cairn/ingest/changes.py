"""Which files a batch of file system events concerns (for :mod:`cairn.serving.watch`).

Events are hints: a path that changed may be a note, a folder that appeared or was
renamed (every file in it counts), a path that is gone (everything indexed under it
counts), an editor's temporary file (ignored), an attachment or a ``types.yaml`` (link
targets or note types change: its root needs a full run). :func:`changes_for` turns the
paths into the files to hand to :meth:`cairn.app.Cairn.index_paths` — exactly those a
full run would index or remove — and the roots that need a full run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cairn import formats
from cairn.globs import glob_match
from cairn.model import SourceRoot
from cairn.sources import is_ignored_name, source_file
from cairn.store import Store


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """What a batch of changed paths asks for.

    Attributes:
        files: absolute paths of notes to index or remove, in a stable order.
        full: roots that need a full run (an attachment or ``types.yaml`` changed).
    """

    files: tuple[str, ...] = ()
    full: tuple[SourceRoot, ...] = ()


def changes_for(
    store: Store,
    roots: Sequence[SourceRoot],
    changed: Iterable[str],
    *,
    skip_templates: bool = True,
) -> ChangeSet:
    """The files and roots a batch of changed paths (absolute, as events give them)
    concerns; paths outside ``roots`` are ignored; ``skip_templates``: as
    :func:`cairn.sources.discover` (``[index] templates``)."""
    files, full = _files_of(store, roots, changed, skip_templates)
    return ChangeSet(tuple(files), tuple(full))


def _files_of(
    store: Store, roots: Sequence[SourceRoot], changed: Iterable[str], skip_templates: bool
) -> tuple[list[str], list[SourceRoot]]:
    """The files to hand to ``index_paths`` for these changed paths, and the roots that
    need a full run (an attachment or ``types.yaml`` changed)."""
    known: dict[str, set[str]] = {}
    out: dict[str, None] = {}
    full: dict[str, SourceRoot] = {}
    for raw in changed:
        path = Path(raw)
        root = next((r for r in roots if _within(r.path, raw)), None)
        if root is None:
            continue
        rel = os.path.relpath(raw, root.path).replace(os.sep, "/")
        if rel == "." or any(is_ignored_name(part, is_dir=True) for part in rel.split("/")[:-1]):
            continue
        if root.id not in known:
            known[root.id] = set(store.file_states(root.id))
        indexed = known[root.id]
        if path.is_dir() and not path.is_symlink():
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = [d for d in dirnames if not is_ignored_name(d, is_dir=True)]
                for name in filenames:
                    _consider(os.path.join(dirpath, name), root, indexed, out, full, skip_templates)
            continue
        if not path.exists():  # gone: a file, or a folder with everything in it
            prefix = rel + "/"
            for r in indexed:
                if r.startswith(prefix):
                    out[os.path.join(root.path, r)] = None
        _consider(raw, root, indexed, out, full, skip_templates)
    return list(out), list(full.values())


def _consider(
    raw: str,
    root: SourceRoot,
    indexed: set[str],
    out: dict[str, None],
    full: dict[str, SourceRoot],
    skip_templates: bool,
) -> None:
    """Add one file to the batch if a full run would index or remove it."""
    rel = os.path.relpath(raw, root.path).replace(os.sep, "/")
    name = rel.rsplit("/", 1)[-1]
    if rel in indexed:
        out[raw] = None
        return
    if is_ignored_name(name, is_dir=False):
        return
    if name == "types.yaml":
        full[root.id] = root
        return
    sf = source_file(Path(root.path), rel, include=root.include, exclude=root.exclude,
                     skip_templates=skip_templates)
    if sf is None:
        if (
            not os.path.lexists(raw)
            and not formats.candidates(rel)
            and not any(glob_match(rel, p) for p in root.exclude)
        ):
            full[root.id] = root  # an attachment went away: link targets change
        return
    if formats.candidates(rel):
        out[raw] = None
    else:  # an attachment: link targets change, which only a full run recomputes
        full[root.id] = root


def _within(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
