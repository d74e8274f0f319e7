"""Deterministic identifiers.

Every id is a UUIDv5 in cairn's namespace over a path-like name, so indexing the same
files twice gives the same ids. A source's own id (an Org ``ID``, a frontmatter ``id``,
a chat message id) wins when it is free; see :func:`cairn.ingest.pipeline.assign_ids`.
"""

from __future__ import annotations

import uuid
from pathlib import Path

NAMESPACE = uuid.UUID("5b0c5f4e-6a35-5d8e-9a55-63a1c2a1e0b7")


def root_id(path: Path) -> str:
    """Id of a source root, over its resolved absolute path."""
    return str(uuid.uuid5(NAMESPACE, "root:" + path.resolve().as_posix()))


def document_id(root: str, relpath: str, key: str | None = None) -> str:
    """Id of a document: root id, relative path and, for multi-document files, its key."""
    name = f"doc:{root}:{relpath}" + (f":{key}" if key else "")
    return str(uuid.uuid5(NAMESPACE, name))


def unit_id(doc_id: str, outline_path: tuple[str, ...], occurrence: int, kind: str) -> str:
    """Id of a unit: its document, kind, outline path and occurrence.

    ``occurrence`` counts earlier units of the same document with the same kind and
    outline path (0 for the first), so inserting a heading elsewhere in the file leaves
    the other units' ids unchanged.
    """
    name = f"unit:{doc_id}:{kind}:{occurrence}:" + "\x1f".join(outline_path)
    return str(uuid.uuid5(NAMESPACE, name))
