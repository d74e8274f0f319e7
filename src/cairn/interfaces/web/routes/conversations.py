"""The conversations pages: ``/conversations`` (every chat export's conversations,
newest first) and ``/conversation/{id}`` (one as a thread: roles, times, messages
rendered as Markdown with their code blocks, sanitised; ``?alternates=1`` shows the
branches off the canonical one; ``?q=`` searches within it and marks what it finds)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from cairn.errors import CairnError
from cairn.interfaces.web.render import render_markdown
from cairn.interfaces.web.routes.common import Id, cairn_of, page

router = APIRouter(include_in_schema=False)


def _no_links(target: str) -> str | None:
    return None  # a chat message's wikilinks are not resolved against the notes


@router.get("/conversations")
def conversations_page(
    request: Request,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> HTMLResponse:
    """Every chat export's conversations, newest first, 200 a page from ``offset``."""
    docs = cairn_of(request).conversations.list(limit=200, offset=offset)
    return page("conversations.html", docs=docs, offset=offset, more=len(docs) == 200)


@router.get("/conversation/{id}")
def conversation_page(
    id: Id,
    request: Request,
    alternates: Annotated[bool, Query()] = False,
    q: Annotated[str, Query(max_length=1000)] = "",
) -> HTMLResponse:
    """One conversation as a thread (its branches too with ``alternates``; the
    messages that match ``q`` marked); an unknown id is a 404 page."""
    try:
        conv = cairn_of(request).conversations.thread(id, alternates=alternates, query=q)
    except CairnError as exc:
        return page("error.html", 404, message=str(exc))
    found = set(conv.matches)
    messages: list[dict[str, Any]] = [{
        "unit": u,
        "role": str(u.extra.get("role") or ""),
        "time": str(u.extra.get("time") or ""),
        "model": str(u.extra.get("model") or ""),
        "alternate": bool(u.extra.get("alternate")),
        "match": u.id in found,
        "body": Markup(render_markdown(u.body, _no_links)),
    } for u in conv.messages]
    return page("conversation.html", conv=conv, doc=conv.document, messages=messages,
                alternates=alternates, q=q)
