"""Comparable snapshots of an index and what a watcher batch did."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from cairn.model.core import Run

Wait = float | None | Literal["config"]
"""How long a writer waits for another one: seconds, ``None`` (as long as it takes) or
``"config"`` (``[index] wait``, default ``0``: do not wait)."""


@dataclass(frozen=True, slots=True)
class IndexSnapshot:
    """What an index holds, as sorted tuples, for comparing two indexes of the same
    files (see :meth:`cairn.app.Cairn.snapshot`): equal snapshots mean the same files
    (root, path, status, hash), documents (id, root, path, key, title, format), units
    (id, document, ordinal, kind, title, outline path, lines, body, tags), links
    (unit, kind, target, anchor, line, resolution), graph edges (source, target,
    relation, origin) and chunks (unit, count, hashes)."""

    files: tuple[tuple[str, str, str, str], ...]
    documents: tuple[tuple[str, ...], ...]
    units: tuple[tuple[Any, ...], ...]
    links: tuple[tuple[Any, ...], ...]
    edges: tuple[tuple[str, str, str, str], ...]
    chunks: tuple[tuple[str, int, str], ...]

    def differences(self, other: IndexSnapshot) -> dict[str, int]:
        """Per part, how many rows are in one snapshot and not the other (``{}``:
        identical)."""
        out: dict[str, int] = {}
        for name in ("files", "documents", "units", "links", "edges", "chunks"):
            a, b = set(getattr(self, name)), set(getattr(other, name))
            if a != b:
                out[name] = len(a ^ b)
        return out


@dataclass(frozen=True, slots=True)
class AppliedChanges:
    """What ``IndexService.apply_changes`` did with a batch of changed paths.

    Attributes:
        run: the index run (of the last step when a full run was needed too).
        files: the notes handed to ``index_paths`` (absolute paths).
        full: whether a root needed a full run (an attachment or ``types.yaml``).
    """

    run: Run
    files: tuple[str, ...] = ()
    full: bool = False
