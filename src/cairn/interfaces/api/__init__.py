"""``cairn serve``: the HTTP API (FastAPI on uvicorn) over one :class:`Cairn`.

:func:`cairn.interfaces.api.app.create_app` builds the application (routes under
``/v1``, ``/healthz``, ``/metrics``, OpenAPI at ``/openapi.json``);
:mod:`.security` holds the checks every request passes (Host/Origin allowlist, bearer
token, size limits) and :mod:`.observe` the JSON request log and the Prometheus
metrics. Importing this package imports neither FastAPI nor uvicorn.
"""
