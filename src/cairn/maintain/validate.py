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
from pathlib import Path

from cairn.formats import okf, types
from cairn.model import Diagnostic, SourceRoot
from cairn.store import Store


def validate_roots(
    store: Store, roots: list[SourceRoot], registry: types.RootTypes
) -> list[Diagnostic]:
    """Check every root; diagnostics carry paths relative to their root's parent.

    Args:
        store: the index (documents must have been indexed).
        roots: the roots to check.
        registry: the note types of every root (:func:`cairn.formats.types.load_root_types`);
            a ``types.yaml`` that could not be read is reported as an ``error``.
    """
    out: list[Diagnostic] = [
        dataclasses.replace(d, severity="error") for d in registry.problems
    ]
    for root in roots:
        folder = Path(root.path)
        name = folder.name
        reg = registry.by_root.get(root.id)
        if reg is not None:
            for doc in store.documents_of_root(root.id, typed_only=True):
                for d in types.validate_note(doc, reg):
                    out.append(dataclasses.replace(d, path=f"{name}/{d.path}"))
        relpaths = sorted(store.file_states(root.id))
        for bundle in okf.find_bundles(folder, relpaths):
            base = folder / bundle if bundle else folder
            prefix = f"{name}/{bundle}/" if bundle else f"{name}/"
            for d in okf.validate_bundle(base):
                out.append(dataclasses.replace(d, path=prefix + d.path))
    return out
