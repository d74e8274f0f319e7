"""Gemini: Google Takeout "My Activity" records and Google AI Studio prompt files.

**Takeout** (CHAT-FORMATS.md "Gemini"; case 034). ``MyActivity.json`` is a flat array of
activity records with no conversation grouping. Only records of Gemini Apps (``header``
or ``products`` name "Gemini Apps") whose ``title`` starts with ``Prompted `` (or the
older ``Asked ``) are exchanges; feedback, "Used …", "Created …" and other products'
records are skipped silently. Each exchange becomes one conversation of a user message
(the title without its prefix, or ``text`` when present) and, when ``safeHtmlItem`` has
any HTML, an assistant message (all items joined, turned into plain text by
:func:`cairn.formats.chats._html.html_to_text`). Both carry the record's ``time`` (UTC).
The record has no id, so the conversation id is ``gemini-`` + the first 16 hex digits of
SHA-256 over ``time`` and ``title`` (stable across re-imports); a
``gemini.google.com/app/<id>`` URL in the record is kept as ``metadata["gemini_app_id"]``.

**AI Studio** (``chunkedPrompt.chunks``): ``role`` user/model; text from ``text`` or
``parts[].text``; ``isThought`` chunks are hidden; ``executableCode`` becomes a fenced
block, ``codeExecutionResult`` an ``Output:`` block; ``driveDocument``, ``inlineFile``
and ``youtubeVideo`` become ``[file: …]`` / ``[video: …]`` lines; empty chunks are
skipped. Branches: of consecutive chunks answering the same ``branchParent``, the last
is canonical and the earlier ones are alternates.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from cairn.formats.chats._common import (
    Conversation,
    ConversationBuilder,
    ConversationError,
    Message,
    with_files,
)
from cairn.formats.chats._html import html_to_text
from cairn.formats.chats._text import first_words
from cairn.formats.chats._times import iso_from_text
from cairn.formats.chats._values import as_dict, as_list, as_str

PROMPT_PREFIXES = ("Prompted ", "Asked ")
_APP_URL = re.compile(r"gemini\.google\.com/app/([0-9A-Za-z_-]+)")


def is_activity(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` looks like a Google "My Activity" record (any product)."""
    return "header" in obj and "title" in obj and ("time" in obj or "products" in obj)


def is_gemini_record(obj: dict[str, Any]) -> bool:
    """Whether an activity record is a Gemini Apps record."""
    products = [p for p in as_list(obj.get("products")) if isinstance(p, str)]
    return obj.get("header") == "Gemini Apps" or "Gemini Apps" in products


def read_activity(obj: dict[str, Any]) -> Conversation | None:
    """One activity record → a one-exchange :class:`Conversation`, or ``None`` when it is
    not a Gemini prompt (other product, feedback, …)."""
    if not is_gemini_record(obj):
        return None
    title = as_str(obj.get("title")) or ""
    prefix = next((p for p in PROMPT_PREFIXES if title.startswith(p)), None)
    if prefix is None:
        return None
    prompt = as_str(obj.get("text")) or title[len(prefix) :]
    time = iso_from_text(obj.get("time"))
    raw_time = obj.get("time") if isinstance(obj.get("time"), str) else ""
    digest = hashlib.sha256(f"{raw_time}\n{title}".encode()).hexdigest()[:16]
    cid = f"gemini-{digest}"
    files: list[str] = []
    for key in ("imageFile", "attachedFiles"):
        value = obj.get(key)
        for f in [value] if isinstance(value, str) else as_list(value):
            if isinstance(f, str) and f:
                files.append(f)
    user_text = with_files(prompt, files)
    conv = ConversationBuilder("gemini", "gemini", cid, names=files)
    if user_text.strip():
        conv.add(
            Message(
                role="user",
                text=user_text,
                time=time,
                message_id=f"{cid}:prompt",
                position=0,
                own_text=prompt,
                extra={"files": files} if files else {},
            )
        )
    html = [as_str(as_dict(h).get("html")) for h in as_list(obj.get("safeHtmlItem"))]
    answer = "\n\n".join(t for t in (html_to_text(h) for h in html if h) if t)
    if answer:
        conv.add(
            Message(
                role="assistant",
                text=answer,
                time=time,
                message_id=f"{cid}:answer",
                position=conv.position,
            )
        )
    metadata: dict[str, Any] = {"activity_title": title}
    m = _APP_URL.search(json.dumps([obj.get("titleUrl"), obj.get("details")], default=str))
    if m:
        metadata["gemini_app_id"] = m.group(1)
    return conv.build(
        first_words(prompt, 12, 100) if prompt.strip() else None,
        created=time,
        modified=time,
        metadata=metadata,
    )


def is_aistudio(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` is a Google AI Studio prompt file."""
    return isinstance(obj.get("chunkedPrompt"), dict)


def _chunk_text(chunk: dict[str, Any]) -> tuple[str, list[str]]:
    pieces: list[str] = []
    files: list[str] = []
    if as_str(chunk.get("text")):
        pieces.append(str(chunk["text"]))
    for part in as_list(chunk.get("parts")):
        t = as_str(as_dict(part).get("text"))
        if t:
            pieces.append(t)
    code = as_dict(chunk.get("executableCode"))
    if as_str(code.get("code")):
        lang = (as_str(code.get("language")) or "").lower()
        pieces.append(f"```{lang}\n{code['code']}\n```")
    result = as_dict(chunk.get("codeExecutionResult"))
    if as_str(result.get("output")):
        pieces.append(f"Output:\n```\n{str(result['output']).rstrip()}\n```")
    doc = as_dict(chunk.get("driveDocument"))
    if doc:
        name = as_str(doc.get("name")) or as_str(doc.get("id")) or "document"
        files.append(name)
        pieces.append(f"[file: {name}]")
    inline = as_dict(chunk.get("inlineFile"))
    if inline:
        name = as_str(inline.get("name")) or as_str(inline.get("mimeType")) or "file"
        files.append(name)
        pieces.append(f"[file: {name}]")
    video = as_dict(chunk.get("youtubeVideo"))
    if as_str(video.get("id")):
        pieces.append(f"[video: https://www.youtube.com/watch?v={video['id']}]")
    return "\n\n".join(pieces), files


def read_aistudio(obj: dict[str, Any], fallback_id: str) -> Conversation:
    """One AI Studio prompt file → :class:`Conversation`; ``fallback_id`` (the file's
    relative path) is the id when the file has none.

    Raises:
        ConversationError: ``chunkedPrompt.chunks`` is not a list.
    """
    chunks = as_dict(obj.get("chunkedPrompt")).get("chunks")
    if not isinstance(chunks, list):
        raise ConversationError("chunkedPrompt.chunks is not a list")
    cid = as_str(obj.get("id")) or fallback_id
    created = iso_from_text(obj.get("createTime"))
    warnings: list[str] = []
    # mark superseded branch siblings: same branchParent, followed by a later sibling
    parents = [as_str(as_dict(as_dict(c).get("branchParent")).get("id")) for c in chunks]
    superseded = {
        i
        for i, p in enumerate(parents)
        if p is not None and i + 1 < len(parents) and parents[i + 1] == p
    }
    conv = ConversationBuilder("gemini", "aistudio", cid, warnings)
    for i, raw in enumerate(chunks):
        chunk = as_dict(raw)
        if not chunk:
            warnings.append(f"chunk #{i + 1} is not an object; skipped")
            continue
        if chunk.get("isThought"):
            continue
        text, files = _chunk_text(chunk)
        conv.names.extend(files)
        if not text.strip():
            continue
        role = "user" if chunk.get("role") == "user" else "assistant"
        extra: dict[str, Any] = {}
        if as_str(chunk.get("errorMessage")):
            extra["error"] = chunk["errorMessage"]
        if as_str(chunk.get("finishReason")):
            extra["finish"] = chunk["finishReason"]
        own = as_str(chunk.get("text")) or ""
        conv.add(
            Message(
                role=role,
                text=text,
                time=iso_from_text(chunk.get("createTime")),
                message_id=as_str(chunk.get("id")),
                model=as_str(as_dict(obj.get("runSettings")).get("model")),
                alternate=i in superseded,
                position=conv.position,
                kind_hint="reference" if files and not own.strip() and role == "user" else None,
                own_text=own,
                extra=extra,
            )
        )
    title = as_str(obj.get("displayName")) or as_str(obj.get("title"))
    model = as_str(as_dict(obj.get("runSettings")).get("model"))
    system = as_dict(obj.get("systemInstruction"))
    metadata: dict[str, Any] = {"source": "aistudio"}
    if as_str(system.get("text")):
        metadata["system_instruction"] = system["text"]
    return conv.build(
        title,
        created=created,
        modified=iso_from_text(obj.get("updateTime")),
        model=model,
        metadata=metadata,
        label="gemini",
    )
