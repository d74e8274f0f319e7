"""One conversation as enrichment sees it: its messages and masked text, the request
that asks for its summary and insights, the enrichment made of the reply and the
units it becomes."""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cairn.model import MESSAGE, Unit

if TYPE_CHECKING:
    from cairn.enrich import Message, Task
    from cairn.enrich.settings import EnrichSettings
    from cairn.model import StoredDocument
    from cairn.model.enrich import Enrichment
    from cairn.store import Store

CONVERSATION = "conversation"


def me() -> Any:
    """``cairn.model.enrich``, loaded when enrichment is used (not by every search)."""
    from cairn.model import enrich

    return enrich


def prompt_version() -> str:
    """The version of the prompts, stored with every enrichment and relation."""
    from cairn.enrich import PROMPT_VERSION

    return PROMPT_VERSION


def mask(text: str) -> str:
    """What every text sent to a model goes through (whatever ``on_ingest`` says)."""
    from cairn.redact import Masker

    return Masker().mask(text)


@dataclass
class ChatText:
    """A conversation's canonical messages and the masked text sent to the model."""

    doc: StoredDocument
    messages: list[Message]
    text: str
    content_hash: str


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def chat_text(store: Store, doc: StoredDocument, settings: EnrichSettings) -> ChatText | None:
    """The conversation's canonical, non-empty messages and masked text (``None``: no
    message)."""
    from cairn.enrich import Message, conversation_text
    from cairn.enrich.prompts import sha256

    msgs = [
        Message(u.id, str(u.extra.get("role") or ""), u.body)
        for u in store.units_of(doc.id)
        if u.kind == MESSAGE and not u.extra.get("alternate") and u.body.strip()
    ]
    if not msgs:
        return None
    text = mask(conversation_text(doc.title, msgs, settings.max_chars))
    return ChatText(doc, msgs, text, sha256(text))


def conversation_task(c: ChatText, vocabulary: Sequence[str], settings: EnrichSettings) -> Task:
    """The request for one conversation's summary, insights and tags."""
    from cairn.enrich import Task
    from cairn.enrich.prompts import (
        CONVERSATION_SCHEMA,
        CONVERSATION_SYSTEM,
        conversation_prompt,
    )
    from cairn.enrich.schema import BadReply

    n = len(c.messages)

    def check(value: Any) -> None:
        for i, ins in enumerate(value["insights"]):
            bad = [m for m in ins["messages"] if m > n]
            if bad:
                raise BadReply(f"$.insights[{i}].messages: no message {bad[0]} (of {n})")

    return Task(
        kind=CONVERSATION,
        label=f"{c.doc.path} · {c.doc.title}",
        content_hash=c.content_hash,
        system=CONVERSATION_SYSTEM,
        user=conversation_prompt(c.text, vocabulary),
        schema=CONVERSATION_SCHEMA,
        check=check,
        max_tokens=settings.max_tokens,
        expected_output=min(settings.max_tokens, 450),
        ref=c.doc.id,
    )


def enrichment_from(
    store: Store, c: ChatText, value: Any, model: str, settings: EnrichSettings
) -> Enrichment:
    """The enrichment a valid reply describes (tags classified against the user's own)."""
    from cairn.enrich.tags import classify

    ids = [m.id for m in c.messages]
    insights = tuple(
        me().Insight(i["type"], i["text"].strip(),
                tuple(dict.fromkeys(ids[m - 1] for m in i["messages"] if 1 <= m <= len(ids))))
        for i in value["insights"]
    )
    vocabulary = store.enrichments.user_tags(10_000)
    tags = classify(value.get("tags", ()), vocabulary, settings.tag_aliases)
    made: Enrichment = me().Enrichment(c.doc.id, c.content_hash, model, prompt_version(),
                      value["summary"].strip(), insights, tags, _now())
    return made


def units_for(store: Store, document_id: str, e: Enrichment) -> list[Unit]:
    """The summary and insight units of an enrichment, after the document's own."""
    import uuid

    from cairn.enrich.prompts import short
    from cairn.ingest.ids import NAMESPACE

    derived = (me().SUMMARY, me().INSIGHT)
    own = [u for u in store.units_of(document_id) if u.kind not in derived]
    start = max((u.ordinal for u in own), default=-1) + 1
    doc = store.document(document_id)
    title = doc.title if doc is not None else ""

    def uid(n: int) -> str:
        return str(uuid.uuid5(NAMESPACE, f"enrich:{document_id}:{n}"))

    common: dict[str, Any] = {"model": e.model, "origin": "llm"}
    tags = {"llm_tags": " ".join(t.tag for t in e.tags)} if e.tags else {}
    units = [Unit(
        ordinal=start, level=1, kind=me().SUMMARY, title=f"Summary: {title}",
        outline_path=("Summary",), body=e.summary, properties=tags,
        extra={**common, "tags": [dataclasses.asdict(t) for t in e.tags]},
        id=uid(0), document_id=document_id,
    )]
    for n, ins in enumerate(e.insights, 1):
        units.append(Unit(
            ordinal=start + n, level=1, kind=me().INSIGHT,
            title=f"{ins.type.capitalize()}: {short(ins.text)}",
            outline_path=("Insights",), body=ins.text,
            properties={"insight_type": ins.type},
            extra={**common, "insight_type": ins.type, "messages": list(ins.messages)},
            id=uid(n), document_id=document_id,
        ))
    return units
