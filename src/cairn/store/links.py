"""The stored links and their resolution (written by :mod:`cairn.graph`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from cairn.model import CatalogDocument, CatalogUnit, LinkOccurrence, LinkResolution


class LinkIndex(Protocol):
    """Links as parsed, what resolving them reads, and their resolutions."""

    def links_from(self, document_ids: Sequence[str] | None = None) -> list[LinkOccurrence]:
        """The stored links of the given documents (``None``: all), by unit and ordinal."""
        ...

    def set_link_resolutions(self, updates: Iterable[LinkResolution]) -> int:
        """Store new resolutions of links (keyed by unit id and ordinal); returns how many."""
        ...

    def documents_linking_to(self, document_ids: Sequence[str]) -> set[str]:
        """Documents with a link currently resolved to one of ``document_ids``."""
        ...

    def catalog_entries(
        self, document_ids: Sequence[str] | None = None, *, names_only: bool = False
    ) -> tuple[list[CatalogDocument], list[CatalogUnit]]:
        """What link resolution reads of the given documents (``None``: all) and their
        units, documents by (root, path, key, id), units by document and ordinal;
        ``names_only``: only the units with an Org ``ID``, their anchors left out."""
        ...
