"""The web UI of ``cairn serve``: server-rendered pages (search, note, graph,
conversations, status) with a little JavaScript, mounted on the HTTP API's FastAPI app
by :func:`cairn.interfaces.api.app.create_app` (see :func:`.routes.mount`; one route
module per page in ``routes/``, the note page's rendering in :mod:`.note_view`).

Templates and static files ship inside this package (no build step, nothing fetched
at run time)."""
