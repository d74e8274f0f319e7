"""Obsidian's link-resolution rules, as pure functions over a small catalog.

No store, no I/O: the caller builds a :class:`Catalog` (from the index, or with
:meth:`Catalog.from_documents`) and asks :func:`resolve_link` where a link from a note
points. The rules are those of Obsidian's metadata cache (``getFirstLinkpathDest``),
as observed in the shipped application and its documentation ("Internal links",
"Link to blocks", "Aliases"):

1. An empty target (``[[#Heading]]``) is the linking note itself.
2. Candidates are the files whose *name* matches the link's last path segment,
   case-insensitively: first the segment as written when it has an extension
   (``img.png``, ``Note.md``), else the segment plus ``.md``.
3. A bare name with exactly one candidate resolves to it (``[[project plan]]`` →
   ``Project Plan.md``).
4. ``./x`` and ``../x`` are resolved against the linking note's folder and must match a
   candidate's path exactly (case-insensitively).
5. A path (optionally starting with ``/``) that equals a candidate's full path from the
   vault root resolves to it; a path starting with ``/`` goes no further.
6. Otherwise every candidate whose path ends with the written path (``folder/note`` →
   ``…/folder/note.md``) matches — the "shortest unique path" links Obsidian writes.
   The candidate nearest the linking note wins: one in its own folder, else the one
   sharing the deepest common ancestor folder with it (a note under ``en/`` links to
   ``en/Plugins/Canvas.md`` rather than ``ja/プラグイン/Canvas.md``), then the shortest
   path, then alphabetical order. ``Target.candidates`` tells how many matched, so
   callers can report ambiguity.
7. Not found as a file: a note whose ``aliases`` contain the target (case-insensitive)
   — this is what Obsidian Publish does; the desktop app only offers aliases while
   typing. ``Target.method == "alias"`` marks these.
8. An anchor ``#^id`` names the unit holding block id ``id``; ``#Heading`` (or a chain
   ``#H1#H2``) names a heading unit, compared case-insensitively with punctuation
   ignored (Obsidian drops ``: # | ^ [ ]`` etc. when it writes heading links; a
   GitHub-style slug such as ``#part-two`` in a Markdown link matches too). When the
   file is found but the anchor is not, the target keeps the file with ``unit=None``
   and a ``reason`` (Obsidian opens the file at the top).
9. A target whose extension is a known attachment's (:data:`ATTACHMENT_EXTENSIONS`:
   ``.png``, ``.pdf`` …) is an attachment: it resolves to a file the catalog lists, else
   it is unresolved with reason ``missing attachment``. Any other dotted name
   (``[[E. M. Forster]]``) is a note name unless a file of exactly that name exists.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cairn.model import EMBED, MARKDOWN_LINK, URL, WIKILINK, Document, Link

__all__ = [
    "Catalog",
    "NoteEntry",
    "Target",
    "heading_key",
    "is_attachment_target",
    "resolve_anchor",
    "resolve_link",
    "resolve_linkpath",
]

METHOD_SELF = "self"
METHOD_RELATIVE = "relative"
METHOD_PATH = "path"
METHOD_NAME = "name"
METHOD_SUFFIX = "suffix"
METHOD_ALIAS = "alias"

REASON_MISSING_NOTE = "no note with this name or path"
REASON_MISSING_ATTACHMENT = "missing attachment"
REASON_EXTERNAL = "external URL"
REASON_NOT_OBSIDIAN = "not an Obsidian link kind"
REASON_EMPTY = "empty link target"


@dataclass(frozen=True, slots=True)
class NoteEntry:
    """One Markdown note as the resolver sees it.

    Attributes:
        path: path from the vault (source) root, POSIX separators, with extension.
        title: the document title (informative; Obsidian resolves by file name).
        aliases: front matter aliases.
        headings: ``(unit ordinal, level, heading title)`` in document order.
        block_ids: ``(unit ordinal, block id)`` pairs.
    """

    path: str
    title: str = ""
    aliases: tuple[str, ...] = ()
    headings: tuple[tuple[int, int, str], ...] = ()
    block_ids: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Target:
    """Where a link points.

    Attributes:
        path: the resolved file (note or attachment) path, or ``None`` if unresolved.
        unit: the unit ordinal named by the anchor, or ``None`` (no anchor, anchor not
            found, or an attachment).
        reason: ``None`` when fully resolved; otherwise why not (unresolved file, or the
            file was found but its anchor was not).
        method: how the file was found: ``self``, ``relative``, ``path``, ``name``,
            ``suffix``, ``alias``, or ``""``.
        candidates: number of files that matched equally well (> 1: ambiguous; the first
            in Obsidian's order was taken).
        attachment: ``True`` when the target is a non-``.md`` file.
    """

    path: str | None
    unit: int | None = None
    reason: str | None = None
    method: str = ""
    candidates: int = 0
    attachment: bool = False

    @property
    def resolved(self) -> bool:
        """Whether the link reaches a file (its anchor may still be missing)."""
        return self.path is not None


class Catalog:
    """The notes and files of one vault, indexed for Obsidian's lookups.

    Args:
        notes: the Markdown notes.
        files: every other file of the vault (attachments), paths from the root. Note
            paths may be repeated here; they are merged.
    """

    def __init__(self, notes: Iterable[NoteEntry], files: Iterable[str] = ()) -> None:
        self.notes: dict[str, NoteEntry] = {}
        self.by_name: dict[str, list[str]] = defaultdict(list)
        self.by_alias: dict[str, list[str]] = defaultdict(list)
        seen: set[str] = set()
        for note in notes:
            self.notes[note.path] = note
            self._add_file(note.path, seen)
            for alias in note.aliases:
                key = alias.strip().lower()
                if key and note.path not in self.by_alias[key]:
                    self.by_alias[key].append(note.path)
        for path in files:
            self._add_file(path, seen)
        for paths in self.by_name.values():
            paths.sort(key=_order)
        for paths in self.by_alias.values():
            paths.sort(key=_order)

    def _add_file(self, path: str, seen: set[str]) -> None:
        if path in seen:
            return
        seen.add(path)
        self.by_name[posixpath.basename(path).lower()].append(path)

    @classmethod
    def from_documents(cls, docs: Iterable[Document], files: Iterable[str] = ()) -> Catalog:
        """Build a catalog from parsed documents (their units' headings and block ids)."""
        return cls((note_entry(d) for d in docs), files)


def note_entry(doc: Document) -> NoteEntry:
    """The :class:`NoteEntry` of a parsed document."""
    headings = tuple((u.ordinal, u.level, u.title) for u in doc.units if u.level > 0)
    blocks: list[tuple[int, str]] = []
    for u in doc.units:
        ids: Any = (u.extra or {}).get("block_ids") or ()
        blocks.extend((u.ordinal, str(b)) for b in ids)
    return NoteEntry(doc.path, doc.title, tuple(doc.aliases), headings, tuple(blocks))


def _order(path: str) -> tuple[int, str]:
    return (len(path), path)


_OBSIDIAN_FORMATS = ("avif bmp gif jpeg jpg png svg webp flac m4a mp3 ogg wav webm 3gp mkv mov "
                     "mp4 ogv pdf canvas base")  # its help page "Accepted file formats"
_COMMON_FILES = ("txt csv tsv json xml yaml yml html htm zip gz tgz 7z rar doc docx xls xlsx "
                 "ppt pptx odt ods odp rtf epub tif tiff heic ico psd excalidraw drawio")
ATTACHMENT_EXTENSIONS = frozenset(f"{_OBSIDIAN_FORMATS} {_COMMON_FILES}".split())
"""Extensions (lower case, no dot) that make a link target an attachment by themselves."""


def is_attachment_target(target: str) -> bool:
    """Whether a link target names an attachment by its extension alone: one of
    :data:`ATTACHMENT_EXTENSIONS`. A dot elsewhere (``[[E. M. Forster]]``, ``[[v1.2]]``)
    leaves it a note name; a real file of that exact name is found by
    :func:`resolve_linkpath` all the same."""
    ext = posixpath.splitext(posixpath.basename(target))[1].lower()
    return ext[1:] in ATTACHMENT_EXTENSIONS


def resolve_linkpath(catalog: Catalog, linkpath: str, source_path: str) -> tuple[list[str], str]:
    """The files a link path names, best first, and how they were found.

    Implements rules 2–6 of the module docstring (no aliases, no anchors).

    Returns:
        ``(paths, method)``; ``paths`` is empty when nothing matches.
    """
    lower = linkpath.lower()
    name = posixpath.basename(lower)
    cands: list[str] | None = None
    if "." in name:
        cands = catalog.by_name.get(name)
    if not cands:
        lower = (linkpath + ".md").lower()
        name = posixpath.basename(lower)
        cands = catalog.by_name.get(name)
    if not cands:
        return [], ""
    if name == lower and len(cands) == 1:
        return list(cands), METHOD_NAME
    folder = posixpath.dirname(source_path).lower()
    n = lower
    if n.startswith(("./", "../")):
        if n.startswith("./../"):
            n = n[2:]
        base = folder
        if n.startswith("./"):
            n = n[2:]
        else:
            while n.startswith("../"):
                n = n[3:]
                base = posixpath.dirname(base)
        full = f"{base}/{n}" if base else n
        for path in cands:
            if path.lower() == full:
                return [path], METHOD_RELATIVE
    if n.startswith("/"):
        n = n[1:]
    for path in cands:
        if path.lower() == n:
            return [path], METHOD_PATH
    if linkpath.startswith("/"):
        return [], ""
    found = [path for path in cands if path.lower().endswith(n)]
    found.sort(key=lambda path: _nearness(path, folder))
    return found, (METHOD_SUFFIX if found else "")


def _nearness(path: str, folder: str) -> tuple[int, int, int, str]:
    """Sort key of a candidate for a link written in ``folder`` (lower case): the same
    folder first, then the deepest common ancestor (``en/a/x.md`` links to ``en/b/Y``
    before ``ja/Y``), then the shortest path, then alphabetical order."""
    cand = posixpath.dirname(path.lower())
    if cand == folder:
        return (0, 0, len(path), path)
    mine, theirs = folder.split("/") if folder else [], cand.split("/") if cand else []
    common = 0
    for a, b in zip(mine, theirs, strict=False):
        if a != b:
            break
        common += 1
    return (1, -common, len(path), path)


_HEADING_PUNCT = re.compile(r"[#|^:%\[\]\\*\"<>?/`]+")
_NON_ALNUM = re.compile(r"[\W_]+", re.UNICODE)


def heading_key(text: str) -> str:
    """A heading title or heading anchor, normalised for comparison."""
    return " ".join(_HEADING_PUNCT.sub(" ", text).lower().split())


def _loose_key(text: str) -> str:
    return _NON_ALNUM.sub("", text.lower())


def _match_heading(part: str, headings: Sequence[tuple[int, int, str]], start: int) -> int:
    key = heading_key(part)
    for i in range(start, len(headings)):
        if heading_key(headings[i][2]) == key:
            return i
    loose = _loose_key(part)
    if loose:
        for i in range(start, len(headings)):
            if _loose_key(headings[i][2]) == loose:
                return i
    return -1


def resolve_anchor(note: NoteEntry, anchor: str) -> tuple[int | None, str | None]:
    """The unit ordinal an anchor names in ``note``: ``(ordinal, None)`` or ``(None, reason)``.

    ``^id`` names a block (case-insensitive); anything else a heading or a ``H1#H2``
    chain (each part searched after the previous match).
    """
    anchor = anchor.strip()
    if anchor.startswith("^"):
        wanted = anchor[1:].lower()
        for ordinal, block in note.block_ids:
            if block.lower() == wanted:
                return ordinal, None
        return None, f"block ^{anchor[1:]} not found in {note.path}"
    parts = [p for p in anchor.split("#") if p.strip()]
    if not parts:
        return None, None
    pos = 0
    index = -1
    for part in parts:
        index = _match_heading(part, note.headings, pos)
        if index < 0:
            return None, f"heading {anchor!r} not found in {note.path}"
        pos = index + 1
    return note.headings[index][0], None


def resolve_link(catalog: Catalog, link: Link, source_path: str) -> Target:
    """Where ``link``, written in the note at ``source_path``, points (rules 1–9).

    Wikilinks, embeds and Markdown links are resolved; URL links and other kinds come
    back unresolved with a reason. Never raises.
    """
    if link.kind == URL:
        return Target(None, reason=REASON_EXTERNAL)
    if link.kind not in (WIKILINK, EMBED, MARKDOWN_LINK):
        return Target(None, reason=REASON_NOT_OBSIDIAN)
    target = link.target.strip()
    anchor = (link.anchor or "").strip()
    if not target:
        if not anchor:
            return Target(None, reason=REASON_EMPTY)
        note = catalog.notes.get(source_path)
        if note is None:
            return Target(source_path, reason="linking note is not in the catalog", method="self")
        unit, why = resolve_anchor(note, anchor)
        return Target(source_path, unit, why, METHOD_SELF, 1)
    attachment = is_attachment_target(target)
    paths, method = resolve_linkpath(catalog, target, source_path)
    if not paths and not attachment:
        aliases = catalog.by_alias.get(target.lower())
        if aliases:
            paths, method = list(aliases), METHOD_ALIAS
    if not paths:
        reason = REASON_MISSING_ATTACHMENT if attachment else REASON_MISSING_NOTE
        return Target(None, reason=reason, attachment=attachment)
    path = paths[0]
    count = len(paths) if method in (METHOD_SUFFIX, METHOD_ALIAS) else 1
    note = catalog.notes.get(path)
    is_attachment = note is None
    if not anchor or note is None:
        return Target(path, None, None, method, count, is_attachment)
    unit, why = resolve_anchor(note, anchor)
    return Target(path, unit, why, method, count, False)
