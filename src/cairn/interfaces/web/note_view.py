"""How the note page shows a document: each unit's own source lines rendered
(Org or Markdown, sanitised by :mod:`.render`), its title, planning and editor link,
the outgoing links resolved to the UI's URLs, the backlinks and the frontmatter rows —
the context ``note.html`` is rendered with (:func:`note_context`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from html import escape
from typing import Any

from markupsafe import Markup

from cairn.app import note_formats
from cairn.interfaces.web.render import (
    editor_link,
    note_href,
    render_markdown,
    render_org,
    sanitize,
)
from cairn.model import DocumentView, StoredDocument, StoredLink, StoredUnit


def doc_is_file(view: DocumentView) -> bool:
    """Whether the document's file is its source text (Markdown, Org, plain text), as
    opposed to one conversation of a chat export."""
    return view.document.format in note_formats()


def _resolver(links: tuple[StoredLink, ...]) -> dict[str, str]:
    """Link target as written (with and without its anchor) → the UI's URL of the
    note (and unit) it resolves to."""
    out: dict[str, str] = {}
    for link in links:
        if link.resolved_document_id:
            href = note_href(link.resolved_document_id, link.resolved_unit_id)
            out.setdefault(link.target, href)
            if link.anchor:
                out.setdefault(f"{link.target}#{link.anchor}", href)
    return out


def _title_html(unit: StoredUnit, fmt: str, resolve: Mapping[str, str]) -> Markup:
    if fmt == "org":
        return Markup(render_org(unit.title, resolve.get).removeprefix("<p>")
                      .removesuffix("</p>"))
    return Markup(sanitize(escape(unit.title)))


_FRONTMATTER_OPEN = re.compile(r"^(---|\+\+\+)\s*$")
_ORG_HEADING = re.compile(r"^\*+\s")
_ORG_PLANNING = re.compile(r"^\s*(SCHEDULED|DEADLINE|CLOSED):")
_ORG_DRAWER = re.compile(r"^\s*:([\w-]+):\s*$")


def own_text(text: str, units: tuple[StoredUnit, ...]) -> dict[str, str]:
    """Each unit's own source lines: from its first line up to the next unit's first
    line (a parent's span stops at its first child; a code unit carves its block out
    of its heading). Markdown frontmatter at the top of the file is left out, and a
    preamble that starts on a heading's line owns none.

    Returns:
        unit id → its lines joined by newlines.
    """
    lines = text.splitlines()
    starts = sorted({u.line_start for u in units})
    skip = 0
    if lines and _FRONTMATTER_OPEN.match(lines[0]):
        closer = lines[0].strip()
        for i in range(1, len(lines)):
            if lines[i].strip() == closer or (closer == "---" and lines[i].strip() == "..."):
                skip = i + 1
                break
    # a Markdown title-only preamble shares its line with the H1 that follows: the
    # heading shows that line, the preamble has no lines of its own
    headed = {u.line_start for u in units if u.kind != "preamble"}
    out: dict[str, str] = {}
    for u in units:
        if u.kind == "preamble" and u.line_start in headed:
            out[u.id] = ""
            continue
        later = [s for s in starts if s > u.line_start]
        stop = (later[0] - 1) if later else len(lines)
        first = max(u.line_start, skip + 1)
        out[u.id] = "\n".join(lines[first - 1:stop])
    return out


def _org_own(text: str, heading: bool) -> str:
    """An Org unit's own lines without what the page shows from the unit's fields: the
    heading line, planning lines and drawers (properties, logbook)."""
    lines = text.splitlines()
    if heading and lines and _ORG_HEADING.match(lines[0]):
        lines = lines[1:]
    out: list[str] = []
    drawer = False
    for line in lines:
        if drawer:
            drawer = line.strip().upper() != ":END:"
            continue
        if _ORG_DRAWER.match(line) and line.strip().upper() != ":END:":
            drawer = True
            continue
        if not out and _ORG_PLANNING.match(line):
            continue
        out.append(line)
    return "\n".join(out)


def _body_html(unit: StoredUnit, fmt: str, source: str | None,
               resolve: Mapping[str, str]) -> Markup:
    """A unit's body as sanitised HTML: its own source lines rendered when the file
    is the document's (Markdown, Org, text), else (a chat message) its indexed body
    as Markdown."""
    heading = unit.kind not in ("preamble", "code")
    if source is None:
        return Markup(render_markdown(unit.body, resolve.get)) if unit.body.strip() \
            else Markup("")
    if fmt == "org":
        return Markup(render_org(_org_own(source, heading), resolve.get))
    if fmt in ("markdown", "okf"):
        lines = source.splitlines()
        if heading and lines and lines[0].lstrip().startswith("#"):
            lines = lines[1:]
        return Markup(render_markdown("\n".join(lines), resolve.get))
    return Markup(sanitize('<pre class="text">' + escape(source) + "</pre>"))


def _planning(unit: StoredUnit) -> list[tuple[str, str]]:
    return [(t.role, t.raw) for t in unit.timestamps
            if t.role in ("scheduled", "deadline", "closed")]


def note_context(view: DocumentView, text: str | None,
                 editor_url: str | None) -> dict[str, Any]:
    """What ``note.html`` shows of a document view: its units rendered (title, body,
    TODO, priority, tags, properties, planning, editor link), the outline, the outgoing
    links with their unit and line, the backlinks, and the frontmatter as rows.

    Args:
        view: the document (:meth:`cairn.notes.doors.Doors.get`).
        text: its file's text (:meth:`cairn.notes.doors.Doors.document_text`) when the file
            holds only this document, else ``None`` (a conversation of a chat export).
        editor_url: the ``[web] editor_url`` template, or ``None``.
    """
    doc: StoredDocument = view.document
    resolve = _resolver(view.links)
    titles = {u.id: u.title for u in view.units}
    own = own_text(text, view.units) if text is not None else {}
    units = [{
        "unit": u,
        "title": _title_html(u, doc.format, resolve),
        "body": _body_html(u, doc.format, own.get(u.id), resolve),
        "planning": _planning(u),
        "role": str(u.extra.get("role", "")) if u.kind == "message" else "",
        "editor": editor_link(editor_url, doc.abs_path, u.line_start),
    } for u in view.units]
    outgoing = [{"link": link, "context": titles.get(link.unit_id, ""),
                 "href": note_href(link.resolved_document_id, link.resolved_unit_id)
                 if link.resolved_document_id else None} for link in view.links]
    meta = [(str(k), v if isinstance(v, str) else ", ".join(map(str, v))
             if isinstance(v, list | tuple) else str(v))
            for k, v in doc.metadata.items()
            if not isinstance(v, Mapping) and v not in ("", None, [], ())]
    return {"doc": doc, "units": units, "outgoing": outgoing, "backlinks": view.backlinks,
            "meta": meta, "editor": editor_link(editor_url, doc.abs_path, 1)}
