"""Writing indexed knowledge out as files: an OKF v0.2 bundle, an Obsidian vault, and
the comparison used by the round trip.

Input is what the index holds (parsed :class:`cairn.model.Document` values with their
units and links, and the graph's edges); output is written with
:func:`cairn.writeback.create_file` into a destination that must be new or empty, so an
export never overwrites anything.

* **OKF** — one concept file per document (``<root name>/<path>.md``; a chat export
  gives one file per conversation): frontmatter ``type`` (the note's type, else by
  format), ``title``, ``description``, ``tags``, ``generated`` (``by: cairn/export``,
  ``at``), ``sources`` (the original file), ``relations`` (typed edges between exported
  documents); the body is the units as Markdown headings, Org links rewritten as
  Markdown links; plus a root ``index.md`` (``okf_version: "0.2"``, one section per
  type) and ``log.md``.
* **Obsidian** — Org files become Markdown with their file and heading properties as
  frontmatter (``id``, ``aliases``, ``tags`` kept), a conversation as a note of its
  live branch (:mod:`cairn.export.chats`), headings as ``#`` (task keyword
  and priority kept, planning as inline fields: :mod:`cairn.export.tasks`), ``id:``
  and ``file:`` links as wikilinks; Markdown files are copied byte for byte.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cairn.errors import CairnError
from cairn.export.chats import conversation_markdown, live_units, skipped_alternates
from cairn.export.files import attachment_of, attachment_rel, copy_attachments
from cairn.export.files import safe_part as _safe
from cairn.export.markdown import (
    Blocks,
    bundle_prefix,
    md_href,
    obsidian_to_okf,
    rebase_links,
    rebase_meta,
)
from cairn.export.org_inline import plain_text
from cairn.export.org_links import link_renderer
from cairn.export.org_markdown import org_to_markdown
from cairn.export.results import Renamed, Skipped
from cairn.export.tasks import heading_text, planning_lines
from cairn.model import Document, Edge, StoredLink, StoredUnit
from cairn.writeback import create_file

PRODUCER = "cairn/export"
TYPE_OF_FORMAT = {"org": "Org Note", "markdown": "Note", "text": "Text Note"}


@dataclass
class ExportReport:
    """What an export wrote: ``kind``, ``dest``, ``documents`` exported, ``files``
    written (dest-relative), ``relations`` written (OKF), ``links`` rewritten as
    wikilinks (Obsidian), ``skipped``: ``{"path", "reason"}``."""

    kind: str
    dest: str
    documents: int = 0
    files: list[str] = field(default_factory=list)
    relations: int = 0
    links: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    renamed: list[Renamed] = field(default_factory=list)
    """Notes written under another name than their source's."""


def prepare_dest(dest: Path) -> Path:
    """The absolute destination, created; it must be new or empty.

    Raises:
        CairnError: it exists and is not an empty folder.
    """
    dest = Path(os.path.abspath(dest))
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise CairnError(f"{dest}: the export destination must be a new or empty folder")
    dest.mkdir(parents=True, exist_ok=True)
    return dest


def concept_rel(root_name: str, doc: Document) -> str:
    """The dest-relative ``.md`` file of a document (never ``index.md``/``log.md``)."""
    base, _ = posixpath.splitext(doc.path)
    parts = [*([_safe(root_name)] if root_name else []), *(_safe(p) for p in base.split("/"))]
    if doc.key:
        parts.append(_safe(doc.key))
    if parts[-1].lower() in ("index", "log"):
        parts[-1] += "-note"
    return "/".join(parts) + ".md"


_OBSIDIAN_BAD = re.compile(r"[#^\[\]|]")
"""Characters Obsidian does not allow in a note's name (a wikilink could not name it)."""


def plan_rels(
    docs: Sequence[tuple[str, Document]], *, obsidian: bool
) -> tuple[dict[str, str], list[Renamed]]:
    """Every document's dest-relative ``.md`` file, planned before anything is written:
    a name already taken (case-insensitively) becomes ``name~2.md``, ``~3`` …; for an
    Obsidian vault, a converted note's name loses what Obsidian does not allow, and the
    notes copied byte for byte claim their names first. Returns ``(document id → file,
    renamed)``, ``renamed``: each note written under another name than its source's."""
    order = sorted(docs, key=lambda rd: rd[1].format == "org" or bool(rd[1].key)) \
        if obsidian else list(docs)
    rel_of: dict[str, str] = {}
    renamed: list[Renamed] = []
    used: set[str] = set()
    for root_name, doc in order:
        rel = concept_rel(root_name, doc)
        if obsidian and (doc.format == "org" or doc.key):
            rel = _OBSIDIAN_BAD.sub("_", rel)
        n = 2
        while rel.lower() in used:
            rel = rel.removesuffix(".md").rsplit("~", 1)[0] + f"~{n}.md"
            n += 1
        used.add(rel.lower())
        rel_of[doc.id] = rel
        natural = posixpath.join(root_name, posixpath.splitext(doc.path)[0] + ".md")
        if not doc.key and rel != natural:
            renamed.append(Renamed(doc.path, rel))
    return rel_of, renamed


def _heading(level: int, title: str) -> str:
    return f"{'#' * max(1, min(level, 6))} {title}\n\n"


def _description(doc: Document, units: Units) -> str:
    """The first line of text of a note (its title when it has none), an Org note's
    as plain text (:func:`~cairn.export.org_inline.plain_text`: a description is no
    markup); code is no description (an OKF reader would read it back as the start of
    the code)."""
    org = doc.format == "org"
    for u in units.get(doc.id, ()):
        if u.kind == "code":
            continue
        for line in u.body.splitlines():
            line = (plain_text(line) if org else " ".join(line.split())).strip("#*-: ")
            if line and not line.startswith((":", "#+")):
                return line[:160]
    return doc.title


def _yaml(meta: Mapping[str, Any]) -> str:
    import yaml  # type: ignore[import-untyped]

    text: str = yaml.safe_dump(
        dict(meta), sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000
    )
    return text


Units = Mapping[str, Sequence[StoredUnit]]
"""Document id → its stored units, in order."""

RESERVED_TYPES = frozenset({"okf-index", "okf-log"})
"""A bundle's own ``index.md`` and ``log.md``: the export writes its own."""
SKIP_RELATIONS = frozenset({"references", "embeds", "unresolved", "derived_from"})
"""Declared edges not written as ``relations``: they come from the body's links and
``sources``, which are exported as they are."""




def raw_body(data: bytes) -> str | None:
    """The body of a Markdown/OKF file as written (after a ``---`` frontmatter block),
    ``None`` when it is not UTF-8."""
    try:
        text = data.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return None
    if text.startswith("---\n"):
        m = re.search(r"^---[ \t]*$", text[4:], re.M)
        if m is not None:
            text = text[4 + m.end() + 1 :]
    return text.lstrip("\n")


def write_okf(
    dest: Path,
    docs: Sequence[tuple[str, Document]],
    edges: Iterable[Edge],
    abs_path_of: Mapping[str, str],
    units: Units,
    *,
    raw: Mapping[str, bytes] | None = None,
    links: Mapping[str, Sequence[StoredLink]] | None = None,
    attachments: Sequence[tuple[str, str, str]] = (),
    blocks_of: Callable[[str], Blocks] | None = None,
) -> ExportReport:
    """Write an OKF v0.2 bundle of ``docs`` (``(root name, document)``) into ``dest``
    (see the module docstring); ``abs_path_of``: document id → its source file;
    ``raw``: document id → the bytes of a Markdown/OKF source (its body is kept as
    written: Obsidian syntax of a Markdown note rewritten as OKF Markdown, an OKF
    concept's bundle-absolute links rebased onto its bundle's folder, see
    :mod:`cairn.export.markdown`); ``links``: unit id → stored links;
    ``attachments``: ``(root name, relpath, absolute path)`` of the non-note files
    (copied byte for byte to the same place, so links to them keep resolving);
    ``blocks_of``: a Markdown body → its code and comment blocks as the Markdown parser
    reads them (:func:`cairn.formats.markdown.block_ranges`; default: fenced blocks).

    Raises:
        CairnError: ``dest`` is not new or empty. OSError: it cannot be written.
    """
    dest = prepare_dest(dest)
    rep = ExportReport("okf", str(dest))
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    docs = [(r, d) for r, d in docs if d.type not in RESERVED_TYPES]
    rel_of, rep.renamed = plan_rels(docs, obsidian=False)
    used = {rel.lower() for rel in rel_of.values()}
    relations: dict[str, list[dict[str, Any]]] = {}
    for e in edges:
        s, t = rel_of.get(e.source_document_id), rel_of.get(e.target_document_id or "")
        if s is None or t is None or s == t or e.origin != "declared":
            continue
        if e.relation in SKIP_RELATIONS:
            continue
        entry = {
            "target": "/" + t,
            "type": e.relation,
            "confidence": round(min(1.0, max(0.0, float(e.weight))), 4),
        }
        lst = relations.setdefault(s, [])
        if all((x["target"], x["type"]) != (entry["target"], entry["type"]) for x in lst):
            lst.append(entry)
    index: dict[str, list[tuple[str, str, str]]] = {}
    heading_of = {u.id: u.title for us in units.values() for u in us if u.level > 0 and u.title}
    for root_name, doc in docs:
        rel = rel_of[doc.id]
        ctype = doc.type or TYPE_OF_FORMAT.get(
            doc.format, "Conversation" if doc.key else doc.format.title() + " Note"
        )
        meta: dict[str, Any] = {}
        prefix = bundle_prefix(rel, doc.metadata.get("concept_id")) if doc.format == "okf" \
            else ""
        if doc.format in ("okf", "markdown"):  # keep what the note says (round trip)
            meta = {k: v for k, v in doc.metadata.items() if k != "concept_id"}
            meta = rebase_meta(meta, prefix)
        if not (isinstance(meta.get("type"), str) and str(meta["type"]).strip()):
            if "type" in meta:
                meta["note_type"] = meta.pop("type")  # e.g. an Obsidian list of links
            meta["type"] = ctype
        meta.setdefault("title", doc.title)
        if doc.format not in ("okf", "markdown"):  # a Markdown note keeps its own (or none:
            # it adds a unit); an Org file's own #+DESCRIPTION is its description
            own = doc.metadata.get("description") if doc.format == "org" else None
            meta.setdefault("description", own.strip() if isinstance(own, str)
                            and own.strip() else _description(doc, units))
        if doc.tags:
            meta.setdefault("tags", list(doc.tags))
        meta["generated"] = {"by": PRODUCER, "at": now}
        source = abs_path_of.get(doc.id, "")
        meta.setdefault(
            "sources",
            [
                {
                    "id": "source",
                    "resource": Path(source).as_uri() if os.path.isabs(source) else doc.path,
                }
            ],
        )
        if doc.aliases:
            meta.setdefault("aliases", list(doc.aliases))
        if relations.get(rel) and "relations" not in meta:
            meta["relations"] = relations[rel]
            rep.relations += len(relations[rel])
        body_raw = raw_body(raw[doc.id]) if raw and doc.id in raw and not doc.key \
            and doc.format != "org" else None
        parts: list[str] = []
        if body_raw is not None:
            resolved: dict[str, str] = {}
            for u in units.get(doc.id, ()):
                for link in (links or {}).get(u.id, ()):
                    t = rel_of.get(link.resolved_document_id or "")
                    found = attachment_of(link.unresolved_reason)
                    if t is None and found is not None:  # ![[pic.png]] → Attachments/pic.png
                        t = attachment_rel(root_name, found)
                    if t is not None:
                        resolved[link.target] = t
            if doc.format == "okf":  # OKF reads wikilinks as plain text: kept as written
                text_body, n = rebase_links(body_raw, prefix), 0
            else:
                text_body, n = obsidian_to_okf(
                    body_raw, resolved, blocks_of(body_raw) if blocks_of else None
                )
            rep.links += n
            parts.append(text_body)
        own_units, dropped = live_units(units.get(doc.id, ()))
        if dropped and body_raw is None:
            rep.skipped.append(skipped_alternates(doc.path, doc.key, dropped))
        if doc.format == "org" and not doc.key:
            text = org_text(raw, doc.id)
            if text is None:
                rep.skipped.append(Skipped(doc.path, "org: source not readable"))
                continue
            parts.append(_org_body(text, doc, root_name, units, links, rel_of, heading_of,
                                   okf=True, rep=rep))
            own_units = []
        for u in own_units if body_raw is None else ():
            if u.level > 0 and u.title:
                parts.append(_heading(u.level, heading_text(u.todo, u.priority, u.title)))
            if u.body.strip():
                parts.append(u.body.strip("\n") + "\n\n")
        text = f"---\n{_yaml(meta)}---\n\n{''.join(parts).rstrip()}\n"
        create_file(dest / rel, text.encode())
        rep.files.append(rel)
        rep.documents += 1
        desc = str(meta.get("description") or _description(doc, units))
        index.setdefault(str(meta["type"]), []).append((doc.title, rel, desc))
    copy_attachments(dest, attachments, used | {"index.md", "log.md"}, rep)
    lines = ['---\nokf_version: "0.2"\n---\n']
    for ctype in sorted(index):
        lines.append(f"\n# {ctype}\n\n")
        for title, rel, desc in sorted(index[ctype]):
            label = re.sub(r"[\[\]\n]", " ", title).strip() or rel
            href = md_href(rel)[1:]  # relative, every special character encoded
            lines.append(f"* [{label}]({href}) - {' '.join(desc.split())}\n")
    create_file(dest / "index.md", "".join(lines).encode())
    day = now[:10]
    create_file(
        dest / "log.md",
        (
            f"# Log\n\n## {day}\n* **Creation**: exported {rep.documents} concepts and "
            f"{rep.relations} relations from the cairn index.\n"
        ).encode(),
    )
    rep.files += ["index.md", "log.md"]
    return rep


def _props_meta(doc: Document, units: Units) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    own = units.get(doc.id, ())
    first = own[0] if own else None
    if first is not None and first.level == 0:
        for k, v in first.properties.items():
            meta[k.lower()] = v
    if doc.declared_id:
        meta["id"] = doc.declared_id
    if doc.aliases:
        meta["aliases"] = list(doc.aliases)
    if doc.tags:
        meta["tags"] = list(doc.tags)
    meta.setdefault("title", doc.title)
    return meta


def obsidian_note(doc: Document, units: Units, body: str) -> str:
    """An exported note's text: front matter (the file's own properties, ``id``,
    ``aliases``, ``tags``, ``title``) then the Markdown ``body``."""
    return f"---\n{_yaml(_props_meta(doc, units))}---\n\n{body.rstrip()}\n"


def org_text(data: Mapping[str, bytes] | None, doc_id: str) -> str | None:
    """The text of an Org source among the bytes read for the export (``None``: not
    read, or not UTF-8)."""
    raw = (data or {}).get(doc_id)
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _fields(u: StoredUnit) -> str:
    return planning_lines(u.timestamps)


def _org_body(
    text: str,
    doc: Document,
    root_name: str,
    units: Units,
    links: Mapping[str, Sequence[StoredLink]] | None,
    rel_of: Mapping[str, str],
    heading_of: Mapping[str, str],
    *,
    okf: bool,
    rep: ExportReport,
) -> str:
    """An Org note's body as Markdown (:mod:`cairn.export.org_markdown`), its links
    written where the index resolved them (:mod:`cairn.export.org_links`)."""
    own = units.get(doc.id, ())
    stored = [x for u in own for x in (links or {}).get(u.id, ())]
    counter = [0]
    render = link_renderer(stored, rel_of, heading_of, root_name=root_name, okf=okf,
                           counter=counter)
    body = org_to_markdown(text, own, render, _fields)
    rep.links += counter[0]
    return body


def write_obsidian(
    dest: Path,
    docs: Sequence[tuple[str, Document]],
    read: Mapping[str, bytes],
    units: Units,
    links: Mapping[str, Sequence[StoredLink]] | None = None,
    attachments: Sequence[tuple[str, str, str]] = (),
) -> ExportReport:
    """Write an Obsidian vault of ``docs`` into ``dest`` (see the module docstring);
    ``read``: document id → the source file's bytes (Markdown copies, Org files
    converted: :func:`_org_body`); ``links``: unit id → its stored links (Org links that
    resolved to an exported document become wikilinks to it);
    ``attachments``: ``(root name, relpath, absolute path)`` of the non-note files,
    copied byte for byte to the same place (embeds of them keep resolving).

    Raises:
        CairnError: ``dest`` is not new or empty. OSError: it cannot be written.
    """
    dest = prepare_dest(dest)
    rep = ExportReport("obsidian", str(dest))
    rel_of, rep.renamed = plan_rels(docs, obsidian=True)
    heading = {u.id: u.title for us in units.values() for u in us if u.level > 0 and u.title}
    for root_name, doc in docs:
        rel = rel_of[doc.id]
        if doc.key:  # a conversation of a chat export: a note of its live branch
            body_md, dropped = conversation_markdown(units.get(doc.id, ()))
            if dropped:
                rep.skipped.append(skipped_alternates(doc.path, doc.key, dropped))
            text = f"---\n{_yaml(_props_meta(doc, units))}---\n\n{body_md}"
            create_file(dest / rel, text.encode())
            rep.files.append(rel)
            rep.documents += 1
            continue
        if doc.format != "org":
            data = read.get(doc.id)
            if data is None:
                rep.skipped.append(Skipped(doc.path, f"{doc.format}: not exported"))
                continue
            prefix = bundle_prefix(rel, doc.metadata.get("concept_id"))
            if doc.format == "okf" and prefix:  # a nested bundle's "/x.md" → its folder
                data = rebase_links(data.decode("utf-8", "surrogateescape"), prefix).encode(
                    "utf-8", "surrogateescape")
            create_file(dest / rel, data)
            rep.files.append(rel)
            rep.documents += 1
            continue
        source = org_text(read, doc.id)
        if source is None:
            rep.skipped.append(Skipped(doc.path, "org: source not readable"))
            continue
        body = _org_body(source, doc, root_name, units, links, rel_of, heading, okf=False,
                         rep=rep)
        text = obsidian_note(doc, units, body)
        create_file(dest / rel, text.encode())
        rep.files.append(rel)
        rep.documents += 1
    copy_attachments(dest, attachments, {f.lower() for f in rep.files}, rep)
    return rep
