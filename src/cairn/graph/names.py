"""Name keys: what a link looks for and what a document answers to.

A link can only reach documents that answer to one of its name keys
(:func:`link_keys`: the case-folded last path segment, with and without a note
extension, or ``id:X``), and a document answers to the keys of its file name, aliases
and declared / Org ``ID`` s (:func:`document_names`). Link resolution
(:mod:`cairn.graph.resolve`) records both, so it knows which documents may resolve
differently when another changes, and can build a catalog of only the candidates.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Iterable
from urllib.parse import unquote

from cairn.model import (
    EMBED,
    MARKDOWN_LINK,
    ORG_FILE,
    ORG_HEADING,
    ORG_ID,
    URL,
    WIKILINK,
    CatalogDocument,
    CatalogUnit,
    LinkOccurrence,
)

NOTE_EXTENSIONS = (".md", ".markdown", ".org", ".txt")


def nfc(s: str) -> str:
    """``s`` in Unicode NFC: a name written in NFD (as macOS writes file names) and the
    same name in NFC (as links are usually typed) resolve alike."""
    return s if s.isascii() else unicodedata.normalize("NFC", s)


def strip_note_extension(name: str) -> str:
    """``name`` without a note file extension (``.md``, ``.org``, …), if it has one and
    is more than that extension."""
    for ext in NOTE_EXTENSIONS:
        if name.endswith(ext) and len(name) > len(ext):
            return name[: -len(ext)]
    return name


def _base(text: str) -> str:
    return nfc(text).strip().casefold().rstrip("/").rsplit("/", 1)[-1].strip()


def name_key(text: str) -> str:
    """The name key of a path, note name or alias: its last path segment, case-folded,
    without a note extension (``Notes/Project Plan.md`` → ``project plan``)."""
    return strip_note_extension(_base(text))


def link_keys(link: LinkOccurrence) -> set[str]:
    """The name keys of the documents ``link`` could resolve to (empty: only its own
    document, or nothing): the last path segment with and without a note extension, or
    ``id:X`` for an Org ``id:`` link."""
    kind, target = link.kind, (link.target or "").strip()
    if kind == ORG_ID:
        return {"id:" + target} if target else set()
    if kind in (URL, ORG_HEADING):
        return set()
    if kind == ORG_FILE:
        target = (target[5:] if target.startswith("file:") else target).strip()
        if not target:
            return set()
        rel = posixpath.normpath(posixpath.join(posixpath.dirname(link.path), target))
        texts = [target, rel]
    elif kind in (WIKILINK, EMBED, MARKDOWN_LINK):
        if not target:
            return set()
        texts = [target, unquote(target)]
    else:
        return set()
    out: set[str] = set()
    for t in texts:
        b = _base(t)
        if b:
            out.update((b, strip_note_extension(b)))
    return out


def document_names(doc: CatalogDocument, units: Iterable[CatalogUnit] = ()) -> set[str]:
    """The name keys a document answers to: its file name, its aliases, its declared
    ``ID`` and its units' Org ``ID`` s (``id:X``)."""
    out = {name_key(doc.path)}
    out.update(name_key(a) for a in doc.aliases if str(a).strip())
    if doc.declared_id and doc.declared_id.strip():
        out.add("id:" + doc.declared_id.strip())
    out.update("id:" + u.org_id.strip() for u in units if u.org_id and u.org_id.strip())
    out.discard("")
    return out


def attachment_node(root_id: str, path: str) -> str:
    """The pseudo document id under which an attachment's name is recorded."""
    return f"attachment:{root_id}:{path}"


def split_attachment(node: str) -> tuple[str, str] | None:
    """``(root id, path)`` of an :func:`attachment_node` id; ``None`` for a document id."""
    if not node.startswith("attachment:"):
        return None
    root_id, _, path = node[len("attachment:"):].partition(":")
    return root_id, path
