"""``cairn serve``: the HTTP API (FastAPI on uvicorn) over one :class:`Cairn`.

:func:`cairn.interfaces.api.app.create_app` wires the application: the routers of
:mod:`.routes` (one module per resource, routes under ``/v1``, ``/healthz``,
``/metrics``; OpenAPI at ``/openapi.json``), the error answers of :mod:`.errors`, and
:mod:`.guard` in front (Host/Origin allowlist, bearer token and size limits from
:mod:`.security`; the JSON request log and the Prometheus metrics of :mod:`.observe`).
Importing this package imports neither FastAPI nor uvicorn.
"""
