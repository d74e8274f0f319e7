"""The store's roots and files, written by an index run (:mod:`cairn.ingest`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from cairn.model import Document, Failure, FileState, SourceRoot


class FileIndex(Protocol):
    """Source roots, the files seen under them, and what each file was indexed as."""

    def upsert_root(self, root: SourceRoot) -> None:
        """Add a source root, or update its globs."""
        ...

    def roots(self) -> list[SourceRoot]:
        """Every registered source root, by path."""
        ...

    def remove_root(self, root_id: str) -> int:
        """Forget a root and everything indexed from it; returns documents removed."""
        ...

    def file_states(
        self, root_id: str, paths: Sequence[str] | None = None
    ) -> dict[str, FileState]:
        """Known files of a root: ``relpath -> FileState`` (``paths``: only these)."""
        ...

    def file_paths(self, root_id: str, named: str | None = None) -> list[str]:
        """The relpaths of a root's known files (no states); ``named``: only files of
        that name (case-insensitive)."""
        ...

    def file_count(self, root_id: str) -> int:
        """How many files of a root the index knows."""
        ...

    def documents_of_root(self, root_id: str, *, typed_only: bool = False) -> list[Document]:
        """A root's documents by path (then key), without units; ``typed_only``: only
        those that declare a ``type``."""
        ...

    def touch_file(self, root_id: str, relpath: str, size: int, mtime: float) -> None:
        """Record a new (size, mtime) for a file whose content hash did not change."""
        ...

    def record_failure(
        self, root_id: str, relpath: str, size: int, mtime: float, hash_: str, failure: Failure
    ) -> None:
        """Mark a file failed; documents from an earlier good version are kept."""
        ...

    def remove_file(self, root_id: str, relpath: str) -> int:
        """Delete a file and everything indexed from it; returns documents removed."""
        ...

    def replace_file(
        self,
        root_id: str,
        relpath: str,
        *,
        size: int,
        mtime: float,
        hash_: str,
        format_: str,
        documents: Sequence[Document],
        failure: Failure | None = None,
    ) -> None:
        """Replace everything indexed from one file with ``documents`` (final ids)."""
        ...

    def upsert_file(
        self,
        root_id: str,
        relpath: str,
        *,
        size: int,
        mtime: float,
        hash_: str,
        format_: str,
        failure: Failure | None = None,
    ) -> None:
        """Record a file as indexed (``ok``, or ``partial`` with ``failure``)."""
        ...

    def replace_document(self, doc: Document) -> None:
        """Insert a document, replacing one with the same id."""
        ...

    def delete_document(self, doc_id: str) -> None:
        """Delete one document with everything indexed from it."""
        ...

    def document_hashes(self, root_id: str, relpath: str) -> dict[str, str]:
        """``document id -> content hash`` of the documents indexed from one file."""
        ...

    def set_attachments(self, root_id: str, paths: Iterable[str]) -> None:
        """Replace the list of a root's non-note files."""
        ...

    def attachments(self) -> list[tuple[str, str]]:
        """``(root_id, relpath)`` of every known non-note file."""
        ...

    def document_owner(self, doc_id: str) -> tuple[str, str] | None:
        """``(root_id, path)`` of the file a document id belongs to, if any."""
        ...

    def unit_owner(self, unit_id: str) -> str | None:
        """The id of the document holding a unit id, if any."""
        ...
