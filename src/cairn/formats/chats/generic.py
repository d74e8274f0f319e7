"""Other chat exports, imported as format ``chat`` with ``metadata["provider"]`` naming
the tool (CHAT-FORMATS.md "Other formats worth supporting later"):

* **LibreChat** (``{conversationId, title, options, messages[]}``): messages form a tree,
  nested in ``children`` (``recursive: true``) or flat with ``parentMessageId``. The
  export names no current leaf, so the canonical branch follows the **last** child at
  each step (LibreChat appends regenerations); every other message is an alternate.
  ``isCreatedByUser`` → ``user``, else ``assistant``; text from ``text`` or ``content``
  text parts (``think`` parts hidden).
* **Open WebUI** (``{id, title, chat{history{currentId, messages{}}}}``): the canonical
  branch is the ``parentId`` walk from ``currentId`` (else the latest leaf by
  ``timestamp``); ``<details type="reasoning">`` is hidden, other ``<details>`` (tool
  calls) keep their inner text without the summary.
* **Chatbot UI** (``{id, name, messages[{role, content}], model, prompt}``) and any
  similar linear ``{title|name, messages[{role, content}]}`` chat: messages in order, no
  times, no message ids.
"""

from __future__ import annotations

import html
import re
from typing import Any

from cairn.formats.chats._common import (
    Conversation,
    ConversationBuilder,
    ConversationError,
    Message,
    walk_up,
)
from cairn.formats.chats._times import epoch_seconds, iso_from_epoch, iso_from_text
from cairn.formats.chats._values import as_dict, as_list, as_str

_CONV_TIMES = ("created_at", "create_time", "timestamp")
_IMAGE_WORDS = ("alt", "alt_text", "caption", "description", "name")
_ZERO_UUID = "00000000-0000-0000-0000-000000000000"
_DETAILS = re.compile(r"<details\b([^>]*)>(.*?)</details>", re.DOTALL | re.IGNORECASE)
_SUMMARY = re.compile(r"<summary\b[^>]*>.*?</summary>", re.DOTALL | re.IGNORECASE)


def _role(value: Any) -> str:
    role = str(value or "").lower()
    if role in ("user", "human"):
        return "user"
    if role in ("system", "tool"):
        return role
    return "assistant"


# --- LibreChat ------------------------------------------------------------------------


def is_librechat(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` is a LibreChat conversation export."""
    return "conversationId" in obj and isinstance(obj.get("messages"), list)


def _librechat_text(msg: dict[str, Any]) -> str:
    text = as_str(msg.get("text"))
    if text:
        return text
    pieces: list[str] = []
    for part in as_list(msg.get("content")):
        p = as_dict(part)
        if p.get("type") != "text":
            continue
        t = p.get("text")
        if isinstance(t, dict):
            t = t.get("value")
        if isinstance(t, str) and t.strip():
            pieces.append(t)
    return "\n\n".join(pieces)


def read_librechat(obj: dict[str, Any], fallback_id: str) -> Conversation:
    """A LibreChat export → :class:`Conversation` (see the module docstring).

    Raises:
        ConversationError: ``messages`` is not a list.
    """
    raw = obj.get("messages")
    if not isinstance(raw, list):
        raise ConversationError("messages is not a list")
    cid = as_str(obj.get("conversationId")) or fallback_id
    warnings: list[str] = []
    nodes: dict[str, dict[str, Any]] = {}
    parent: dict[str, str | None] = {}
    children: dict[str, list[str]] = {}
    order: list[str] = []
    stack: list[tuple[dict[str, Any], str | None]] = [
        (m, None) for m in reversed(raw) if isinstance(m, dict)
    ]
    while stack:
        msg, nested_parent = stack.pop()
        mid = as_str(msg.get("messageId")) or f"{cid}:{len(order)}"
        if mid in nodes:
            warnings.append(f"message {mid!r} appears twice; second copy skipped")
            continue
        nodes[mid] = msg
        order.append(mid)
        parent[mid] = nested_parent or as_str(msg.get("parentMessageId"))
        stack.extend(
            (c, mid) for c in reversed(as_list(msg.get("children"))) if isinstance(c, dict)
        )
    for mid in order:
        p = parent[mid]
        if p is not None and p in nodes and p != mid:
            children.setdefault(p, []).append(mid)
        else:
            parent[mid] = None
    roots = [m for m in order if parent[m] is None]
    path: list[str] = []
    seen: set[str] = set()
    cur: str | None = roots[-1] if roots else None
    while cur is not None and cur not in seen:
        seen.add(cur)
        path.append(cur)
        kids = children.get(cur, [])
        cur = kids[-1] if kids else None
    options = as_dict(obj.get("options"))
    model = as_str(options.get("model"))
    conv = ConversationBuilder("chat", "librechat", cid, warnings)
    for alternate, ids in ((False, path), (True, [m for m in order if m not in seen])):
        for mid in ids:
            msg = nodes[mid]
            text = _librechat_text(msg)
            if not text.strip():
                continue
            user = bool(msg.get("isCreatedByUser"))
            extra: dict[str, Any] = {}
            if as_str(msg.get("sender")):
                extra["sender"] = msg["sender"]
            depth, p, steps = 0, parent[mid], 0
            while p is not None and steps < len(nodes):
                depth, p, steps = depth + 1, parent[p], steps + 1
            conv.add(
                Message(
                    role="user" if user else "assistant",
                    text=text,
                    time=iso_from_text(msg.get("createdAt")),
                    message_id=mid,
                    model=None if user else (as_str(msg.get("model")) or model),
                    alternate=alternate,
                    position=depth,
                    extra=extra,
                )
            )
    times = [m.time for m in conv.messages if m.time]
    metadata: dict[str, Any] = {"endpoint": as_str(obj.get("endpoint"))}
    if as_str(options.get("chatGptLabel")):
        metadata["assistant_label"] = options["chatGptLabel"]
    return conv.build(
        as_str(obj.get("title")),
        created=times[0] if times else None,
        modified=max(times, default=None),
        model=model,
        metadata=metadata,
    )


# --- Open WebUI -----------------------------------------------------------------------


def is_openwebui(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` is an Open WebUI chat record."""
    chat = as_dict(obj.get("chat"))
    return isinstance(chat.get("history"), dict) or isinstance(chat.get("messages"), list)


def _openwebui_text(content: str) -> str:
    def repl(m: re.Match[str]) -> str:
        if 'type="reasoning"' in m.group(1):
            return ""
        inner = html.unescape(_SUMMARY.sub("", m.group(2))).strip()
        return f"{inner}\n\n" if inner else ""

    return _DETAILS.sub(repl, content).strip()


def read_openwebui(obj: dict[str, Any]) -> Conversation:
    """An Open WebUI chat record → :class:`Conversation` (see the module docstring).

    Raises:
        ConversationError: no id, or no message history.
    """
    cid = as_str(obj.get("id"))
    if cid is None:
        raise ConversationError("no chat id")
    chat = as_dict(obj.get("chat"))
    history = as_dict(chat.get("history"))
    raw_nodes = as_dict(history.get("messages"))
    warnings: list[str] = []
    nodes: dict[str, dict[str, Any]] = {k: v for k, v in raw_nodes.items() if isinstance(v, dict)}
    if not nodes:
        linear = [m for m in as_list(chat.get("messages")) if isinstance(m, dict)]
        nodes = {as_str(m.get("id")) or f"{cid}:{i}": m for i, m in enumerate(linear)}
        prev: str | None = None
        for k, m in nodes.items():
            m.setdefault("parentId", prev)
            prev = k

    def par(n: str) -> str | None:
        p = nodes[n].get("parentId")
        return p if isinstance(p, str) and p in nodes else None

    leaf = history.get("currentId")
    if not (isinstance(leaf, str) and leaf in nodes):
        has_child = {par(n) for n in nodes}
        leaves = [n for n in nodes if n not in has_child] or list(nodes)

        def ts(n: str) -> float:
            t = epoch_seconds(nodes[n].get("timestamp"))
            return float("-inf") if t is None else t

        leaf = max(reversed(leaves), key=ts) if leaves else None
    start = leaf if isinstance(leaf, str) else None
    path = walk_up(start, par, warnings, "cycle in the message tree at {!r}; walk stopped")[::-1]
    seen = set(path)
    conv = ConversationBuilder("chat", "openwebui", cid, warnings)
    for alternate, ids in ((False, path), (True, [n for n in nodes if n not in seen])):
        for n in ids:
            m = nodes[n]
            content = m.get("content")
            text = _openwebui_text(content) if isinstance(content, str) else ""
            files = [as_str(as_dict(f).get("name")) for f in as_list(m.get("files"))]
            names = [f for f in files if f]
            if names:
                text = "\n\n".join([text, *(f"[file: {f}]" for f in names)]).strip()
            if not text:
                continue
            conv.add(
                Message(
                    role=_role(m.get("role")),
                    text=text,
                    time=iso_from_epoch(m.get("timestamp")),
                    message_id=n,
                    model=as_str(m.get("model")),
                    alternate=alternate,
                    position=conv.position if not alternate else None,
                )
            )
    models = [x for x in as_list(chat.get("models")) if isinstance(x, str)]
    metadata: dict[str, Any] = {}
    for key in ("archived", "pinned"):
        if isinstance(obj.get(key), bool):
            metadata[key] = obj[key]
    return conv.build(
        as_str(obj.get("title")) or as_str(chat.get("title")),
        created=iso_from_epoch(obj.get("created_at")),
        modified=iso_from_epoch(obj.get("updated_at")),
        model=models[0] if models else None,
        metadata=metadata,
    )


# --- Chatbot UI and linear chats ------------------------------------------------------


def is_linear(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` is a linear chat: a ``messages`` list of {role, content}."""
    msgs = obj.get("messages")
    if not isinstance(msgs, list):
        return False
    first = next((m for m in msgs if isinstance(m, dict)), None)
    return first is None or ("role" in first and "content" in first)


def _linear_content(content: Any) -> str:
    """A linear chat message's text: a string, or a list of parts (text parts' text; an
    image part as ``[image: <alt text or caption>]`` or ``[image]``)."""
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    for raw in as_list(content):
        p = as_dict(raw)
        if as_str(p.get("text")):
            pieces.append(str(p["text"]))
        elif str(p.get("type") or "").startswith(("image", "input_image")):
            words = next((as_str(p.get(k)) for k in _IMAGE_WORDS if as_str(p.get(k))), None)
            pieces.append(f"[image: {words}]" if words else "[image]")
    return "\n\n".join(pieces)


def read_linear(obj: dict[str, Any], fallback_id: str) -> Conversation:
    """A Chatbot UI history entry (or any ``{messages[{role, content}]}`` chat) →
    :class:`Conversation`. A message's ``name`` (the OpenAI message field naming a
    participant) is its speaker; a message without a time of its own takes the
    conversation's (``created_at``, ``create_time`` or ``timestamp``), as a session of a
    long conversation is dated once."""
    cid = as_str(obj.get("id")) or fallback_id
    model_obj = obj.get("model")
    chatbotui = isinstance(model_obj, dict) and "prompt" in obj
    conv = ConversationBuilder("chat", "chatbotui" if chatbotui else "chat", cid)
    created = next(
        (t for t in (iso_from_text(obj.get(k)) for k in _CONV_TIMES) if t), None
    )
    for raw in as_list(obj.get("messages")):
        m = as_dict(raw)
        content = _linear_content(m.get("content"))
        if not content.strip():
            continue
        extra: dict[str, Any] = {}
        speaker = as_str(m.get("name"))
        if speaker and speaker.strip():
            extra["speaker"] = " ".join(speaker.split())[:80]
        time = iso_from_text(m.get("timestamp") or m.get("created_at"))
        if time is None and created is not None:
            time, extra["time_from"] = created, "conversation"
        conv.add(
            Message(
                role=_role(m.get("role")),
                text=content,
                time=time,
                message_id=as_str(m.get("id")),
                position=conv.position,
                extra=extra,
            )
        )
    model = as_str(as_dict(model_obj).get("id")) or as_str(model_obj)
    metadata: dict[str, Any] = {}
    if as_str(obj.get("prompt")):
        metadata["system_prompt"] = obj["prompt"]
    if isinstance(obj.get("temperature"), int | float):
        metadata["temperature"] = obj["temperature"]
    return conv.build(
        as_str(obj.get("name")) or as_str(obj.get("title")),
        created=created,
        model=model,
        metadata=metadata,
        label="chat",
    )
