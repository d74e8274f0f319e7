"""``cairn validate``: note types and OKF bundle conformance, as warnings and errors.

Two checks, neither of which ever stops indexing:

* note types — every indexed Markdown/OKF note with a ``type`` is checked against the
  ``types.yaml`` of its source root (``<root>/types.yaml``) or, failing that, the one
  in the configuration folder (:func:`cairn.formats.types.validate_note`);
* OKF bundles — every bundle folder in a root is checked against the OKF v0.2
  conformance rules (:func:`cairn.formats.okf.validate_bundle`), which never reject what
  the specification tells consumers to tolerate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

from cairn.formats import okf, types
from cairn.model import Diagnostic, SourceRoot
from cairn.store import FileIndex


def _under(rel: str, part: str) -> bool:
    """Whether root-relative ``rel`` is ``part`` or inside it (``""``: the whole root)."""
    return not part or rel == part or rel.startswith(part + "/")


def _in_any(rel: str, parts: Sequence[str]) -> bool:
    return any(_under(rel, p) for p in parts)


def validate_roots(
    store: FileIndex,
    roots: list[SourceRoot],
    registry: types.RootTypes,
    within: Mapping[str, Sequence[str]] | None = None,
) -> list[Diagnostic]:
    """Check every root; diagnostics carry paths relative to their root's parent.

    Args:
        store: the index (documents must have been indexed).
        roots: the roots to check.
        registry: the note types of every root (:func:`cairn.formats.types.load_root_types`);
            a ``types.yaml`` that could not be read is reported as an ``error``.
        within: root id -> root-relative folders or files (POSIX, no leading ``/``;
            ``""`` the whole root) to check instead of the whole root: notes inside
            them, bundles inside them, and what an enclosing bundle's check finds
            inside them.
    """
    out: list[Diagnostic] = [
        dataclasses.replace(d, severity="error") for d in registry.problems
    ]
    for root in roots:
        folder = Path(root.path)
        name = folder.name
        parts = (within or {}).get(root.id) or ("",)
        reg = registry.by_root.get(root.id)
        if reg is not None:
            for doc in store.documents_of_root(root.id, typed_only=True):
                for d in types.validate_note(doc, reg):
                    if _in_any(d.path, parts):
                        out.append(dataclasses.replace(d, path=f"{name}/{d.path}"))
        relpaths = sorted(store.file_states(root.id))
        for bundle in okf.find_bundles(folder, relpaths):
            if not (_in_any(bundle, parts) or any(_under(p, bundle) for p in parts)):
                continue
            base = folder / bundle if bundle else folder
            for d in okf.validate_bundle(base):
                rel = f"{bundle}/{d.path}" if bundle else d.path
                if _in_any(rel, parts) or _in_any(bundle, parts):
                    out.append(dataclasses.replace(d, path=f"{name}/{rel}"))
    return out
