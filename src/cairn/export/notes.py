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
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from cairn.errors import CairnError
from cairn.export.chats import conversation_markdown, live_units, skipped_alternates
from cairn.export.files import attachment_of, attachment_rel, copy_attachments
from cairn.export.files import safe_part as _safe
from cairn.export.markdown import (
    Blocks,
    bundle_prefix,
    md_link,
    obsidian_to_okf,
    rebase_links,
    rebase_meta,
)
from cairn.export.tasks import heading_text, plain_unit, planning_lines
from cairn.model import Document, Edge, StoredLink, StoredUnit
from cairn.writeback import create_file

PRODUCER = "cairn/export"
TYPE_OF_FORMAT = {"org": "Org Note", "markdown": "Note", "text": "Text Note"}
_ORG_LINK = re.compile(r"\[\[([^\]\n]+)\](?:\[([^\]\n]*)\])?\]")


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
    skipped: list[dict[str, str]] = field(default_factory=list)


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


def _org_links(text: str, target_of: Mapping[str, str], wiki: bool) -> tuple[str, int]:
    """Org ``[[target][desc]]`` links as Markdown (``wiki``: internal ones as
    wikilinks); returns the text and the number of internal links rewritten."""
    count = 0

    def sub(m: re.Match[str]) -> str:
        nonlocal count
        target, desc = m.group(1), m.group(2)
        low = target.lower()
        label = desc or target
        if low.startswith(("http://", "https://", "mailto:")):
            return f"[{label}]({target})"
        key = None
        if low.startswith("id:"):
            key = "id:" + target[3:].strip()
        elif low.startswith("file:"):
            key = "file:" + target[5:].split("::", 1)[0].strip()
        if key is not None and key in target_of:
            count += 1
            dest = target_of[key]
            path, _, anchor = dest.partition("#")
            if wiki:
                stem = path.removesuffix(".md") + (f"#{anchor}" if anchor else "")
                return f"[[{stem}|{desc}]]" if desc else f"[[{stem}]]"
            return f"[{label}](/{path})"
        return f"[{label}]({target})" if not wiki else m.group(0)

    return _ORG_LINK.sub(sub, text), count


def _heading(level: int, title: str) -> str:
    return f"{'#' * max(1, min(level, 6))} {title}\n\n"


def _description(doc: Document, units: Units) -> str:
    for u in units.get(doc.id, ()):
        for line in u.body.splitlines():
            line = " ".join(line.split()).strip("#*-: ")
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
    rel_of: dict[str, str] = {}
    target_of: dict[str, str] = {}
    used: set[str] = set()
    docs = [(r, d) for r, d in docs if d.type not in RESERVED_TYPES]
    for root_name, doc in docs:
        rel = concept_rel(root_name, doc)
        n = 2
        while rel.lower() in used:
            rel = rel.removesuffix(".md").rsplit("~", 1)[0] + f"~{n}.md"
            n += 1
        used.add(rel.lower())
        rel_of[doc.id] = rel
        target_of[f"file:{posixpath.basename(doc.path)}"] = rel
        for u in units.get(doc.id, ()):
            if u.org_id:
                target_of[f"id:{u.org_id}"] = rel
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
            meta.setdefault("description", _description(doc, units))  # it adds a unit)
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
        body_raw = raw_body(raw[doc.id]) if raw and doc.id in raw and not doc.key else None
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
        for u in own_units if body_raw is None else ():
            body, title, n, m = u.body, u.title, 0, 0
            if doc.format == "org" and links is not None:  # the stored links, in place
                own = links.get(u.id, ())
                heads = [x for x in own if u.level > 0 and x.line == u.line_start]
                body, n = _linked_body(body, [x for x in own if x not in heads], rel_of,
                                       heading_of, okf=True)
                title, m = _linked_body(title, heads, rel_of, heading_of, okf=True)
            elif doc.format == "org":
                body, n = _org_links(u.body, target_of, wiki=False)
            rep.links += n + m
            if u.level > 0 and u.title:
                parts.append(_heading(u.level, heading_text(u.todo, u.priority, title)))
                if planning_lines(u.timestamps):
                    parts.append(planning_lines(u.timestamps) + "\n")
            if body.strip():
                parts.append(body.strip("\n") + "\n\n")
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
            href = rel.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
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


def _linked_body(
    body: str,
    unit_links: Sequence[StoredLink],
    wikilink: Mapping[str, str],
    heading: Mapping[str, str],
    *,
    okf: bool = False,
) -> tuple[str, int]:
    """An Org unit's rendered body (links shown as their description, else their
    target) with its stored links written back in place, in order: ``id:``/``file:``
    links that resolved to an exported document as wikilinks (``wikilink``: document
    id → vault path without ``.md``; ``heading``: unit id → its heading title, the
    anchor) — with ``okf``, as Markdown links ``[label](/path.md#heading-slug)``
    (``wikilink`` then maps to the exported path with ``.md``) — URLs as Markdown
    links; the rest stays text. Returns the body and the number of internal links."""
    out: list[str] = []
    pos = count = 0
    for link in sorted(unit_links, key=lambda x: x.line or 0):
        label = link.alias or link.target
        if link.kind in ("org-id", "org-file", "org-heading") \
                and link.resolved_document_id in wikilink:
            target = wikilink[str(link.resolved_document_id)]
            anchor = heading.get(link.resolved_unit_id or "")
            if anchor:
                target += "#" + re.sub(r"[\[\]|#^]", " ", anchor).strip()
            shown = " ".join(label.replace("]", " ").split())  # one line, no bracket
            new = f"[[{target}|{shown}]]" if link.alias else f"[[{target}]]"
            if okf:
                new = md_link(label, wikilink[str(link.resolved_document_id)], anchor)
        elif link.kind == "url":
            new = f"[{label}]({link.target})" if link.alias else f"<{link.target}>"
        else:
            continue
        at = body.find(label, pos)
        if at < 0 or not label:
            continue
        out.append(body[pos:at] + new)
        pos = at + len(label)
        count += link.kind != "url"
    out.append(body[pos:])
    return "".join(out), count


def write_obsidian(
    dest: Path,
    docs: Sequence[tuple[str, Document]],
    read: Mapping[str, bytes],
    units: Units,
    links: Mapping[str, Sequence[StoredLink]] | None = None,
    attachments: Sequence[tuple[str, str, str]] = (),
) -> ExportReport:
    """Write an Obsidian vault of ``docs`` into ``dest`` (see the module docstring);
    ``read``: document id → the source file's bytes (for Markdown copies); ``links``:
    unit id → its stored links (with them, Org links that resolved to an exported
    document become wikilinks to it, URLs Markdown links: :func:`_linked_body`);
    ``attachments``: ``(root name, relpath, absolute path)`` of the non-note files,
    copied byte for byte to the same place (embeds of them keep resolving).

    Raises:
        CairnError: ``dest`` is not new or empty. OSError: it cannot be written.
    """
    dest = prepare_dest(dest)
    rep = ExportReport("obsidian", str(dest))
    rel_of: dict[str, str] = {}
    target_of: dict[str, str] = {}
    for root_name, doc in docs:
        rel = concept_rel(root_name, doc)
        rel_of[doc.id] = rel
        target_of[f"file:{posixpath.basename(doc.path)}"] = rel
        if doc.declared_id:
            target_of[f"id:{doc.declared_id}"] = rel
        for u in units.get(doc.id, ()):
            if u.org_id:
                anchor = f"#{u.title}" if u.level > 0 else ""
                target_of[f"id:{u.org_id}"] = rel + anchor
    wikilink = {i: r.removesuffix(".md") for i, r in rel_of.items()}
    heading = {u.id: u.title for us in units.values() for u in us if u.level > 0 and u.title}
    for _, doc in docs:
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
                rep.skipped.append({"path": doc.path, "reason": f"{doc.format}: not exported"})
                continue
            prefix = bundle_prefix(rel, doc.metadata.get("concept_id"))
            if doc.format == "okf" and prefix:  # a nested bundle's "/x.md" → its folder
                data = rebase_links(data.decode("utf-8", "surrogateescape"), prefix).encode(
                    "utf-8", "surrogateescape")
            if not (dest / rel).exists():
                create_file(dest / rel, data)
                rep.files.append(rel)
                rep.documents += 1
            continue
        parts: list[str] = []
        fixed_map = target_of
        for u in units.get(doc.id, ()):
            own = links.get(u.id, ()) if links is not None else ()
            in_title = [x for x in own if u.level > 0 and x.line == u.line_start]
            if links is not None:
                body, n = _linked_body(
                    u.body, [x for x in own if x not in in_title], wikilink, heading
                )
            else:
                body, n = _org_links(u.body, fixed_map, wiki=True)
            rep.links += n
            if u.level > 0 and u.title:
                if links is not None:
                    title, m = _linked_body(u.title, in_title, wikilink, heading)
                else:
                    title, m = _org_links(u.title, fixed_map, wiki=True)
                rep.links += m
                tags = " ".join(f"#{t}" for t in u.tags)
                title = heading_text(u.todo, u.priority, title)
                parts.append(_heading(u.level, f"{title} {tags}".strip()))
                fields = planning_lines(u.timestamps) + "".join(
                    f"{k.lower()}:: {v}\n" for k, v in u.properties.items()
                )
                if fields:
                    parts.append(fields + "\n")
            body = "\n".join(
                ln
                for ln in body.splitlines()
                if not ln.strip().upper().startswith(("#+TITLE", "#+FILETAGS"))
            )
            if body.strip():
                parts.append(body.strip("\n") + "\n\n")
        text = f"---\n{_yaml(_props_meta(doc, units))}---\n\n{''.join(parts).rstrip()}\n"
        create_file(dest / rel, text.encode())
        rep.files.append(rel)
        rep.documents += 1
    copy_attachments(dest, attachments, {f.lower() for f in rep.files}, rep)
    return rep


def _okf_description(doc: Document) -> str:
    """A document's ``description`` (front matter or OKF), which the comparison strips
    from the start of its first unit's body on both sides of a round trip alike: the
    OKF parser puts it before a concept's body unless the body already opens with it,
    where a Markdown note keeps it as a property only, so after stripping, the two
    readings of one note give the same text whichever way the parser decided."""
    value = doc.metadata.get("description") if isinstance(doc.metadata, Mapping) else None
    return value.strip() if isinstance(value, str) else ""


def signature(
    docs: Iterable[Document],
    edges: Iterable[Edge],
    units: Units,
    links: Mapping[str, Sequence[StoredLink]],
    *,
    exact: bool = False,
    keywords: Iterable[str] = (),
    okf: bool = False,
) -> dict[str, set[tuple[str, ...]]]:
    """What a round trip must keep, by document title (ids differ between two
    indexes): ``units`` (document, outline path, title, whitespace-normalised body; an
    first unit's body without the ``description`` it starts with; an empty preamble is
    no unit), ``links`` (document, unit title, ``=<target title>``, ``@<attachment path>``
    for an existing non-note file, or ``?`` when it does not resolve, and how many such
    links the unit holds — every unit's, the empty preamble's front matter links too)
    and declared ``edges`` (source title, relation, target title) between these
    documents. ``links``: unit id → its stored links.
    ``exact``: an attachment counts only when the link's path names it (an OKF
    export's ``/pic.png`` that cairn finds at ``Attachments/pic.png`` by its name is
    broken for any other OKF reader: ``?``). Headings are compared without a task
    keyword (of ``keywords``), priority or trailing ``#tags``, bodies without their
    ``key:: value`` lines (an Org heading's planning and properties as an Obsidian
    export writes them; the ``tasks`` aspect compares those):
    :func:`cairn.export.tasks.plain_unit`. ``okf``: these are the documents an OKF
    export is made of (an Org note's first unit loses the ``description`` the export
    writes for it, as its concept does)."""
    keys = frozenset(keywords)
    title_of: dict[str, str] = {}
    out_units: set[tuple[str, ...]] = set()
    counted: Counter[tuple[str, str, str]] = Counter()
    for d in docs:
        if d.type in RESERVED_TYPES:
            continue
        title_of[d.id] = d.title
        # an Org note's OKF concept gets the description the export makes of its text
        desc = " ".join((_okf_description(d) or (
            _description(d, units) if d.format == "org" and okf else "")).split())
        for u in units.get(d.id, ()):
            head, path, text = plain_unit(u, keys)
            for link in links.get(u.id, ()):
                target = link.resolved_document_id
                found = attachment_of(link.unresolved_reason)
                if exact and found is not None and unquote(link.target).lstrip("/") != found:
                    found = None
                key = "=" + target if target else ("@" + found if found else "?")
                counted[(d.title, head, key)] += 1
            body = " ".join(text.split())
            if u.level == 0 and desc and body.startswith(desc):
                body = body[len(desc) :].lstrip()
            if u.level == 0 and not body:
                continue
            out_units.add((d.title, path, head, body))
    out_edges: set[tuple[str, ...]] = set()
    for e in edges:
        s, t = title_of.get(e.source_document_id), title_of.get(e.target_document_id or "")
        if s is not None and t is not None and s != t and e.origin == "declared":
            out_edges.add((s, e.relation, t))
    by_title: Counter[tuple[str, str, str]] = Counter()
    for (a, b, c), n in counted.items():
        by_title[(a, b, ("=" + title_of.get(c[1:], "?")) if c.startswith("=") else c)] += n
    out_links: set[tuple[str, ...]] = {(a, b, c, str(n)) for (a, b, c), n in by_title.items()}
    return {"units": out_units, "links": out_links, "edges": out_edges}
