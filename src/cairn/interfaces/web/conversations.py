"""The conversations pages: ``/conversations`` (every chat export's conversations,
newest first) and ``/conversation/{id}`` (one as a thread: roles, times, messages
rendered as Markdown with their code blocks, sanitised; ``?alternates=1`` shows the
branches off the canonical one; ``?q=`` searches within it and marks what it finds)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import FastAPI, Path, Query
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from cairn.app import Cairn
from cairn.errors import CairnError
from cairn.interfaces.web.render import render_markdown

PageFn = Callable[..., HTMLResponse]


def _no_links(target: str) -> str | None:
    return None  # a chat message's wikilinks are not resolved against the notes


def mount_conversations(api: FastAPI, cairn: Cairn, page: PageFn) -> None:
    """Add the two conversations routes to ``api``; ``page(name, status=200,
    **context)`` renders a template with the UI's headers."""

    @api.get("/conversations", include_in_schema=False)
    def conversations_page(
        offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    ) -> HTMLResponse:
        docs = cairn.conversations.list(limit=200, offset=offset)
        return page("conversations.html", docs=docs, offset=offset, more=len(docs) == 200)

    @api.get("/conversation/{id}", include_in_schema=False)
    def conversation_page(
        id: Annotated[str, Path(min_length=1, max_length=200)],
        alternates: Annotated[bool, Query()] = False,
        q: Annotated[str, Query(max_length=1000)] = "",
    ) -> HTMLResponse:
        try:
            conv = cairn.conversations.thread(id, alternates=alternates, query=q)
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
