"""Deterministic identifiers.

Every id is a UUIDv5 in cairn's namespace over a path-like name, so indexing the same
files twice gives the same ids. A source's own id (an Org ``ID``, a frontmatter ``id``,
a chat message id) wins when it is free; see :func:`assign_ids`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import operator
import uuid
from pathlib import Path

from cairn.model import Diagnostic, Document, SourceRoot, Unit
from cairn.sources import SourceFile
from cairn.store import Store

NAMESPACE = uuid.UUID("5b0c5f4e-6a35-5d8e-9a55-63a1c2a1e0b7")


_NS_BYTES = NAMESPACE.bytes


def uuid5(name: str) -> str:
    """``str(uuid.uuid5(NAMESPACE, name))``, a third of the time (no ``UUID`` object:
    the SHA-1's first 16 bytes with the version and variant bits set, formatted; a
    test checks both agree)."""
    h = bytearray(hashlib.sha1(_NS_BYTES + name.encode("utf-8")).digest()[:16])
    h[6] = (h[6] & 0x0F) | 0x50
    h[8] = (h[8] & 0x3F) | 0x80
    x = h.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def root_id(path: Path) -> str:
    """Id of a source root, over its resolved absolute path."""
    return str(uuid.uuid5(NAMESPACE, "root:" + path.resolve().as_posix()))


def document_id(root: str, relpath: str, key: str | None = None) -> str:
    """Id of a document: root id, relative path and, for multi-document files, its key."""
    return uuid5(f"doc:{root}:{relpath}" + (f":{key}" if key else ""))


def unit_id(doc_id: str, outline_path: tuple[str, ...], occurrence: int, kind: str) -> str:
    """Id of a unit: its document, kind, outline path and occurrence.

    ``occurrence`` counts earlier units of the same document with the same kind and
    outline path (0 for the first), so inserting a heading elsewhere in the file leaves
    the other units' ids unchanged.
    """
    return uuid5(f"unit:{doc_id}:{kind}:{occurrence}:" + "\x1f".join(outline_path))


def assign_ids(
    store: Store, root: SourceRoot, docs: list[Document], sf: SourceFile, digest: str
) -> list[Document]:
    """Give documents and units their final ids (declared ids win when free)."""
    taken_docs: set[str] = set()
    taken_units: set[str] = set()
    return [
        assign_doc_ids(store, root, sf, doc, taken_docs, taken_units, content_hash=digest)
        for doc in docs
    ]


def assign_doc_ids(
    store: Store,
    root: SourceRoot,
    sf: SourceFile,
    doc: Document,
    taken_docs: set[str],
    taken_units: set[str],
    *,
    content_hash: str | None = None,
    known: tuple[str, Diagnostic | None] | None = None,
) -> Document:
    """One document's id (its declared id when no other file uses it, else a
    path-based UUIDv5) and its units' ids; ``taken_*`` hold ids already given out
    for this file (``taken_units`` may hold only this document's when the file's
    earlier documents are in the store already, where :meth:`Store.unit_owner` finds
    their units); ``content_hash`` (when given) replaces the document's; ``known``
    is the id and warning :func:`document_id_of` gave this document already."""
    doc_id, conflict = known or document_id_of(store, root, sf, doc, taken_docs)
    if conflict is not None:
        doc = dataclasses.replace(doc, warnings=(*doc.warnings, conflict))
    units = _unit_ids(store, doc_id, doc.units, taken_units)
    if content_hash is None:
        content_hash = doc.content_hash
    return dataclasses.replace(
        doc, id=doc_id, root_id=root.id, size=sf.size, mtime=sf.mtime, units=units,
        content_hash=content_hash,
    )


def document_id_of(
    store: Store, root: SourceRoot, sf: SourceFile, doc: Document, taken_docs: set[str]
) -> tuple[str, Diagnostic | None]:
    """One document's id, added to ``taken_docs``: its declared id when no other file
    uses it, else a path-based UUIDv5 and the warning that says why (else ``None``)."""
    doc_id = document_id(root.id, sf.relpath, doc.key)
    conflict = None
    if doc.declared_id and doc.declared_id not in taken_docs:
        owner = store.document_owner(doc.declared_id)
        if owner is None or owner == (root.id, sf.relpath):
            doc_id = doc.declared_id
        else:
            conflict = Diagnostic(
                sf.relpath,
                f"id {doc.declared_id} is already used by {owner[1]}; "
                "a path-based id is used instead",
            )
    taken_docs.add(doc_id)
    return doc_id, conflict


def _unit_ids(
    store: Store, doc_id: str, units: tuple[Unit, ...], taken: set[str]
) -> tuple[Unit, ...]:
    """Unit ids: a declared id (Org ``ID``, message id) when no other document uses
    it, else a UUIDv5 over document, kind, outline path and occurrence."""
    seen: dict[tuple[str, tuple[str, ...]], int] = {}
    assigned: list[str] = []
    for u in units:
        key = (u.kind, u.outline_path)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        uid = unit_id(doc_id, u.outline_path, occurrence, u.kind)
        if u.declared_id and u.declared_id not in taken and u.declared_id != doc_id:
            owner = store.unit_owner(u.declared_id)
            if owner is None or owner == doc_id:
                uid = u.declared_id
        taken.add(uid)
        assigned.append(uid)
    return tuple(
        _with_ids(
            u,
            assigned[i],
            doc_id,
            assigned[u.parent] if u.parent is not None and 0 <= u.parent < i else None,
        )
        for i, u in enumerate(units)
    )


_UNIT_FIELDS = tuple(f.name for f in dataclasses.fields(Unit))
_unit_values = operator.attrgetter(*_UNIT_FIELDS)
_ID, _DOC, _PARENT = (_UNIT_FIELDS.index(n) for n in ("id", "document_id", "parent_id"))


def _with_ids(u: Unit, uid: str, doc_id: str, parent_id: str | None) -> Unit:
    """``dataclasses.replace(u, id=uid, document_id=doc_id, parent_id=parent_id)``,
    twice as fast (every field passed by position: no per-call field look-up; a test
    checks that both give equal units)."""
    values = list(_unit_values(u))
    values[_ID], values[_DOC], values[_PARENT] = uid, doc_id, parent_id
    return Unit(*values)
