"""Which folders are OKF bundles (the rule is in :mod:`cairn.formats.okf`)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from cairn.formats import frontmatter as fm_mod
from cairn.formats.okf.concepts import RESERVED


def _regular(path: Path) -> bool:
    """Whether ``path`` itself (not a link's target) is a regular file: a FIFO would
    block a read for ever, a symbolic link may lead out of the bundle."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _iter_md(root: Path, limit: int | None = None) -> Iterator[Path]:
    """The bundle's ``.md``/``.mdx`` files (regular files only, hidden ones left out)."""
    count = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fname in sorted(filenames):
            if fname.startswith("."):
                continue
            if fname.lower().endswith((".md", ".mdx")) and _regular(Path(dirpath) / fname):
                yield Path(dirpath) / fname
                count += 1
                if limit is not None and count >= limit:
                    return


def _read(path: Path) -> str | None:
    """The file's text; ``None`` when it is not a regular file or not UTF-8."""
    if not _regular(path):
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


_FACTS: dict[tuple[str, int, int], tuple[bool, bool]] = {}
"""(path, mtime in ns, size) → (front matter has ``okf_version``, has a non-empty
string ``type``): an index run asks again for every candidate folder, and parsing the
front matter (YAML) of unchanged files each time was most of a small run's work."""
_FACTS_MAX = 50_000


def _front_facts(path: Path) -> tuple[bool, bool] | None:
    """Whether the file's front matter has ``okf_version`` and a ``type`` (a
    non-empty string); ``None`` when it cannot be read. Kept while the file's size and
    modification time stay the same."""
    try:
        st = path.stat()
    except OSError:
        return None
    key = (str(path), st.st_mtime_ns, st.st_size)
    hit = _FACTS.get(key)
    if hit is not None:
        return hit
    text = _read(path)
    if text is None:
        return None
    data = fm_mod.split(text, allow_toml=False).data
    value = data.get("type")
    facts = ("okf_version" in data, isinstance(value, str) and bool(value.strip()))
    if len(_FACTS) >= _FACTS_MAX:
        _FACTS.clear()
    _FACTS[key] = facts
    return facts


def is_bundle(root: Path) -> bool:
    """Whether the folder ``root`` is an OKF bundle (rule in the module docstring)."""
    index = root / "index.md"
    if index.is_file():
        facts = _front_facts(index)
        if facts is not None and facts[0]:
            return True
    if (root / ".obsidian").exists() or not index.is_file():
        return False
    total = typed = 0
    for path in _iter_md(root, limit=500):
        if path.name.lower() in RESERVED or not path.name.endswith(".md"):
            continue
        total += 1
        facts = _front_facts(path)
        if facts is not None and facts[1]:
            typed += 1
    return total > 0 and typed * 10 >= total * 9


def find_bundles(folder: Path, relpaths: list[str]) -> list[str]:
    """Root-relative folders (``""`` for the root) that are OKF bundles, outermost only.

    Candidates are the root and every folder holding an ``index.md``.
    """
    candidates = sorted(
        {""}
        | {
            r.rsplit("/", 1)[0] if "/" in r else ""
            for r in relpaths
            if r.rsplit("/", 1)[-1].lower() == "index.md"
        },
        key=lambda p: (p.count("/") + (1 if p else 0), p),
    )
    bundles: list[str] = []
    for cand in candidates:
        if any(cand == b or cand.startswith(b + "/") or not b for b in bundles):
            continue
        if is_bundle(folder / cand if cand else folder):
            bundles.append(cand)
    return bundles
