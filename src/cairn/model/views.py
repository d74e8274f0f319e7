"""Stored views: what the store gives back for documents, units, links and runs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cairn.model.core import (
    PLANNING_ROLES,
    BlockRef,
    Diagnostic,
    Timestamp,
)

# --- stored views (what the store gives back) -------------------------------------------


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """A document as the index holds it (without its units).

    Attributes:
        id / root_id: ids in the index; ``root``: the source root's absolute path.
        path: path relative to the root (POSIX); ``abs_path``: the absolute file path.
        key: which document of a multi-document file (a conversation id), or ``None``.
        title / format / type / tags / aliases / created / modified / metadata: as
            parsed (see :class:`Document`).
        declared_id: an id the file declares (Org file ``ID``, frontmatter ``id``).
        warnings: diagnostics found while parsing.
        size: bytes of the file; ``mtime``: its POSIX modification time.
    """

    id: str
    title: str
    format: str
    path: str
    abs_path: str
    root: str
    key: str | None
    type: str | None
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    created: str | None
    modified: str | None
    metadata: Mapping[str, Any]
    warnings: tuple[Diagnostic, ...]
    size: int
    mtime: float
    root_id: str = ""
    declared_id: str | None = None


@dataclass(frozen=True, slots=True)
class StoredUnit:
    """A unit as the index holds it; fields as in :class:`Unit` (lines 1-based,
    inclusive). ``extra`` keeps format-specific fields (``role``, ``time``,
    ``alternate`` of a chat message)."""

    id: str
    document_id: str
    ordinal: int
    level: int
    kind: str
    title: str
    outline_path: tuple[str, ...]
    parent_id: str | None
    tags: tuple[str, ...]
    inherited_tags: tuple[str, ...]
    properties: Mapping[str, str]
    todo: str | None
    todo_state: str | None
    priority: str | None
    timestamps: tuple[Timestamp, ...]
    org_id: str | None
    custom_id: str | None
    language: str | None
    line_start: int
    line_end: int
    extra: Mapping[str, Any]
    body: str

    @property
    def planning(self) -> tuple[Timestamp, ...]:
        """The ``SCHEDULED``/``DEADLINE``/``CLOSED`` timestamps."""
        return tuple(t for t in self.timestamps if t.role in PLANNING_ROLES)


@dataclass(frozen=True, slots=True)
class StoredLink:
    """An outgoing link of a unit, with its resolution (see :class:`Link`)."""

    unit_id: str
    kind: str
    target: str
    alias: str | None
    anchor: str | None
    line: int | None
    resolved_document_id: str | None
    resolved_unit_id: str | None
    unresolved_reason: str | None


@dataclass(frozen=True, slots=True)
class Backlink:
    """A link from elsewhere that resolves to a document (or one of its units).

    ``source_*`` name the linking document and unit; ``line`` is the link's line in the
    source file; ``resolved_unit_id`` the unit linked to, when the link has an anchor."""

    source_document_id: str
    source_unit_id: str
    source_title: str
    source_path: str
    kind: str
    target: str
    anchor: str | None
    line: int | None
    resolved_unit_id: str | None


@dataclass(frozen=True, slots=True)
class FailedFile:
    """A file whose last indexing failed: ``status`` ``failed`` or ``partial``."""

    root: str
    path: str
    status: str
    reason: str | None
    line: int | None


@dataclass(frozen=True, slots=True)
class DocumentView:
    """``cairn show`` of a document: it, its units in order, their links, backlinks."""

    document: StoredDocument
    units: tuple[StoredUnit, ...]
    links: tuple[StoredLink, ...]
    backlinks: tuple[Backlink, ...]
    kind: str = "document"


@dataclass(frozen=True, slots=True)
class UnitView:
    """``cairn show`` of one unit: it, its document, its links and its context
    (sibling heading titles, or the neighbouring messages of a chat message); ``block``:
    the Obsidian block ``PATH#^id`` named inside it, else ``None``."""

    unit: StoredUnit
    document: StoredDocument | None
    links: tuple[StoredLink, ...]
    siblings: tuple[str, ...]
    kind: str = "unit"
    block: BlockRef | None = None


@dataclass(frozen=True, slots=True)
class FileView:
    """``cairn show`` of a file holding several documents (a chat export)."""

    path: str
    documents: tuple[StoredDocument, ...]
    kind: str = "file"


ShowView = DocumentView | UnitView | FileView
"""What :meth:`cairn.app.Cairn.show` returns."""
