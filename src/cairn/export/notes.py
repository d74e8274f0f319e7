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
  frontmatter (``id``, ``aliases``, ``tags`` kept), headings as ``#``, ``id:`` and
  ``file:`` links as wikilinks; Markdown files are copied byte for byte.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cairn.errors import CairnError
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


def _safe(part: str) -> str:
    part = re.sub(r"[\x00-\x1f/\\:*?\"<>|]", "_", part).strip(" .")
    return part[:120] or "_"


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


_WIKI = re.compile(r"(!?)\[\[([^\]|#\n]*)(#[^\]|\n]*)?(?:\|([^\]\n]*))?\]\]")


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


def _wikilinks(text: str, resolved: Mapping[str, str]) -> tuple[str, int]:
    """Obsidian ``[[target#anchor|alias]]`` as OKF Markdown links to the exported file
    (``resolved``: target as written → exported path); unresolved ones as links to
    ``/<target>.md`` (a broken link OKF tolerates). Returns the text and the count."""
    count = 0

    def sub(m: re.Match[str]) -> str:
        nonlocal count
        bang, target, anchor, alias = m.group(1), m.group(2).strip(), m.group(3), m.group(4)
        if not target:
            return m.group(0)
        count += 1
        dest = resolved.get(target) or (target if target.endswith(".md") else target + ".md")
        href = "/" + dest.lstrip("/")
        href = href.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
        if anchor:
            href += "#" + anchor[1:].strip().replace(" ", "-").lower()
        return f"{bang}[{alias or target}]({href})"

    return _WIKI.sub(sub, text), count


def write_okf(
    dest: Path,
    docs: Sequence[tuple[str, Document]],
    edges: Iterable[Edge],
    abs_path_of: Mapping[str, str],
    units: Units,
    *,
    raw: Mapping[str, bytes] | None = None,
    links: Mapping[str, Sequence[StoredLink]] | None = None,
) -> ExportReport:
    """Write an OKF v0.2 bundle of ``docs`` (``(root name, document)``) into ``dest``
    (see the module docstring); ``abs_path_of``: document id → its source file;
    ``raw``: document id → the bytes of a Markdown/OKF source (its body is kept as
    written, wikilinks rewritten as Markdown links); ``links``: unit id → stored links.

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
    for _root, doc in docs:
        rel = rel_of[doc.id]
        ctype = doc.type or TYPE_OF_FORMAT.get(
            doc.format, "Conversation" if doc.key else doc.format.title() + " Note"
        )
        meta: dict[str, Any] = {}
        if doc.format in ("okf", "markdown"):  # keep what the note says (round trip)
            meta = {k: v for k, v in doc.metadata.items() if k != "concept_id"}
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
                    if t is not None:
                        resolved[link.target] = t
            text_body, n = _wikilinks(body_raw, resolved)
            rep.links += n
            parts.append(text_body)
        for u in units.get(doc.id, ()) if body_raw is None else ():
            body, _ = (
                _org_links(u.body, target_of, wiki=False) if doc.format == "org" else (u.body, 0)
            )
            if u.level > 0 and u.title:
                parts.append(_heading(u.level, u.title))
            if body.strip():
                parts.append(body.strip("\n") + "\n\n")
        text = f"---\n{_yaml(meta)}---\n\n{''.join(parts).rstrip()}\n"
        create_file(dest / rel, text.encode())
        rep.files.append(rel)
        rep.documents += 1
        desc = str(meta.get("description") or _description(doc, units))
        index.setdefault(str(meta["type"]), []).append((doc.title, rel, desc))
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


def write_obsidian(
    dest: Path, docs: Sequence[tuple[str, Document]], read: Mapping[str, bytes], units: Units
) -> ExportReport:
    """Write an Obsidian vault of ``docs`` into ``dest`` (see the module docstring);
    ``read``: document id → the source file's bytes (for Markdown copies).

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
    for _, doc in docs:
        rel = rel_of[doc.id]
        if doc.format != "org":
            data = read.get(doc.id)
            if data is None or doc.key:
                rep.skipped.append({"path": doc.path, "reason": f"{doc.format}: not exported"})
                continue
            if not (dest / rel).exists():
                create_file(dest / rel, data)
                rep.files.append(rel)
                rep.documents += 1
            continue
        parts: list[str] = []
        fixed_map = target_of
        for u in units.get(doc.id, ()):
            body, n = _org_links(u.body, fixed_map, wiki=True)
            rep.links += n
            if u.level > 0 and u.title:
                title, m = _org_links(u.title, fixed_map, wiki=True)
                rep.links += m
                tags = " ".join(f"#{t}" for t in u.tags)
                parts.append(_heading(u.level, f"{title} {tags}".strip()))
                if u.properties:
                    parts.append(
                        "".join(f"{k.lower()}:: {v}\n" for k, v in u.properties.items()) + "\n"
                    )
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
    return rep


def signature(
    docs: Iterable[Document],
    edges: Iterable[Edge],
    units: Units,
    links: Mapping[str, Sequence[StoredLink]],
) -> dict[str, set[tuple[str, ...]]]:
    """What a round trip must keep, by document title: ``units`` (outline path, title,
    whitespace-normalised body), ``links`` (unit title, link target as written) and
    declared ``edges`` (source title, relation, target title) between these documents.
    ``links``: unit id → its stored links."""
    title_of: dict[str, str] = {}
    out_units: set[tuple[str, ...]] = set()
    out_links: set[tuple[str, ...]] = set()
    for d in docs:
        if d.type in RESERVED_TYPES:
            continue
        title_of[d.id] = d.title
        for u in units.get(d.id, ()):
            body = " ".join(u.body.split())
            if u.level == 0 and not body:
                continue
            out_units.add((d.title, " / ".join(u.outline_path), u.title if u.level else "", body))
            for link in links.get(u.id, ()):
                target = link.resolved_document_id
                out_links.add(
                    (d.title, u.title if u.level else "", "=" + target if target else "?")
                )
    out_edges: set[tuple[str, ...]] = set()
    for e in edges:
        s, t = title_of.get(e.source_document_id), title_of.get(e.target_document_id or "")
        if s is not None and t is not None and s != t and e.origin == "declared":
            out_edges.add((s, e.relation, t))
    # resolved link targets by title (ids differ between the two indexes)
    out_links = {
        (a, b, ("=" + title_of.get(c[1:], "?")) if c.startswith("=") else c)
        for a, b, c in out_links
    }
    return {"units": out_units, "links": out_links, "edges": out_edges}
