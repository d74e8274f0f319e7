"""Documents and units by reference (``show``), the text of an indexed file, the index
at a glance (``stats``) and its checks (``validate``, ``check``)."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from cairn import model
from cairn.config import Config
from cairn.conversations import reading_order
from cairn.errors import NotFound
from cairn.model.index_results import (
    DocumentWarning,
    FormatCount,
    IndexStats,
    ValidationFinding,
)
from cairn.sources import is_within
from cairn.store import Store

if TYPE_CHECKING:
    from cairn.formats.types import RootTypes
    from cairn.model import (
        DocumentView,
        ShowView,
        StoredDocument,
        StoredUnit,
        UnitView,
    )


class NoteService:
    """Documents and units by reference, backlinks, file text, status and checks.

    Args:
        store: the index.
        config: the configuration (where the index is, for ``stats``).
        shown_text: what a reader is shown of a file's text
            (:meth:`cairn.redact.service.RedactService.shown_text`:
            ``shown_text(root_id, relpath, text)``).
        load_types: reads the roots' note types (``types.yaml``) now.
        embed_signature: the configured embedding model's signature (as an embedding
            step records it), ``""`` when embeddings are off (provider ``none``).
    """

    def __init__(
        self,
        store: Store,
        config: Config,
        *,
        shown_text: Callable[[str, str, str], str],
        load_types: Callable[[], RootTypes],
        embed_signature: Callable[[], str] = lambda: "",
    ) -> None:
        self.store = store
        self.config = config
        self._shown_text = shown_text
        self._load_types = load_types
        self._embed_signature = embed_signature

    def locate_path(self, text: str) -> tuple[str, str, int | None] | None:
        """``(root id, relpath, line)`` for ``PATH[:LINE]`` given absolute, relative to
        the current folder, or relative to a root; a path through a symbolic link to a
        root (or inside one) is followed. ``None`` when no indexed file matches."""
        line: int | None = None
        path = text
        head, sep, tail = text.rpartition(":")
        if sep and head and tail.isdigit():
            path, line = head, int(tail)
        roots = self.store.roots()
        candidates = [Path(path).expanduser()]
        if not candidates[0].is_absolute():
            candidates.append(Path.cwd() / path)
        for cand in candidates:
            try:
                real = Path(os.path.realpath(cand))
            except (OSError, ValueError):
                continue
            for r in roots:
                try:
                    rel = real.relative_to(r.path).as_posix()
                except ValueError:
                    continue
                for variant in _spellings(rel):
                    if variant != "." and self.store.documents_at(r.id, variant):
                        return r.id, variant, line
        rel = path.removeprefix("./")
        for r in roots:
            for variant in _spellings(rel):
                if self.store.documents_at(r.id, variant):
                    return r.id, variant, line
        return None

    def show(self, ref: str) -> ShowView:
        """A document or unit with its metadata, outline, links and backlinks.

        Args:
            ref: a unit id, a document id, a unique id prefix (at least 4 characters),
                or ``PATH[:LINE]`` (a line selects the innermost unit whose span holds
                it), or ``PATH#^block`` / ``PATH#Heading`` (the unit holding that
                Obsidian block id, or that heading).

        Returns:
            a :class:`DocumentView` (the document, its units in reading order, their
            links, its backlinks), a :class:`UnitView` (the unit, its document, links
            and sibling titles), or a :class:`FileView` for a file holding several
            documents (a chat export).

        Raises:
            NotFound: nothing matches ``ref``, a prefix is ambiguous, or the line is
                outside the file.
        """
        unit = self.store.unit(ref)
        if unit is not None:
            return self._unit_view(unit)
        doc = self.store.document(ref)
        if doc is not None:
            return self._document_view(doc)
        loc = self.locate_path(ref)
        anchored = self._anchored(ref) if loc is None and "#" in ref else None
        if anchored is not None:
            return anchored
        if loc is not None:
            root_id, rel, line = loc
            docs = self.store.documents_at(root_id, rel)
            if line is not None:
                units = [u for d in docs for u in self.store.units_of(d.id)]
                best = [u for u in units if u.line_start <= line <= u.line_end]
                if best:
                    # the latest start; on a tie the later unit (a heading on line 1
                    # over the empty preamble ending there): the unit a hit names
                    return self._unit_view(max(best, key=lambda u: (u.line_start, u.ordinal)))
                last = max((u.line_end for u in units), default=0)
                if line < 1 or line > last:
                    raise NotFound(f"{rel}: line {line} is outside the file (1-{last})")
            if len(docs) == 1:
                return self._document_view(docs[0])
            return model.FileView(path=rel, documents=tuple(docs))
        matches = self.store.find_ids(ref) if len(ref) >= 4 else []
        if len(matches) == 1:
            return self.show(matches[0][1])
        if len(matches) > 1:
            raise NotFound(f"{ref}: ambiguous id prefix ({len(matches)} matches)")
        raise NotFound(f"{ref}: no document, unit or indexed file matches")

    def _anchored(self, ref: str) -> UnitView | None:
        """``PATH#^block`` (the unit holding Obsidian block id ``block``, with the block's
        lines and text as ``UnitView.block`` — ``None`` in an index made before blocks
        were recorded, until the file is indexed again) or
        ``PATH#Heading`` (the heading of that title, case-insensitive), as
        ``[[note#^id]]`` links name them; ``None`` when ``PATH`` is not indexed.

        Raises:
            NotFound: the file is indexed but holds no such block or heading.
        """
        path, _, anchor = ref.rpartition("#")
        loc = self.locate_path(path) if path and anchor else None
        if loc is None:
            return None
        root_id, rel, _ = loc
        units = [
            u for d in self.store.documents_at(root_id, rel) for u in self.store.units_of(d.id)
        ]
        want = anchor.removeprefix("^").casefold()
        for u in units:
            if anchor.startswith("^"):
                ids = u.extra.get("block_ids") or ()
                if any(str(b).lstrip("^").casefold() == want for b in ids):
                    block = next((b for b in model.BlockRef.all_of(u.extra.get("blocks"))
                                  if b.id.casefold() == want), None)
                    return self._unit_view(u, block)
            elif u.kind == "heading" and u.title.casefold() == want:
                return self._unit_view(u)
        what = f"block {anchor}" if anchor.startswith("^") else f"heading {anchor!r}"
        raise NotFound(f"{rel}: no {what}")

    def _document_view(self, d: StoredDocument) -> DocumentView:
        units = reading_order(self.store.units_of(d.id))
        return model.DocumentView(
            document=d,
            units=tuple(units),
            links=tuple(self.store.links_of([u.id for u in units])),
            backlinks=tuple(self.store.backlinks(d.id)),
        )

    def _unit_view(self, u: StoredUnit, block: model.BlockRef | None = None) -> UnitView:
        return model.UnitView(
            unit=u,
            document=self.store.document(u.document_id),
            links=tuple(self.store.links_of([u.id])),
            siblings=tuple(self.store.siblings(u.document_id, u.parent_id, u.id)),
            block=block,
        )

    def read_file(self, path: str | os.PathLike[str]) -> str:
        """The text of an indexed file, refusing any path that resolves outside a root.

        Raises:
            NotFound: the path is outside every source root or is not a file.
        """
        p = Path(path).expanduser()
        for r in self.store.roots():
            rp = Path(r.path)
            cand = p if p.is_absolute() else rp / p
            if is_within(rp, cand) and cand.is_file():
                text = cand.read_text(encoding="utf-8", errors="replace")
                try:
                    rel = Path(os.path.realpath(cand)).relative_to(os.path.realpath(rp))
                except ValueError:  # cannot name it: shown as redaction shows any file
                    rel = Path(cand.name)
                return self._shown_text(r.id, rel.as_posix(), text)
        raise NotFound(f"{p}: not a file inside a registered source root")

    # --- status -----------------------------------------------------------------------
    def stats(self) -> IndexStats:
        """The index at a glance: counts, formats, the last run, the files that failed
        and every document's warnings (see :class:`cairn.model.index_results.IndexStats`)."""
        counts = self.store.counts()
        return IndexStats(
            index=self.store.path if self.config.db_url else str(self.config.db_path),
            schema_version=self.store.schema_version,
            roots=int(counts["roots"]),
            files=int(counts["files"]),
            documents=int(counts["documents"]),
            units=int(counts["units"]),
            links=int(counts["links"]),
            links_resolved=int(counts["links_resolved"]),
            links_unresolved=int(counts["links_unresolved"]),
            fts_rows=int(counts["fts_rows"]),
            failed_files=tuple(self.store.failed_files()),
            formats={
                fmt: FormatCount(int(c["documents"]), int(c["units"]))
                for fmt, c in counts["formats"].items()
            },
            last_run=self.store.last_run(),
            warnings=tuple(
                DocumentWarning(root, w.path, w.message, w.line, w.severity)
                for root, _path, ws in self.store.document_warnings()
                for w in ws
            ),
            units_waiting=self.units_waiting(),
        )

    def units_waiting(self) -> int | None:
        """Units the configured model's semantic search cannot find yet (see
        ``IndexStats.units_waiting``), loading no model: counted in the space the last
        finished embedding step filled when it ran with the configured model; every
        unit when no step did (``index --no-embed``, another model configured since);
        in the newest space when the first step did not finish. ``None`` when
        embeddings are off (provider ``none``)."""
        signature = self._embed_signature()
        if not signature:
            return None
        vectors = self.store.vectors
        if vectors.meta("embed_signature") == signature:
            return vectors.waiting_units(vectors.meta("embed_space") or "")
        spaces = vectors.spaces()
        if spaces and vectors.meta("embed_signature") is None:  # first step stopped
            return vectors.waiting_units(spaces[-1].space)
        return vectors.waiting_units("")  # a space no vector is in: every unit waits

    def validate(
        self, paths: Iterable[str | os.PathLike[str]] | None = None
    ) -> list[ValidationFinding]:
        """Check note types (``types.yaml``) and OKF bundle conformance.

        Args:
            paths: registered root folders, or folders and files inside one, to check
                (default: every root). Index them first: type checks read the indexed
                notes.

        Returns:
            One :class:`~cairn.model.index_results.ValidationFinding` per problem;
            ``severity`` is ``error`` (an OKF conformance failure, a ``types.yaml``
            that cannot be read), ``warning`` or ``info``.

        Raises:
            NotFound: a path is neither a registered root nor inside one, or does not
                exist.
        """
        from cairn.maintain.validate import validate_roots

        roots = self.store.roots()
        within: dict[str, list[str]] = {}
        if paths:
            chosen: dict[str, model.SourceRoot] = {}
            for p in paths:
                want = Path(p).expanduser().resolve()
                # the innermost root holding it (a root nested in another wins)
                holders = [r for r in roots if want.is_relative_to(r.path)]
                if not holders:
                    raise NotFound(f"{want.as_posix()}: not inside a registered source root")
                if not want.exists():  # a typo inside a root would check nothing, silently
                    raise NotFound(f"{want.as_posix()}: no such file or folder")
                root = max(holders, key=lambda r: len(r.path))
                rel = want.relative_to(root.path).as_posix()
                within.setdefault(root.id, []).append("" if rel == "." else rel)
                chosen[root.id] = root
            roots = list(chosen.values())
        return [
            ValidationFinding(d.path, d.line, d.severity, d.message)
            for d in validate_roots(self.store, roots, self._load_types(), within)
        ]

    def is_empty(self) -> bool:
        """Whether nothing has been indexed yet."""
        return bool(self.store.counts()["documents"] == 0)

    def check(self) -> list[str]:
        """Integrity problems of the index (empty when healthy)."""
        return self.store.integrity_check()


def _spellings(rel: str) -> list[str]:
    """A path as given, then in NFC and NFD (macOS writes names in NFD): any spelling
    of a name finds the note."""
    return list(
        dict.fromkeys((rel, unicodedata.normalize("NFC", rel), unicodedata.normalize("NFD", rel)))
    )
