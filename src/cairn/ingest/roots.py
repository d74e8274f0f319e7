"""Source roots: registering folders (or single export files) and refusing roots that
would index a file twice."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from cairn.errors import CairnError
from cairn.globs import check_globs
from cairn.model import SourceRoot
from cairn.store import Store


def add_roots(
    store: Store,
    paths: Iterable[str | os.PathLike[str]],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> list[SourceRoot]:
    """Register folders as source roots (a file registers its folder, limited to it).

    Raises:
        CairnError: a path does not exist, or would nest roots.
        ConfigError: a glob is unusable (:func:`cairn.globs.glob_problem`);
            nothing is registered.
    """
    from cairn.ingest.pipeline import make_root

    check_globs(include, exclude)
    roots: list[SourceRoot] = []
    for p in paths:
        path = Path(p).expanduser()
        if not path.exists():
            raise CairnError(f"{path}: no such file or folder")
        if path.is_file():
            real = path.resolve()
            covering = [
                r for r in store.roots() if Path(r.path) in real.parents and not r.include
            ]
            if covering:  # already inside a registered folder: index that one
                roots.append(covering[0])
                continue
            root = make_root(path.parent, (*include, file_pattern(path.name)), exclude)
            known = {r.id: r for r in store.roots()}
            if root.id in known and known[root.id].include:
                merged = tuple(dict.fromkeys((*known[root.id].include,
                                              file_pattern(path.name))))
                root = SourceRoot(root.id, root.path, merged, root.exclude)
        else:
            root = make_root(path, include, exclude)
        refuse_nesting(store, root)
        store.upsert_root(root)
        roots.append(root)
    return roots


def file_pattern(name: str) -> str:
    """The include pattern of one file named on the command line: anchored to its
    folder (a bare name would match that name in every subfolder too, as in
    ``.gitignore``) and with the glob's special characters taken literally."""
    literal = "".join(f"[{c}]" if c in "*?[" else c for c in name)
    return "/" + literal


def refuse_nesting(store: Store, root: SourceRoot) -> None:
    """A folder inside (or around) a registered one would index files twice (raises
    :class:`CairnError` naming both). A root
    limited to named files (an export registered by its file) holds only those
    files: folders beside it or inside its folder are no overlap."""
    new = Path(root.path)
    for r in store.roots():
        old = Path(r.path)
        if r.id == root.id or _holds_only_files(root):
            continue
        if _holds_only_files(r):
            if new in old.parents:  # the new folder holds the registered files
                raise CairnError(
                    f"{new} holds the registered file(s) "
                    f"{', '.join(_unescape(p) for p in r.include)} of "
                    f"{old}; remove that root first with `cairn roots --remove {old}` "
                    "so no file is indexed twice"
                )
            continue
        if old in new.parents:
            raise CairnError(
                f"{new} is inside the registered folder {old}; run `cairn index {old}` "
                "(use --include/--exclude to narrow it), or remove that folder first "
                "with `cairn roots --remove`"
            )
        if new in old.parents:
            raise CairnError(
                f"{new} holds the registered folder {old}; remove it first with "
                f"`cairn roots --remove {old}` so no file is indexed twice"
            )


def _holds_only_files(root: SourceRoot) -> bool:
    """Whether a root is limited to files named outright (``include`` of plain names,
    as registering an export file makes it), not to globs or folders."""
    return bool(root.include) and all(named_file(p) is not None for p in root.include)


def named_file(pattern: str) -> str | None:
    """The file name an include pattern of :func:`file_pattern` (or an older bare
    name) names outright, or ``None`` for a glob or a folder pattern."""
    bare = re.sub(r"\[[*?\[]\]", "", pattern.removeprefix("/"))
    if any(ch in bare for ch in "*?[/"):  # a "]" outside a class is literal
        return None
    return _unescape(pattern)


def _unescape(pattern: str) -> str:
    """``/odd[[]1].md`` → ``odd[1].md``."""
    name = pattern.removeprefix("/")
    for special in "*?[":
        name = name.replace(f"[{special}]", special)
    return name
