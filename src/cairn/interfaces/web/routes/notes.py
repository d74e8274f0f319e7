"""The note page, ``/note/{id}``: a document rendered (:mod:`..note_view`), a unit
redirected to its place in its document, a non-note file listed with what links to it."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from cairn.errors import CairnError
from cairn.interfaces.web.note_view import doc_is_file, note_context
from cairn.interfaces.web.render import note_href
from cairn.interfaces.web.routes.common import Id, cairn_of, editor_url_of, page
from cairn.model import FileView, UnitView

router = APIRouter(include_in_schema=False)


@router.get("/note/{id}", response_model=None)
def note_page(id: Id, request: Request) -> HTMLResponse | RedirectResponse:
    """The document ``id``; a unit id redirects (303) to its document's page at the
    unit; an id the index does not know is a 404 page."""
    cairn = cairn_of(request)
    try:
        view = cairn.doors.get(id)
    except CairnError as exc:
        return page("error.html", 404, message=str(exc))
    if isinstance(view, UnitView):
        return RedirectResponse(note_href(view.unit.document_id, view.unit.id), 303)
    if isinstance(view, FileView):
        return page("file.html", view=view)
    text = None
    if doc_is_file(view):
        try:
            text = cairn.doors.document_text(view.document.id)
        except CairnError:
            text = None  # the file went away: show the indexed bodies
    return page("note.html", **note_context(view, text, editor_url_of(request)))
