"""The web UI's routes on the API's FastAPI app: ``/`` (search), ``/ui/hits`` (the hits
fragment the search page fetches as you type), ``/note/{id}``, ``/status`` and
``/static/{name}``.

Each page calls one :class:`cairn.app.Cairn` method and renders its typed result with a
Jinja2 template (autoescaping on); note text is rendered by :mod:`.render` and
sanitised there. Every HTML answer carries :data:`CSP` — scripts only from
``/static/``, no inline script or style, nothing from another origin — and the pages
pass the same :class:`~cairn.interfaces.api.guard.Guard` as the API (Host/Origin
allowlist, token).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from html import escape
from importlib.resources import files
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Path, Query
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from cairn.app import Cairn, note_formats
from cairn.errors import CairnError, NotFound
from cairn.interfaces.web.conversations import mount_conversations
from cairn.interfaces.web.explain import explain_rows, facet_links
from cairn.interfaces.web.graph_cap import cap_graph
from cairn.interfaces.web.live import mount_live
from cairn.interfaces.web.render import (
    editor_link,
    highlight,
    note_href,
    render_markdown,
    render_org,
    sanitize,
)
from cairn.model import (
    SEARCH_MODES,
    DocumentView,
    FileView,
    SearchRequest,
    StoredDocument,
    StoredLink,
    StoredUnit,
    UnitView,
)

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")
"""The Content-Security-Policy of every page: no inline script, nothing remote."""
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
STATIC_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png",
                ".svg": "image/svg+xml", ".txt": "text/plain"}
MODES = SEARCH_MODES
HIT_LIMIT = 20

Mode = Annotated[Literal["", "keyword", "semantic", "hybrid"], Query(
    description="keyword, semantic or hybrid (empty: the index's default)")]
Q = Annotated[str, Query(max_length=1000, description="A query in cairn's query language")]
Expand = Annotated[bool, Query(description="Re-rank by graph expansion")]


def _env() -> Environment:
    env = Environment(loader=PackageLoader("cairn.interfaces.web", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.globals["note_href"] = note_href
    return env


CYTOSCAPE_STYLE = "'sha256-pgvDUBa4IjFA2yuSJ2cqcyxmNYJMborsd0ORcRv9vw8='"
"""The hash of the one stylesheet Cytoscape.js 3.34.4 adds to the page."""
GRAPH_HEADERS = {**HEADERS, "Content-Security-Policy": CSP.replace(
    "style-src 'self';", f"style-src 'self'; style-src-elem 'self' {CYTOSCAPE_STYLE}; "
    "style-src-attr 'unsafe-inline';")}
"""The graph page's headers: Cytoscape.js adds one stylesheet (allowed by its hash)
and sets ``style`` attributes on the elements it creates, so that page allows inline
style *attributes* — never inline script; note text never reaches that page's HTML
(labels are drawn on a canvas)."""


def _page(env: Environment, name: str, status: int = 200,
          headers: Mapping[str, str] = HEADERS, **context: Any) -> HTMLResponse:
    html = env.get_template(name).render(**context)
    return HTMLResponse(html, status_code=status, headers=dict(headers))


def mount(api: FastAPI, cairn: Cairn, *, editor_url: str | None = None) -> None:
    """Add the web UI's routes to ``api`` (left out of its OpenAPI description).

    Args:
        api: the HTTP API's app (:func:`cairn.interfaces.api.app.create_app`).
        cairn: the open index every page reads.
        editor_url: the ``[web] editor_url`` template of "open in editor" links
            (``{path}``, ``{line}``), or ``None`` for none.
    """
    env = _env()
    static = files("cairn.interfaces.web") / "static"

    def hits_context(q: str, mode: str, expand: bool = False) -> dict[str, Any]:
        base: dict[str, Any] = {"q": q, "mode": mode, "expand": expand, "hits": [],
                                "notes": [], "error": None, "took_ms": None, "facets": [],
                                "facet_basis": ""}
        if not q.strip():
            return base
        try:
            res = cairn.search(SearchRequest.of(q, mode=mode or None, limit=HIT_LIMIT,
                                                explain=True, expand=expand))
            facets = cairn.fields.facets(q, mode=mode or None)
        except CairnError as exc:
            return {**base, "error": str(exc)}
        hits = [{"hit": h, "snippet": Markup(highlight(h.snippet, h.highlights)),
                 "trail": _trail(h.doc_title, h.outline_path, h.title),
                 "explain": explain_rows(h.explain),
                 "href": note_href(h.document_id, h.unit_id)} for h in res.hits]
        return {**base, "hits": hits, "notes": list(res.notes), "took_ms": res.took_ms,
                "facets": facet_links(q, facets), "facet_basis": (
                    f"counts over the top {facets.depth} candidates"
                    if facets.candidates >= facets.depth
                    else f"counts over all {facets.candidates} candidate"
                    + ("s" * (facets.candidates != 1)))}

    @api.get("/", include_in_schema=False)
    def search_page(q: Q = "", mode: Mode = "", expand: Expand = False) -> HTMLResponse:
        return _page(env, "search.html", modes=MODES, **hits_context(q, mode, expand))

    @api.get("/ui/hits", include_in_schema=False)
    def hits_fragment(q: Q = "", mode: Mode = "", expand: Expand = False) -> HTMLResponse:
        return _page(env, "_hits.html", **hits_context(q, mode, expand))

    @api.get("/note/{id}", include_in_schema=False, response_model=None)
    def note_page(id: Annotated[str, Path(min_length=1, max_length=200)]
                  ) -> HTMLResponse | RedirectResponse:
        try:
            view = cairn.doors.get(id)
        except CairnError as exc:
            return _page(env, "error.html", 404, message=str(exc))
        if isinstance(view, UnitView):
            return RedirectResponse(note_href(view.unit.document_id, view.unit.id), 303)
        if isinstance(view, FileView):
            return _page(env, "file.html", view=view)
        text = None
        if doc_is_file(view):
            try:
                text = cairn.doors.document_text(view.document.id)
            except CairnError:
                text = None  # the file went away: show the indexed bodies
        return _page(env, "note.html", **note_context(view, text, editor_url))

    @api.get("/graph/{id}", include_in_schema=False)
    def graph_page(id: Annotated[str, Path(min_length=1, max_length=200)],
                   hops: Annotated[int, Query(ge=1, le=3)] = 1) -> HTMLResponse:
        try:
            view = cairn.doors.get(id)
        except CairnError as exc:
            return _page(env, "error.html", 404, message=str(exc))
        title = (view.document.title if isinstance(view, DocumentView)
                 else view.unit.title if isinstance(view, UnitView) else view.path)
        return _page(env, "graph.html", headers=GRAPH_HEADERS, id=id, title=title, hops=hops)

    @api.get("/ui/graph.json", include_in_schema=False)
    def graph_json(node: Annotated[str, Query(min_length=1, max_length=4096)],
                   hops: Annotated[int, Query(ge=1, le=3)] = 1) -> Response:
        text = cairn.graph.export("cytoscape", around=cairn.doors.confine(node), hops=hops)
        capped = cap_graph(json.loads(text), node)
        return Response(json.dumps(capped), media_type="application/json", headers=HEADERS)

    mount_conversations(api, cairn, lambda name, status=200, **ctx: _page(
        env, name, status, **ctx))
    mount_live(api, cairn)

    @api.get("/status", include_in_schema=False)
    def status_page() -> HTMLResponse:
        return _page(env, "status.html", stats=cairn.stats(), roots=cairn.roots())

    @api.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response(status_code=204)  # no icon, and no 404 in the browser console

    @api.get("/static/{name}", include_in_schema=False)
    def static_file(name: Annotated[str, Path(pattern=r"^[a-z0-9][a-z0-9_.-]*$")]
                    ) -> Response:
        suffix = name[name.rfind("."):] if "." in name else ""
        item = static / name
        if suffix not in STATIC_TYPES or not item.is_file():
            raise NotFound(f"{name}: no such file")
        return Response(item.read_bytes(), media_type=STATIC_TYPES[suffix],
                        headers={"X-Content-Type-Options": "nosniff",
                                 "Cache-Control": "max-age=300"})


def doc_is_file(view: DocumentView) -> bool:
    """Whether the document's file is its source text (Markdown, Org, plain text), as
    opposed to one conversation of a chat export."""
    return view.document.format in note_formats()


def _trail(doc_title: str, outline: tuple[str, ...], title: str) -> list[str]:
    """The outline path shown above a hit: the document title, then the headings above
    the hit (repeats and the hit's own title left out)."""
    out: list[str] = []
    for part in (doc_title, *outline):
        if part and (not out or out[-1] != part):
            out.append(part)
    if out and out[-1] == title:
        out.pop()
    return out if len(out) > 1 or (out and out[0] != title) else []


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
