"""Looking documents and units up in the store (what the doors show)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from cairn.model import Backlink, StoredDocument, StoredLink, StoredUnit


class DocumentIndex(Protocol):
    """Stored documents and units by id or file, with their links and backlinks."""

    def document(self, document_id: str) -> StoredDocument | None:
        """The document with this id, or ``None``."""
        ...

    def documents_at(self, root_id: str, relpath: str) -> list[StoredDocument]:
        """The documents indexed from one file of a root, by key (empty when none)."""
        ...

    def unit(self, unit_id: str) -> StoredUnit | None:
        """The unit with this id, or ``None``."""
        ...

    def units_of(self, document_id: str) -> list[StoredUnit]:
        """A document's units in document order (by ordinal)."""
        ...

    def find_ids(self, prefix: str) -> list[tuple[str, str]]:
        """``(kind, id)`` pairs, ``kind`` ``document`` or ``unit``, whose id starts with
        ``prefix`` (taken literally): at most five of each, documents first."""
        ...

    def links_of(self, unit_ids: Sequence[str]) -> list[StoredLink]:
        """Outgoing links of the given units, by unit id then position in the unit."""
        ...

    def backlinks(self, document_id: str) -> list[Backlink]:
        """Links from anywhere that resolve to this document or one of its units, by
        source path and line."""
        ...

    def documents_by_format(
        self, formats: Sequence[str], *, limit: int = 200, offset: int = 0
    ) -> list[StoredDocument]:
        """Documents of these formats, newest first (``created``, ``modified``).

        Raises:
            QueryError: ``limit`` < 1 or ``offset`` < 0. StoreError: the backend failed.
        """
        ...
