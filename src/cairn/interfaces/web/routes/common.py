"""What the web UI's route modules share: the headers of every page (:data:`HEADERS`,
its Content-Security-Policy :data:`CSP`), the one Jinja2 environment and :func:`page`
that renders a template with them, the open :class:`Cairn` of a request and the
``[web] editor_url`` of the app, and the parameters several pages take."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from fastapi import Path, Query, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, select_autoescape

from cairn.interfaces.api.routes.common import cairn_of
from cairn.interfaces.web.render import note_href

__all__ = ["CSP", "HEADERS", "Id", "cairn_of", "editor_url_of", "page"]

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

Id = Annotated[str, Path(min_length=1, max_length=200)]
"""A unit or document id in a page's path."""
Hops = Annotated[int, Query(ge=1, le=3)]
"""How far the graph page and its JSON walk from the node."""
Mode = Annotated[Literal["", "keyword", "semantic", "hybrid"], Query(
    description="keyword, semantic or hybrid (empty: the index's default)")]
Q = Annotated[str, Query(max_length=1000, description="A query in cairn's query language")]
Expand = Annotated[bool, Query(description="Re-rank by graph expansion")]


def _env() -> Environment:
    env = Environment(loader=PackageLoader("cairn.interfaces.web", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.globals["note_href"] = note_href
    return env


ENV = _env()
"""The templates of ``web/templates`` (autoescaping on); ``note_href`` is a global."""


def page(name: str, status: int = 200, headers: Mapping[str, str] = HEADERS,
         **context: Any) -> HTMLResponse:
    """The template ``name`` rendered with ``context``, answered with ``status`` and
    ``headers`` (by default :data:`HEADERS`).

    Raises:
        jinja2.TemplateNotFound: no such template.
    """
    html = ENV.get_template(name).render(**context)
    return HTMLResponse(html, status_code=status, headers=dict(headers))


def editor_url_of(request: Request) -> str | None:
    """The ``[web] editor_url`` template of "open in editor" links (``None``: none), as
    :func:`cairn.interfaces.web.routes.mount` put it on the app."""
    url: str | None = request.app.state.editor_url
    return url
