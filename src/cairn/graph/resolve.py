"""Link resolution across the whole index.

Each stored link is resolved to a document (and, where the link names a heading, block,
custom id or Org ``ID``, to a unit), or given the reason it could not be:

* Org ``id:X`` → the unit whose ``ID`` property is X in any file, else the document whose
  file-level ``ID`` is X (Org manual, "Handling Links"; org-roam's id links).
* Org ``file:path::option`` → ``path`` relative to the linking file's folder; the
  option ``*Heading`` names a heading, ``#id`` a ``CUSTOM_ID``, anything else a
  dedicated target or heading title (Org syntax, "Links": search options).
* Org ``[[*Heading]]`` / ``[[#id]]`` / ``[[text]]`` → inside the linking file.
* Wikilinks, embeds and Markdown links, as Obsidian resolves them
  (:mod:`cairn.graph.obsidian`, one catalog per source root): file name
  case-insensitively, relative and root paths, the shortest unique path, aliases;
  ``#Heading`` and ``#^block`` anchors name a unit of the target; other extensions are
  attachments. cairn extends Obsidian in one way: a bare name that names no Markdown
  note may name an Org or text note of the same root by its file stem
  (``[[garden]]`` → ``garden.org``).

Resolution is recomputed for every link after each run that changed something, so a
link to a note that appears later resolves without re-indexing its source.
"""

from __future__ import annotations

import posixpath
import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from cairn.graph import obsidian
from cairn.model import EMBED, MARKDOWN_LINK, ORG_FILE, ORG_HEADING, ORG_ID, URL, WIKILINK, Link

Resolution = tuple[str | None, str | None, str | None]
"""``(document id, unit id, unresolved reason)``."""

NOTE_EXTENSIONS = (".md", ".markdown", ".org", ".txt")


def _fold(s: str) -> str:
    return s.casefold().strip()


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
        docs: list[sqlite3.Row],
        units: list[sqlite3.Row],
        attachments: list[tuple[str, str]],
    ) -> Catalog:
        """Build from the store's ``catalog_rows()`` and ``attachments()``."""
        import json

        cat = cls()
        for d in docs:
            key = (d["root_id"], d["path"])
            cat.by_path.setdefault(key, d["id"])
            cat.path_of[d["id"]] = key
            stem = posixpath.basename(d["path"])
            for ext in NOTE_EXTENSIONS:
                if stem.lower().endswith(ext):
                    stem = stem[: -len(ext)]
                    break
            cat.by_stem[_fold(stem)].append(d["id"])
            for alias in json.loads(d["aliases"] or "[]"):
                cat.by_alias[_fold(str(alias))].append(d["id"])
            if d["declared_id"]:
                cat.doc_declared.setdefault(d["declared_id"], d["id"])
        for u in units:
            cat.units[u["document_id"]].append(
                _UnitInfo(
                    u["id"],
                    u["ordinal"],
                    u["level"],
                    u["title"],
                    u["custom_id"],
                    [str(t) for t in json.loads(u["targets"] or "[]")],
                    [str(b).lstrip("^") for b in json.loads(u["block_ids"] or "[]")],
                )
            )
            if u["org_id"]:
                cat.org_ids.setdefault(u["org_id"], (u["document_id"], u["id"]))
        for root_id, path in attachments:
            cat.attachments.add((root_id, path))
            cat.attachment_names[_fold(posixpath.basename(path))].append((root_id, path))
        notes: dict[str, list[obsidian.NoteEntry]] = defaultdict(list)
        files: dict[str, list[str]] = defaultdict(list)
        for d in docs:
            if d["format"] in ("markdown", "okf"):
                infos = cat.units.get(d["id"], [])
                notes[d["root_id"]].append(
                    obsidian.NoteEntry(
                        d["path"],
                        d["title"],
                        tuple(str(a) for a in json.loads(d["aliases"] or "[]")),
                        tuple((u.ordinal, u.level, u.title) for u in infos if u.level > 0),
                        tuple((u.ordinal, b) for u in infos for b in u.block_ids),
                    )
                )
            else:
                files[d["root_id"]].append(d["path"])
        for root_id, path in attachments:
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
        path = posixpath.normpath(path).lstrip("/")
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
            want = _fold(a[1:])
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


def _pick(cands: list[str], cat: Catalog, root_id: str, folder: str) -> str:
    """Among several documents with one name, prefer the same root, the same folder,
    then the shortest path, then the alphabetically first."""

    def key(doc_id: str) -> tuple[int, int, int, str]:
        r, p = cat.path_of[doc_id]
        return (r != root_id, posixpath.dirname(p) != folder, p.count("/"), p)

    return min(cands, key=key)


def resolve_link(row: Any, cat: Catalog) -> Resolution:
    """Resolve one stored link row (see :meth:`SQLiteStore.all_links`)."""
    kind, target, anchor = row["kind"], row["target"] or "", row["anchor"]
    root_id, src_path, src_doc = row["root_id"], row["path"], row["document_id"]
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
                return doc, None, None
            return doc, unit, None
        return doc, cat.preamble(doc), None
    if kind in (WIKILINK, EMBED, MARKDOWN_LINK):
        return _resolve_obsidian(row, cat)
    return None, None, f"unknown link kind {kind}"


def _resolve_obsidian(row: Any, cat: Catalog) -> Resolution:
    """Wikilinks, embeds and Markdown links: Obsidian's rules, then Org/text stems."""
    root_id, src_path = row["root_id"], row["path"]
    target = row["target"] or ""
    if row["kind"] == MARKDOWN_LINK:
        target = unquote(target)
    link = Link(kind=row["kind"], target=target, anchor=row["anchor"])
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
        if row["anchor"] and cat.units.get(doc) and cat.path_of[doc][1].endswith(".md"):
            return doc, cat.preamble(doc), None
        unit = cat.anchor_unit(doc, row["anchor"]) if row["anchor"] else None
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
    doc = _pick(cands, cat, root_id, posixpath.dirname(src_path))
    unit = cat.anchor_unit(doc, row["anchor"]) if row["anchor"] else None
    return doc, unit or cat.preamble(doc), None


def resolve_all(store: Any) -> int:
    """Resolve every link in the store; returns how many resolutions changed.

    Call inside a store transaction.
    """
    docs, units = store.catalog_rows()
    cat = Catalog.build(docs, units, store.attachments())
    updates = []
    for row in store.all_links():
        res = resolve_link(row, cat)
        old = (row["resolved_document_id"], row["resolved_unit_id"], row["unresolved_reason"])
        if res != old:
            updates.append((*res, row["id"]))
    store.set_link_resolutions(updates)
    return len(updates)
