"""The typed results of the index's own state (:class:`cairn.notes.service.NoteService`):
``stats()`` and ``validate()``.

Each is a frozen dataclass read by attribute; :func:`cairn.model.serialize.to_data`
turns it into the JSON of ``cairn stats --json`` / ``/v1/stats`` / the MCP ``stats``
tool and of ``cairn validate --json`` (docs/reference/json.md). Their fields are
declared in the JSON's order; only :class:`IndexStats` names one differently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cairn.model.core import Run
    from cairn.model.views import FailedFile


@dataclass(frozen=True, slots=True)
class FormatCount:
    """The documents and units of one format."""

    documents: int
    units: int


@dataclass(frozen=True, slots=True)
class DocumentWarning:
    """A warning kept with an indexed document: its root's folder, the path the warning
    names, the message, the 1-based line (or ``None``) and ``severity`` (``warning`` or
    ``info``)."""

    root: str
    path: str
    message: str
    line: int | None
    severity: str


@dataclass(frozen=True, slots=True)
class IndexStats:
    """The index at a glance.

    Attributes:
        index: the index file (or the database URL, its password hidden); ``db`` in
            the JSON.
        schema_version: the schema the index is at.
        roots … fts_rows: counts of registered roots, files, documents, units, links
            (``links_unresolved`` leaves out URLs and attachments) and full-text rows.
        failed_files: the files whose last indexing failed.
        formats: per format, in name order, its documents and units.
        last_run: the last indexing run, ``None`` before the first.
        warnings: every indexed document's warnings.
        units_waiting: units that semantic search cannot find yet because their
            embedding step did not finish (interrupted, killed, ``--no-embed``), in the
            space the embedding step last filled; ``None`` when the index holds no
            vectors.
    """

    index: str
    schema_version: int
    roots: int
    files: int
    documents: int
    units: int
    links: int
    links_resolved: int
    links_unresolved: int
    fts_rows: int
    failed_files: tuple[FailedFile, ...]
    formats: Mapping[str, FormatCount]
    last_run: Run | None
    warnings: tuple[DocumentWarning, ...]
    units_waiting: int | None = None

    def to_mapping(self) -> dict[str, Any]:
        """The JSON object: the fields in order, ``index`` named ``db``."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        return {"db": out.pop("index"), **out}


@dataclass(frozen=True, slots=True)
class ValidationFinding:
    """One finding of ``cairn validate``: the path (relative to its root's parent), the
    1-based line or ``None``, ``severity`` (``error`` for an OKF conformance failure or
    an unreadable ``types.yaml``, else ``warning`` or ``info``) and the message."""

    path: str
    line: int | None
    severity: str
    message: str
