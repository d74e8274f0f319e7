"""``entities``: values that recur — in Org properties, in front-matter fields, as
link targets no note answers to — but have no note of their own (the Org seed's entity
discovery: a ``:CLIENT:`` value used under twelve headings). Each is proposed as a new
note in ``[dream] entity_folder`` of its root, Org or Markdown by the root's format —
unless an existing note's name is a near miss of it (:func:`.broken.plausible`: the link
is what is wrong), an exporter or archiving setting, or a missing attachment's or a
folder's name.

Creating the note is made by ``--apply`` (``Fix.auto``) only on certain evidence: a bare
note name (a wikilink ``[[Name]]``: no ``file:`` or Markdown path, no folder, no file
extension, no anchor) that at least :data:`AUTO_CREATE_NOTES` distinct notes link to,
every such link being one the new note would resolve by the format's own rules. Anything
else is a proposal; a name known only from links the new note would not resolve (Org
``[[file:modules.org]]`` is relative to the linking file, so one ``entities/`` note
cannot answer links from several folders) gets no fix at all."""

from __future__ import annotations

import json
import posixpath
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from cairn.graph.catalog import Catalog, resolve_link
from cairn.maintain.dream.base import DreamContext, Finding, Fix, finding_key, register_check
from cairn.maintain.dream.broken import rank_candidates
from cairn.model import CatalogDocument, Document, LinkOccurrence

SKIP_KEYS = frozenset(
    k.lower()
    for k in (
        "id", "custom_id", "created", "date", "modified", "updated", "title", "tags",
        "aliases", "alias", "type", "description", "permalink", "cssclasses", "cssclass",
        "publish", "timestamp", "stale_after", "status", "concept_id", "verified",
        "generated", "sources", "url", "source", "link", "image", "cover", "rating",
        "year", "version", "logging", "visibility", "effort", "style", "archive",
        "category", "export_file_name", "header-args", "header_args", "roam_refs",
        "roam_aliases", "roam_exclude", "dir", "attach_dir", "ordered", "last_repeat",
        "clock_modeline_total", "copying", "unnumbered", "html_container_class",
        "description_short", "lang", "language", "layout", "order", "weight", "draft",
    )
)
SETTING_PREFIXES = ("beamer_", "html_", "latex_", "export_", "archive_", "header-args")
"""Org properties that are exporter or archiving settings (``:BEAMER_OPT:
allowframebreaks``, ``:ARCHIVE_OLPATH:``), never names of things."""
_NOT_NAME = re.compile(r"^[\d\s.,:/+\-%]*$|^[a-z]+://|[<>{}=]|^\W|^\s*$")
_NOT_A_NOTE = re.compile(r"\.(?!(?:md|org|markdown|txt)$)[A-Za-z0-9]{1,5}$")
"""A link target with another file's extension (``tutorial-1.png``): a missing
attachment, not a name."""
_WIKI = re.compile(r"^\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]$")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")
AUTO_CREATE_NOTES = 3
"""How many distinct notes must link to a bare name before ``--apply`` creates its note."""
_NEW_ID = "dream:new-entity-note"


def norm(text: str) -> str:
    """The name key a value and a note title are compared by."""
    return re.sub(r"[\s_\-]+", " ", text.strip().lower())


def _value(raw: Any) -> str | None:
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    m = _WIKI.match(text)
    if m:
        text = m.group(1).strip()
    if not (2 <= len(text) <= 60) or _NOT_NAME.search(text) or "\n" in text:
        return None
    if text.lower() in ("t", "nil", "true", "false", "yes", "no", "none", "todo", "done"):
        return None
    return text


def safe_name(value: str) -> str:
    """A file-name stem for a value (path separators and shell-hostile characters
    dropped, at most 80 characters)."""
    name = re.sub(r'[/\\:*?"<>|\x00-\x1f]', " ", value).strip(" .")
    return re.sub(r"\s+", " ", name)[:80] or "entity"


class EntitiesCheck:
    """See the module docstring."""

    name = "entities"
    summary = "recurring property / front-matter values and link targets with no note"

    def run(self, ctx: DreamContext) -> list[Finding]:
        """One finding per (root, value) with its places and a proposed note."""
        out: list[Finding] = []
        by_root: dict[str, list[Document]] = defaultdict(list)
        for d in ctx.notes:
            by_root[d.root_id].append(d)
        unresolved: dict[str, list[LinkOccurrence]] = defaultdict(list)
        for x in ctx.links:
            if x.kind in ("wikilink", "org-file", "markdown") and x.unresolved_reason and \
                    not x.resolved_document_id and not x.unresolved_reason.startswith("attach"):
                unresolved[x.document_id].append(x)
        for root_id, docs in by_root.items():
            names: set[str] = set()
            for d in docs:
                names.add(norm(d.title))
                names.add(norm(posixpath.splitext(posixpath.basename(d.path))[0]))
                names.update(norm(a) for a in d.aliases)
            uses: dict[str, list[dict[str, Any]]] = defaultdict(list)
            spelling: dict[str, Counter[str]] = defaultdict(Counter)

            def use(
                value: Any,
                doc: Document,
                field: str,
                line: int | None,
                link: LinkOccurrence | None = None,
                names: set[str] = names,
                uses: dict[str, list[dict[str, Any]]] = uses,
                spelling: dict[str, Counter[str]] = spelling,
            ) -> None:
                v = _value(value)
                if v is None:
                    return
                k = norm(v)
                if k in names:
                    return
                spelling[k][v] += 1
                uses[k].append({"path": ctx.display(doc), "field": field, "line": line,
                                "document_id": doc.id, "link": link})

            templates = template_folders(ctx.root_by_id[root_id].path)
            for doc in docs:
                if is_template(doc.path, templates):
                    continue  # a template's links and fields are placeholders, not uses
                # front matter of Markdown/OKF notes (an Org file's keywords are settings)
                meta = doc.metadata if isinstance(doc.metadata, dict) and doc.format != "org" \
                    else {}
                for key, val in meta.items():
                    if key.lower() in SKIP_KEYS or key.startswith("_"):
                        continue
                    for v in val if isinstance(val, list) else [val]:
                        use(v, doc, key, ctx.front_line(doc, key))
                if doc.format == "org":
                    for unit in ctx.units(doc):
                        for key, val in unit.properties.items():
                            if key.lower() not in SKIP_KEYS and \
                                    not key.lower().startswith(SETTING_PREFIXES):
                                use(val, doc, f":{key}:", unit.line_start)
                for x in unresolved.get(doc.id, []):
                    target = x.target
                    if target.endswith("/") or _NOT_A_NOTE.search(target):
                        continue
                    base = posixpath.splitext(posixpath.basename(target))[0]
                    use(base, doc, "link", x.line, x)
            out += self._findings(ctx, root_id, docs, uses, spelling)
        return out

    def _findings(
        self,
        ctx: DreamContext,
        root_id: str,
        docs: list[Document],
        uses: dict[str, list[dict[str, Any]]],
        spelling: dict[str, Counter[str]],
    ) -> list[Finding]:
        root = ctx.root_by_id[root_id]
        formats = Counter(d.format for d in docs)
        fmt = "org" if formats["org"] > formats["markdown"] + formats["okf"] else "markdown"
        ext = ".org" if fmt == "org" else ".md"
        folder = ctx.settings.entity_folder.strip("/") or "."
        out: list[Finding] = []
        names: dict[str, list[tuple[str, str]]] = {}
        for k, places in sorted(uses.items()):
            units = {(p["document_id"], p["line"], p["field"]) for p in places}
            if len(units) < ctx.settings.entity_min:
                continue
            value = spelling[k].most_common(1)[0][0]
            if rank_candidates(value, docs, limit=1, names=names):
                # a near miss of an existing note (``Compost Guid`` beside ``Compost
                # Guide``): ``broken`` proposes the link fix; a note named after the
                # typo would only add to the mess
                continue
            rel_new = posixpath.normpath(posixpath.join(folder, safe_name(value) + ext))
            path = f"{root.path.rstrip('/')}/{rel_new}"
            root_name = root.path.rstrip("/").rsplit("/", 1)[-1]
            fields = sorted({p["field"] for p in places})
            auto, fix_it = _evidence(root_id, rel_new, value, fmt, places)
            first = places[0]
            mentions = sorted({p["path"].split("/", 1)[1] for p in places})[:50]
            out.append(
                Finding(
                    "entities", "entity",
                    finding_key("entities", "entity", root_name, k),
                    str(root.path).rstrip("/") + "/" + first["path"].split("/", 1)[1],
                    first["path"], first["line"],
                    f"{value!r} recurs {len(units)} times ({', '.join(fields)}) and has no "
                    f"note; proposed: {root_name}/{rel_new}" + (
                        "" if fix_it else " (it would not resolve these links, so no "
                        "fix is offered)"),
                    value,
                    {"count": len(units), "fields": fields,
                     "places": [{k2: p[k2] for k2 in ("path", "field", "line")}
                                for p in places[:20]],
                     "proposed": f"{root_name}/{rel_new}"},
                    Fix("create_note", path,
                        f"{'' if auto else 'proposed: '}create {root_name}/{rel_new}",
                        {"title": value, "format": fmt, "mentions": mentions,
                         "relpath": rel_new}, auto) if fix_it else None,
                )
            )
        return out


def template_folders(root: str | Path) -> set[str]:
    """Root-relative folders (lower case) that hold templates: the ``folder`` of
    Obsidian's templates core plugin (``.obsidian/templates.json`` of the root or of a
    vault one level below it). A folder named ``templates`` anywhere is one too
    (:func:`is_template`)."""
    base = Path(root)
    out: set[str] = set()
    for conf in [base / ".obsidian" / "templates.json",
                 *base.glob("*/.obsidian/templates.json")]:
        try:
            folder = json.loads(conf.read_text(encoding="utf-8")).get("folder")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(folder, str) and folder.strip("/"):
            vault = conf.parent.parent.relative_to(base).as_posix()
            rel = posixpath.normpath(posixpath.join(vault, folder.strip("/")))
            out.add(rel.lower())
    return out


def is_template(path: str, folders: set[str]) -> bool:
    """Whether the root-relative ``path`` is under a templates folder."""
    low = path.lower()
    parts = low.split("/")[:-1]
    return "templates" in parts or any(low.startswith(f + "/") for f in folders)


def _bare(link: LinkOccurrence) -> bool:
    """``[[Name]]``: a wikilink to a note name, not a path, a file or a heading."""
    target = link.target.strip()
    return (link.kind == "wikilink" and not link.anchor and "/" not in target
            and "\\" not in target and not _EXTENSION.search(target))


def _evidence(
    root_id: str, rel_new: str, title: str, fmt: str, places: list[dict[str, Any]]
) -> tuple[bool, bool]:
    """``(auto, offered)`` for creating ``rel_new`` (root-relative) for ``places``: made
    by ``--apply`` only for bare names linked from :data:`AUTO_CREATE_NOTES` notes that
    the new note resolves (every such link); not offered at all when the only evidence
    is links it would leave unresolved."""
    links: list[LinkOccurrence] = [p["link"] for p in places if p.get("link") is not None]
    if not links:
        return False, True  # recurring property / front-matter values: a person decides
    cat = Catalog.build([CatalogDocument(_NEW_ID, root_id, rel_new, title, fmt)], [], [])
    resolved = [x for x in links if resolve_link(x, cat)[0] == _NEW_ID]
    if not resolved and len(links) == len(places):
        return False, False
    sure = len(resolved) == len(links) and all(_bare(x) for x in links) and \
        len({x.document_id for x in links}) >= AUTO_CREATE_NOTES
    return sure, True


CHECK = register_check(EntitiesCheck())
