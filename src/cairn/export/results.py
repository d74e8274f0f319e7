"""The typed results of the export: the files it left out or wrote under another name
(:class:`cairn.export.notes.ExportReport`), and the round trip
(:meth:`cairn.export.service.ExportService.compare`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Skipped:
    """A document or file an export left out, and why (``path``: root-relative, a
    conversation's ``#key`` appended)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Renamed:
    """A note written under another name than its source's (``to``: dest-relative): a
    name the target does not allow, or a clash with another note of the same folder."""

    path: str
    to: str


Item = tuple[str, ...]
"""One thing a round trip must keep (a unit, a link, an edge, a task …), by document
title: see :func:`cairn.export.signature.signature`."""


@dataclass(frozen=True, slots=True)
class RoundTrip:
    """A registered root compared with the index of its export.

    Attributes:
        root: the root's folder; ``kind``: the export's kind (``okf``, ``obsidian``).
        same: nothing was lost or added.
        documents: documents ``(in the root, in the export)``.
        counts: per aspect (``units``, ``links``, ``edges``, ``tasks``, ``index``,
            ``display`` …) the items ``(in the root, in the export)``.
        differences: per aspect, how many items the export ``(lost, added)``.
        exceptions: ``{reason: count}`` of differences by design (a link inside an Org
            drawer …), listed and not counted.
        missing / extra: per aspect, the first 20 items lost / added.

    Its JSON (``cairn export compare --json``) is ``{"root", "kind", "same",
    "documents", <each aspect>: [root, export], "differences", "exceptions",
    "missing", "extra"}``.
    """

    root: str
    kind: str
    same: bool
    documents: tuple[int, int]
    counts: Mapping[str, tuple[int, int]]
    differences: Mapping[str, tuple[int, int]]
    exceptions: Mapping[str, int]
    missing: Mapping[str, tuple[Item, ...]]
    extra: Mapping[str, tuple[Item, ...]]

    def to_mapping(self) -> dict[str, Any]:
        """The JSON object (the aspects' counts at the top level, after ``documents``)."""
        return {
            "root": self.root,
            "kind": self.kind,
            "same": self.same,
            "documents": self.documents,
            **self.counts,
            "differences": self.differences,
            "exceptions": self.exceptions,
            "missing": self.missing,
            "extra": self.extra,
        }
