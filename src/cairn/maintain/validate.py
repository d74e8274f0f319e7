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
import json
from pathlib import Path

from cairn.formats import okf, types
from cairn.model import Diagnostic, Document, SourceRoot
from cairn.store import Store


def _types_for(root: Path, fallback: Path | None) -> tuple[types.TypeRegistry | None, str | None]:
    for cand in (root / "types.yaml", fallback):
        if cand is not None and cand.is_file():
            return types.load_types(cand), str(cand)
    return None, None


def validate_roots(
    store: Store, roots: list[SourceRoot], *, types_file: Path | None = None
) -> list[Diagnostic]:
    """Check every root; diagnostics carry paths relative to their root's parent.

    Args:
        store: the index (documents must have been indexed).
        roots: the roots to check.
        types_file: ``types.yaml`` to use where a root has none of its own.

    Raises:
        cairn.errors.ConfigError: a ``types.yaml`` is malformed.
    """
    out: list[Diagnostic] = []
    for root in roots:
        folder = Path(root.path)
        name = folder.name
        registry, _ = _types_for(folder, types_file)
        if registry is not None:
            rows = store.db.execute(
                "SELECT path, format, title, metadata, type FROM documents "
                "WHERE root_id=? AND type IS NOT NULL ORDER BY path",
                (root.id,),
            ).fetchall()
            for r in rows:
                doc = Document(
                    path=r["path"],
                    format=r["format"],
                    title=r["title"],
                    units=(),
                    metadata=json.loads(r["metadata"]),
                    type=r["type"],
                )
                for d in types.validate_note(doc, registry):
                    out.append(dataclasses.replace(d, path=f"{name}/{d.path}"))
        relpaths = [
            r[0] for r in store.db.execute("SELECT path FROM files WHERE root_id=?", (root.id,))
        ]
        for bundle in okf.find_bundles(folder, relpaths):
            base = folder / bundle if bundle else folder
            prefix = f"{name}/{bundle}/" if bundle else f"{name}/"
            for d in okf.validate_bundle(base):
                out.append(dataclasses.replace(d, path=prefix + d.path))
    return out
