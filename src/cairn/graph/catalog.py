"""Resolving one link: the catalog of documents and units a link can name, and the
rules by which a link of each kind finds its target there (see
:mod:`cairn.graph.resolve` for the rules and for resolving the whole index).
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote

from cairn.graph import obsidian
from cairn.graph.names import (
    NOTE_EXTENSIONS,
    strip_note_extension,
)
from cairn.graph.names import nfc as _nfc
from cairn.model import (
    EMBED,
    MARKDOWN_LINK,
    ORG_FILE,
    ORG_HEADING,
    ORG_ID,
    URL,
    WIKILINK,
    CatalogDocument,
    CatalogUnit,
    Link,
    LinkOccurrence,
)

Resolution = tuple[str | None, str | None, str | None]
"""``(document id, unit id, unresolved reason)``."""

_TITLE_TARGET_RE = re.compile(r"<<<?([^<>\n]+)>>>?")


def _fold(s: str) -> str:
    return _nfc(s).casefold().strip()


def _slug(s: str) -> str:
    return re.sub(r"[^\w\- ]", "", s.casefold()).strip().replace(" ", "-")


@dataclass
class _UnitInfo:
    id: str
    ordinal: int
    level: int
    title: str
    custom_id: str | None
    targets: list[str]
    block_ids: list[str]


@dataclass
class Catalog:
    """An in-memory view of every document and unit, for resolving links."""

    by_path: dict[tuple[str, str], str] = field(default_factory=dict)
    path_of: dict[str, tuple[str, str]] = field(default_factory=dict)
    by_stem: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    by_alias: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    units: dict[str, list[_UnitInfo]] = field(default_factory=lambda: defaultdict(list))
    org_ids: dict[str, tuple[str, str]] = field(default_factory=dict)
    doc_declared: dict[str, str] = field(default_factory=dict)
    attachments: set[tuple[str, str]] = field(default_factory=set)
    attachment_names: dict[str, list[tuple[str, str]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    obsidian: dict[str, obsidian.Catalog] = field(default_factory=dict)
    unit_at: dict[tuple[str, int], str] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        docs: Sequence[CatalogDocument],
        units: Sequence[CatalogUnit],
        attachments: Iterable[tuple[str, str]],
    ) -> Catalog:
        """Build from the store's :meth:`~cairn.store.base.Store.catalog_entries` and
        ``attachments()`` (``(root id, path)`` of non-note files). Documents are taken in
        (root, path, key, id) order and units in document order, so a catalog of some
        documents answers as the whole one would for links naming only them."""
        cat = cls()
        docs = sorted(docs, key=lambda d: (d.root_id, d.path, d.key or "", d.id))
        docs = [dataclasses.replace(d, path=_nfc(d.path)) for d in docs]
        for d in docs:
            key = (d.root_id, d.path)
            cat.by_path.setdefault(key, d.id)
            cat.path_of[d.id] = key
            stem = posixpath.basename(d.path)
            for ext in NOTE_EXTENSIONS:
                if stem.lower().endswith(ext):
                    stem = stem[: -len(ext)]
                    break
            cat.by_stem[_fold(stem)].append(d.id)
            for alias in d.aliases:
                cat.by_alias[_fold(str(alias))].append(d.id)
            if d.declared_id:
                cat.doc_declared.setdefault(d.declared_id, d.id)
        order = {d.id: i for i, d in enumerate(docs)}
        for u in sorted(units, key=lambda u: (order.get(u.document_id, -1), u.ordinal)):
            cat.units[u.document_id].append(
                _UnitInfo(u.id, u.ordinal, u.level, u.title, u.custom_id, list(u.targets),
                          [b.lstrip("^") for b in u.block_ids])
            )
            if u.org_id:
                cat.org_ids.setdefault(u.org_id, (u.document_id, u.id))
        att = sorted({(r, _nfc(p)) for r, p in attachments})
        for root_id, path in att:
            cat.attachments.add((root_id, path))
            cat.attachment_names[_fold(posixpath.basename(path))].append((root_id, path))
        notes: dict[str, list[obsidian.NoteEntry]] = defaultdict(list)
        files: dict[str, list[str]] = defaultdict(list)
        for d in docs:
            if d.format in ("markdown", "okf"):
                infos = cat.units.get(d.id, [])
                notes[d.root_id].append(
                    obsidian.NoteEntry(
                        d.path,
                        d.title,
                        tuple(d.aliases),
                        tuple((u.ordinal, u.level, u.title) for u in infos if u.level > 0),
                        tuple((u.ordinal, b) for u in infos for b in u.block_ids),
                    )
                )
            else:
                files[d.root_id].append(d.path)
        for root_id, path in att:
            files[root_id].append(path)
        for root_id in set(notes) | set(files):
            cat.obsidian[root_id] = obsidian.Catalog(notes[root_id], files[root_id])
        for doc_id, unit_infos in cat.units.items():
            for info in unit_infos:
                cat.unit_at[(doc_id, info.ordinal)] = info.id
        return cat

    # --- helpers ----------------------------------------------------------------------
    def doc_at(self, root_id: str, path: str) -> str | None:
        """The document at a root-relative path (tries a note extension when missing)."""
        path = _nfc(posixpath.normpath(path).lstrip("/"))
        hit = self.by_path.get((root_id, path))
        if hit is None and not any(path.lower().endswith(e) for e in NOTE_EXTENSIONS):
            for ext in NOTE_EXTENSIONS:
                hit = self.by_path.get((root_id, path + ext))
                if hit:
                    break
        return hit

    def preamble(self, doc_id: str) -> str | None:
        """The id of a document's first unit."""
        units = self.units.get(doc_id)
        return units[0].id if units else None

    def anchor_unit(self, doc_id: str, anchor: str) -> str | None:
        """A unit of ``doc_id`` named by an anchor: ``^block``, ``#custom-id``,
        ``*Heading``, or a heading title / dedicated target / slug."""
        units = self.units.get(doc_id, [])
        a = anchor.strip()
        if a.startswith("^"):
            block = a[1:]
            return next((u.id for u in units if block in u.block_ids), None)
        if a.startswith("#"):
            cid = a[1:]
            hit = next((u.id for u in units if u.custom_id == cid), None)
            if hit:
                return hit
            a = cid
        if a.startswith("*"):
            # a title shows its <<targets>> as their text; Org's [[*…]] names the heading
            # as written, brackets and all
            want = _fold(_TITLE_TARGET_RE.sub(r"\1", a[1:]))
            return next((u.id for u in units if u.ordinal > 0 and _fold(u.title) == want), None)
        want = _fold(a.split("#")[-1])
        for u in units:
            if any(_fold(t) == want for t in u.targets):
                return u.id
        for u in units:
            if u.ordinal > 0 and _fold(u.title) == want:
                return u.id
        slug = _slug(want)
        return next((u.id for u in units if u.ordinal > 0 and _slug(u.title) == slug), None)


def _distance(a: str, b: str) -> int:
    """Folder steps from folder ``a`` to folder ``b`` (up to their common folder, then
    down)."""
    pa, pb = [x for x in a.split("/") if x], [x for x in b.split("/") if x]
    common = 0
    while common < min(len(pa), len(pb)) and pa[common] == pb[common]:
        common += 1
    return len(pa) + len(pb) - 2 * common


def _pick(cands: list[str], cat: Catalog, target: str, src_path: str) -> str | None:
    """The one document of ``cands`` (same root, same name) a link ``target`` written
    in ``src_path`` means, by evidence, not by name alone: the file its path names
    relative to the linking note, else the nearest (fewest folder steps from the
    linking note's folder); ``None`` when two or more are equally near (the caller
    leaves the link unresolved and names them: :func:`ambiguous`)."""
    if len(cands) == 1:
        return cands[0]
    folder = posixpath.dirname(src_path)
    rel = _fold(posixpath.normpath(posixpath.join(folder, target.strip())))
    wanted = _fold(strip_note_extension(rel))
    exact = [d for d in cands if _fold(strip_note_extension(cat.path_of[d][1])) == wanted]
    if len(exact) == 1:
        return exact[0]
    dist = {d: _distance(folder, posixpath.dirname(cat.path_of[d][1])) for d in cands}
    best = min(dist.values())
    near = [d for d in cands if dist[d] == best]
    return near[0] if len(near) == 1 else None


def ambiguous(cands: Sequence[str], cat: Catalog, target: str) -> str:
    """The unresolved reason of a name several notes answer to equally: the candidates'
    paths, so ``cairn check`` and the graph show them."""
    paths = sorted(cat.path_of[d][1] for d in cands)
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return f"ambiguous: {len(paths)} notes named {target.strip()!r} are equally near: {shown}"


_MISSING_ANCHOR = ("no heading ", "no block ", "no custom id ")


def missing_anchor_reason(anchor: str, path: str) -> str:
    """The unresolved reason of a link whose note ``path`` resolves but whose ``anchor``
    names nothing in it: ``no block '^x' in P`` for a block reference, ``no custom id
    '#x' in P`` for an Org custom id, else ``no heading 'x' in P`` (the prefixes
    :func:`is_missing_anchor` knows)."""
    a = anchor.strip()
    what = "block" if a.startswith("^") else "custom id" if a.startswith("#") else "heading"
    return f"no {what} {anchor!r} in {path}"


def is_missing_anchor(reason: str | None) -> bool:
    """Whether an unresolved ``reason`` is a missing anchor of a note that resolves
    (see :func:`missing_anchor_reason`)."""
    return bool(reason) and str(reason).startswith(_MISSING_ANCHOR)


def _missing_anchor(anchor: str, path: str) -> str | None:
    """The reason for an Org ``file:P::anchor`` whose anchor names no unit of ``P``:
    only for ``*Heading``, ``#custom-id`` and ``^block``, which must name a heading
    (or block); a plain text search may match body text (Org's fuzzy search), and a
    ``/regexp/`` or line number is not a unit name, so neither is reported."""
    a = anchor.strip()
    if a.startswith(("*", "#", "^")) and len(a) > 1:
        return missing_anchor_reason(a, path)
    return None


def resolve_link(row: LinkOccurrence, cat: Catalog) -> Resolution:
    """Resolve one stored link (see :meth:`~cairn.store.base.Store.links_from`)."""
    kind, target, anchor = row.kind, _nfc(row.target or ""), row.anchor
    anchor = _nfc(anchor) if anchor else anchor
    root_id, src_path, src_doc = row.root_id, _nfc(row.path), row.document_id
    folder = posixpath.dirname(src_path)
    if kind == URL:
        return None, None, None
    if kind == ORG_ID:
        hit = cat.org_ids.get(target.strip())
        if hit:
            return hit[0], hit[1], None
        doc = cat.doc_declared.get(target.strip())
        if doc:
            return doc, cat.preamble(doc), None
        return None, None, f"no heading or file has ID {target}"
    if kind == ORG_HEADING:
        unit = cat.anchor_unit(src_doc, target)
        if unit:
            return src_doc, unit, None
        return None, None, f"no heading, custom id or target {target!r} in this file"
    if kind == ORG_FILE:
        path = target[5:] if target.startswith("file:") else target
        path = path.strip()
        if path.startswith("~") or path.startswith("/"):
            return None, None, f"file outside the source root: {path}"
        rel = posixpath.normpath(posixpath.join(folder, path)) if path else src_path
        doc = cat.doc_at(root_id, rel)
        if doc is None:
            if (root_id, rel) in cat.attachments:
                return None, None, f"attachment: {rel}"
            if not rel.lower().endswith(NOTE_EXTENSIONS):
                return None, None, f"missing attachment: {rel}"
            return None, None, f"file not found in the index: {rel}"
        if anchor and not anchor.strip().isdigit():
            unit = cat.anchor_unit(doc, anchor)
            if unit is None:
                return doc, None, _missing_anchor(anchor, cat.path_of[doc][1])
            return doc, unit, None
        return doc, cat.preamble(doc), None
    if kind in (WIKILINK, EMBED, MARKDOWN_LINK):
        return _resolve_obsidian(row, cat)
    return None, None, f"unknown link kind {kind}"


def _resolve_obsidian(row: LinkOccurrence, cat: Catalog) -> Resolution:
    """Wikilinks, embeds and Markdown links: Obsidian's rules, then Org/text stems."""
    root_id, src_path = row.root_id, _nfc(row.path)
    target = _nfc(row.target or "")
    if row.kind == MARKDOWN_LINK:
        target = unquote(target)
    link = Link(kind=row.kind, target=target, anchor=row.anchor)
    ocat = cat.obsidian.get(root_id)
    if ocat is None:
        return None, None, "no notes in this source root"
    hit = obsidian.resolve_link(ocat, link, src_path)
    if hit.path is not None:
        doc = cat.by_path.get((root_id, hit.path))
        if doc is None:
            return None, None, f"attachment: {hit.path}"
        if hit.unit is not None:
            return doc, cat.unit_at.get((doc, hit.unit)), None
        if row.anchor and cat.units.get(doc) and cat.path_of[doc][1].endswith(".md"):
            # the anchor names no heading of the note Obsidian's rules chose: another
            # note of the same name that has it wins ([[Canvas#Add cards from web
            # pages]] goes to the English copy, not the shorter-path Japanese one);
            # else the note, with the reason recorded
            other = _with_anchor(cat, root_id, target, row.anchor, doc, src_path)
            if other is not None:
                return other
            return doc, cat.preamble(doc), missing_anchor_reason(row.anchor, hit.path)
        unit = cat.anchor_unit(doc, row.anchor) if row.anchor else None
        return doc, unit or cat.preamble(doc), None
    if hit.attachment or not target.strip():
        return None, None, hit.reason
    stem = target.strip()
    cands = [
        d
        for d in cat.by_stem.get(_fold(posixpath.basename(stem)), [])
        if cat.path_of[d][0] == root_id
        and _fold(posixpath.splitext(cat.path_of[d][1])[0]).endswith(_fold(stem))
    ]
    if not cands:
        return None, None, hit.reason
    doc = _pick(cands, cat, stem, src_path)
    if doc is None:
        return None, None, ambiguous(cands, cat, stem)
    unit = cat.anchor_unit(doc, row.anchor) if row.anchor else None
    return doc, unit or cat.preamble(doc), None


def _with_anchor(
    cat: Catalog, root_id: str, target: str, anchor: str, chosen: str, src_path: str
) -> Resolution | None:
    """Another note of ``target``'s name in the root that has the anchored unit (the
    one :func:`_pick` finds by evidence), as a resolution; ``None`` when none has it or
    several are equally near."""
    stem = posixpath.splitext(target.strip())[0]
    if not stem:
        return None
    cands = [
        d
        for d in cat.by_stem.get(_fold(posixpath.basename(stem)), [])
        if d != chosen
        and cat.path_of[d][0] == root_id
        and _fold(posixpath.splitext(cat.path_of[d][1])[0]).endswith(_fold(stem))
    ]
    with_unit = {d: u for d in cands if (u := cat.anchor_unit(d, anchor)) is not None}
    if not with_unit:
        return None
    doc = _pick(list(with_unit), cat, stem, src_path)
    return (doc, with_unit[doc], None) if doc is not None else None
