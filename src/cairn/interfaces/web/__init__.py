"""The web UI of ``cairn serve``: server-rendered pages (search, note, status) with a
little JavaScript, mounted on the HTTP API's FastAPI app by
:func:`cairn.interfaces.api.app.create_app` (see :func:`.routes.mount`).

Templates and static files ship inside this package (no build step, nothing fetched
at run time)."""
