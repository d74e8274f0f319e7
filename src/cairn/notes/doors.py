"""What the doors (the MCP server and the HTTP API) need on top of the note lookups:
paths confined to the roots, provenance of quoted note text, recent changes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from cairn.conversations import reading_order
from cairn.errors import NotFound, QueryError
from cairn.notes.service import NoteService
from cairn.sources import is_within
from cairn.store import Store

if TYPE_CHECKING:
    from cairn.model import Provenance, RecentDocument, ShowView, StoredDocument


class Doors:
    """Confinement, provenance and recent changes, for agents and programs.

    Args:
        store: the index.
        notes: the note lookups (``show``, the text of a file).
    """

    def __init__(self, store: Store, notes: NoteService) -> None:
        self.store = store
        self.notes = notes

    def inside_roots(self, path: str) -> Path:
        """Resolve a path a client passed and make sure it lies inside a registered root.

        Symbolic links are resolved first; a relative path is taken relative to each
        root in turn (never to the server's working folder); percent-escapes are
        decoded and the decoded spelling must stay inside too.

        Args:
            path: a file path, absolute or relative to a root (no ``:LINE``).

        Returns:
            The resolved absolute path (it may not exist).

        Raises:
            QueryError: the path is empty, holds a NUL byte or a control character, or
                resolves outside every registered root (``../``, an absolute path
                elsewhere, a symbolic link out, ``%2e%2e/``).
        """
        if not path or any(ord(c) < 32 for c in path):
            raise QueryError(
                f"{path!r}: refused: an empty path or one with control "
                "characters (a NUL byte) is never a note"
            )
        roots = [Path(r.path) for r in self.store.roots()]
        found: Path | None = None
        for spelling in dict.fromkeys((path, unquote(path))):
            if any(ord(c) < 32 for c in spelling):
                raise QueryError(f"{path!r}: refused: it decodes to a control character")
            try:
                cand = Path(spelling).expanduser()
            except RuntimeError:  # ~nosuchuser/…
                raise QueryError(f"{path}: refused: no such home folder") from None
            tries = [cand] if cand.is_absolute() else [r / cand for r in roots]
            inside = [t for t in tries if any(is_within(r, t) for r in roots)]
            if not inside:
                raise QueryError(
                    f"{path}: refused: it resolves outside every registered source root "
                    "(only files under the folders `cairn roots` lists can be read)"
                )
            if found is None:
                found = next((t for t in inside if _exists(t)), inside[0]).resolve()
        assert found is not None
        return found

    def confine(self, ref: str) -> str:
        """``ref`` unchanged when it is an id, or a ``PATH[:LINE]`` inside a registered
        root; what the doors check every reference a client passes with.

        Raises:
            QueryError: ``ref`` names a path outside every root, or holds a NUL byte
                or a control character (see :meth:`inside_roots`).
            NotFound: ``ref`` names a path inside a root where there is no file.
        """
        if any(ord(c) < 32 for c in ref):
            raise QueryError(
                f"{ref!r}: refused: a reference with control characters "
                "(a NUL byte) is never a note"
            )
        if self.store.unit(ref) is not None or self.store.document(ref) is not None:
            return ref
        head, sep, tail = ref.rpartition(":")
        path = head if sep and head and tail.isdigit() else ref
        if (re.search(r"[/\\~%]|^\.", path) or Path(path).suffix) and not _exists(
            self.inside_roots(path)
        ):
            raise NotFound(f"{path}: no such file inside a registered source root")
        return ref

    def get(self, ref: str) -> ShowView:
        """:meth:`NoteService.show` for a client of a door: ``ref`` is checked by :meth:`confine`
        first, so no path outside the roots is ever looked at.

        Raises:
            QueryError: a path outside every root. NotFound: nothing matches.
        """
        return self.notes.show(self.confine(ref))

    def provenance(self, ids: Sequence[str]) -> list[Provenance]:
        """Where each quoted unit or document comes from (file, line span, content
        hash), in the order given; ids that name nothing are left out.

        Args:
            ids: unit ids or document ids (a search's hits, a shown view).
        """
        from cairn.model import Provenance

        out: list[Provenance] = []
        hashes: dict[tuple[str, str], dict[str, str]] = {}

        def content_hash(d: StoredDocument) -> str:
            key = (d.root_id, d.path)
            if key not in hashes:
                hashes[key] = self.store.document_hashes(d.root_id, d.path)
            return hashes[key].get(d.id, "")

        for i in ids:
            unit = self.store.unit(i)
            if unit is not None:
                doc = self.store.document(unit.document_id)
                if doc is not None:
                    out.append(
                        Provenance(
                            unit.id,
                            doc.id,
                            doc.path,
                            doc.abs_path,
                            unit.line_start,
                            unit.line_end,
                            content_hash(doc),
                        )
                    )
                continue
            doc = self.store.document(i)
            if doc is not None:
                units = self.store.units_of(doc.id)
                first = min((u.line_start for u in units), default=1)
                last = max((u.line_end for u in units), default=1)
                out.append(
                    Provenance(None, doc.id, doc.path, doc.abs_path, first, last, content_hash(doc))
                )
        return out

    def recent(self, since: str, *, limit: int = 50) -> list[RecentDocument]:
        """Documents whose file changed at or after ``since``, newest first.

        Args:
            since: an ISO 8601 date or time (``2026-03-01``, ``2026-03-01T09:30``; UTC
                unless it names a zone), or an age: ``7d``, ``12h``, ``30m``.
            limit: at most this many (1-1000).

        Raises:
            QueryError: ``since`` is neither, or ``limit`` is out of range.
        """
        from cairn.model import RecentDocument

        if not 1 <= limit <= 1000:
            raise QueryError(f"limit must be 1-1000, not {limit}")
        cutoff = _since(since)
        found = [
            d
            for r in self.store.roots()
            for d in self.store.documents_of_root(r.id)
            if d.mtime >= cutoff
        ]
        found.sort(key=lambda d: (-d.mtime, d.path, d.key or ""))
        paths = {r.id: r.path for r in self.store.roots()}
        return [
            RecentDocument(
                document_id=d.id,
                title=d.title,
                format=d.format,
                path=d.path,
                abs_path=str(Path(paths.get(d.root_id, "")) / d.path),
                changed=datetime.fromtimestamp(d.mtime, UTC).isoformat(timespec="seconds"),
                modified=d.modified,
                content_hash=d.content_hash,
            )
            for d in found[:limit]
        ]

    def document_text(self, document_id: str) -> str:
        """A document's text: its file as written when the file holds only it, else
        (one conversation of a chat export) its units' titles and bodies in reading
        order.

        Raises:
            NotFound: no such document, or its file is no longer inside a root.
        """
        doc = self.store.document(document_id)
        if doc is None:
            raise NotFound(f"{document_id}: no such document")
        if len(self.store.documents_at(doc.root_id, doc.path)) == 1:
            return self.notes.read_file(doc.abs_path)
        units = reading_order(self.store.units_of(doc.id))
        return "\n\n".join(f"{u.title}\n{u.body}".strip() for u in units)


def _exists(path: Path) -> bool:
    """``path.exists()``, false for a name the system cannot even look up (too long)."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def _since(text: str) -> float:
    """POSIX seconds of an ISO date/time (UTC unless zoned) or an age ``7d``/``12h``/``30m``.

    Raises:
        QueryError: neither.
    """
    m = re.fullmatch(r"\s*(\d+)\s*([dhm])\s*", text)
    if m:
        seconds = int(m[1]) * {"d": 86400, "h": 3600, "m": 60}[m[2]]
        return datetime.now(UTC).timestamp() - seconds
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise QueryError(
            f"{text!r}: give a date (2026-03-01), a time (2026-03-01T09:30) or an age "
            "(7d, 12h, 30m)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()
