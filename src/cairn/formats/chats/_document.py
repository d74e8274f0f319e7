"""The kind rule and the builder that turns a :class:`Conversation` into a
:class:`cairn.model.Document` (one preamble, one unit per message, one per fenced code
block); the unit layout is documented in :mod:`cairn.formats.chats`."""

from __future__ import annotations

import re
from typing import Any

from cairn.formats.chats._common import Conversation, Message
from cairn.formats.chats._text import CodeBlock, code_blocks, first_words, keywords_of_lower
from cairn.formats.chats._when import relative_dates
from cairn.model import CODE, MESSAGE, PREAMBLE, Diagnostic, Document, Unit

_DECISION = re.compile(
    r"\b(decided|decide to|decision|let'?s go with|we(?:'ll| will) (?:go with|use)|"
    r"i(?:'ll| will) (?:go with|use)|going with|settled on|agreed on|chose|opted for)\b"
)
_INSIGHT = re.compile(
    r"\b(key (?:insight|point|idea|takeaway)s?|takeaways?|in summary|to summari[sz]e|"
    r"in short|tl;dr|the trick is|rule of thumb|lesson learned|the main (?:point|reason|"
    r"risk|idea)|importantly|note that|the reason is)\b"
)


def message_kind(msg: Message, body: str) -> str:
    """The kind of a message, first rule that matches:

    1. ``reference``: ``kind_hint`` says so (tool results such as a quoted web page or a
       code interpreter output, a message that is only attachments or files, system
       instructions).
    2. ``code``: ``kind_hint`` is ``code`` (a code message), or fenced code blocks make
       up at least half of the body's characters.
    3. ``decision``: the body states a choice (``decided``, ``let's go with``,
       ``we'll use``, ``settled on``, ``chose``, ``opted for`` …).
    4. ``question``: the author is the user.
    5. ``insight``: an assistant message that flags a conclusion (``key insight``,
       ``in summary``, ``tl;dr``, ``rule of thumb``, ``the main reason`` …).
    6. ``answer``: any other message.
    """
    if msg.kind_hint in ("reference", "code"):
        return msg.kind_hint
    return _kind(msg, body, body.lower(), code_blocks(body))


def _kind(msg: Message, body: str, lower: str, blocks: list[CodeBlock]) -> str:
    """:func:`message_kind` with ``body.lower()`` and ``code_blocks(body)`` given, so the
    document builder computes each once per message."""
    if msg.kind_hint in ("reference", "code"):
        return msg.kind_hint
    if blocks and sum(len(b.code) for b in blocks) * 2 >= len(body.strip()):
        return "code"
    if _DECISION.search(lower):
        return "decision"
    if msg.role == "user":
        return "question"
    if msg.role == "system":
        return "reference"
    if _INSIGHT.search(lower):
        return "insight"
    return "answer"


# --- building the Document -----------------------------------------------------------


def message_title(role: str, time: str | None, position: int | None) -> str:
    """``"user · 2024-06-01 10:00"``; without a time ``"user · message 3"`` (1-based).
    ``role`` is the speaker's name where the export names one (``"Caroline · …"``)."""
    if time:
        return f"{role} · {time[:10]} {time[11:16]}"
    if position is not None:
        return f"{role} · message {position + 1}"
    return role


def _code_title(block: CodeBlock) -> str:
    for line in block.code.split("\n"):
        if line.strip():
            return f"{block.language or 'code'}: {first_words(line.strip(), 8, 60)}"
    return block.language or "code"


def build_document(conv: Conversation, relpath: str) -> Document:
    """Units of one conversation → a :class:`cairn.model.Document` (see the package
    docstring for the unit layout). Warnings are prefixed with the conversation."""
    title = conv.title.strip() or "Untitled conversation"
    label = f"conversation {conv.conversation_id}"
    body = title
    if conv.summary and conv.summary.strip():
        body = f"{title}\n\n{conv.summary.strip()}"
    units: list[Unit] = [
        Unit(
            ordinal=0,
            level=0,
            kind=PREAMBLE,
            title=title,
            outline_path=(title,),
            body=body,
            extra={"provider": conv.provider, "conversation_id": conv.conversation_id},
        )
    ]
    canonical = 0
    alternates = 0
    for msg in conv.messages:
        text = msg.text.strip("\n")
        if msg.alternate:
            alternates += 1
        else:
            canonical += 1
        lower = text.lower()  # once for the kind, the keywords and the dates
        # a code message is itself one block: its body is not split into code units
        blocks = [] if msg.kind_hint == "code" else code_blocks(text)
        kind = _kind(msg, text, lower, blocks)
        speaker = msg.extra.get("speaker")
        who = speaker if isinstance(speaker, str) and speaker else msg.role
        utitle = message_title(who, msg.time, msg.position)
        outline = (title, utitle)
        extra: dict[str, Any] = {
            "role": msg.role,
            "time": msg.time,
            "message_id": msg.message_id,
            "position": msg.position,
            "model": msg.model,
            "kind": kind,
            "keywords": keywords_of_lower(lower),
            "alternate": msg.alternate,
        }
        extra.update(msg.extra)
        parent_ordinal = len(units)
        units.append(
            Unit(
                ordinal=parent_ordinal,
                level=1,
                kind=MESSAGE,
                title=utitle,
                outline_path=outline,
                body=text,
                declared_id=msg.message_id,
                links=tuple(msg.links),
                language=msg.language,
                timestamps=relative_dates(text, msg.time, lower),
                extra=extra,
            )
        )
        for k, block in enumerate(blocks):
            ctitle = _code_title(block)
            units.append(
                Unit(
                    ordinal=len(units),
                    level=2,
                    kind=CODE,
                    title=ctitle,
                    outline_path=(*outline, ctitle),
                    body=block.code,
                    parent=parent_ordinal,
                    declared_id=f"{msg.message_id}#code-{k + 1}" if msg.message_id else None,
                    language=block.language,
                    extra={
                        "role": msg.role,
                        "time": msg.time,
                        "message_id": msg.message_id,
                        "position": msg.position,
                        "alternate": msg.alternate,
                        "block": k + 1,
                    },
                )
            )
    metadata: dict[str, Any] = {
        "provider": conv.provider,
        "conversation_id": conv.conversation_id,
        "model": conv.model,
        "messages": canonical,
        "alternates": alternates,
    }
    metadata.update(conv.metadata)
    return Document(
        path=relpath,
        format=conv.format,
        title=title,
        units=tuple(units),
        metadata=metadata,
        created=conv.created,
        modified=conv.modified or conv.created,
        declared_id=conv.conversation_id,
        key=conv.conversation_id,
        warnings=tuple(Diagnostic(relpath, f"{label}: {w}") for w in conv.warnings),
    )
