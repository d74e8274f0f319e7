"""ChatGPT ``conversations.json``: one conversation object → :class:`Conversation`.

Follows CHAT-FORMATS.md "ChatGPT" (after the unofficial convoviz spec):

* The tree is ``mapping`` (node id → {message, parent, children}). Roots are nodes whose
  parent is null or not in the mapping. The canonical branch is the walk from
  ``current_node`` up through ``parent``, reversed; without a usable ``current_node``
  it ends at the most recent leaf (latest message ``create_time``; case 030). A cycle or
  a parent missing from the mapping ends the walk with a warning.
* Every other node is an *alternate* (regenerations, edits), emitted after the
  canonical messages in depth-first order from the roots, marked ``alternate``.
* Hiding rules (convoviz §7): a node is a message unit when its message exists, is not
  ``is_visually_hidden_from_conversation``, is not a ``system`` message (unless
  ``is_user_system_message``), is not an assistant tool call (``recipient`` not
  ``all``; except code sent to ``python`` and Canvas ``canmore.*`` documents, which are
  kept because the code or document only exists there), is not a tool message other than
  ``execution_output``, ``tether_quote``, ``sonic_webpage`` or ``multimodal_text``, is
  not ``thoughts``, ``reasoning_recap``, ``tether_browsing_display`` or
  ``user_editable_context``, is not a reasoning-model preamble (``channel:
  commentary`` with ``is_thinking_preamble_message``), and has some text.
* Content types: ``text`` (non-empty parts; an object part, which a text message
  should not hold, is kept as its text or a placeholder such as ``[image]``, with a
  warning naming the message), ``multimodal_text`` (strings; images as ``[image]``
  with the pointer kept in ``extra["images"]``; audio transcriptions),
  ``code`` (the code, ``language`` set, kind ``code``), ``execution_output``,
  ``tether_quote`` / ``sonic_webpage`` (title, URL, quoted text). Unknown types keep any
  string ``parts``/``text``/``result`` and add a warning; a null content is a warning.
* Citation markers (``【6†source】``, private-use ``\\ue200…\\ue201``) are removed from
  the text; cited URLs become :class:`cairn.model.Link` values (kind ``url``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from cairn.formats.chats._common import (
    Conversation,
    ConversationBuilder,
    ConversationError,
    Message,
    walk_up,
    with_files,
)
from cairn.formats.chats._times import epoch_seconds, iso_from_epoch
from cairn.formats.chats._values import as_dict, as_list, as_str
from cairn.model import URL, Link

_CITATION = re.compile(
    r"【[^【】]{0,300}】|【[^【】]{0,300}\Z|[【】]|\ue200[^\ue201]{0,300}\ue201|[\ue200-\ue2ff]"
)
_MARKER = re.compile(r"[【】\ue200-\ue2ff]")
_SHOWN_TOOL_TYPES = frozenset(
    {"execution_output", "tether_quote", "sonic_webpage", "multimodal_text"}
)
_HIDDEN_TYPES = frozenset(
    {
        "thoughts",
        "reasoning_recap",
        "tether_browsing_display",
        "user_editable_context",
        "model_editable_context",
    }
)
_KNOWN_TYPES = (
    frozenset(
        {
            "text",
            "multimodal_text",
            "code",
            "execution_output",
            "tether_quote",
            "sonic_webpage",
            "system_error",
        }
    )
    | _HIDDEN_TYPES
)


def is_chatgpt(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` looks like one ChatGPT conversation (has a ``mapping``, or the
    ChatGPT conversation fields without one, as in a "Corrupted entry")."""
    if "mapping" in obj:
        return True
    return (
        "current_node" in obj
        or ("create_time" in obj and "conversation_id" in obj)
        or ("default_model_slug" in obj and "title" in obj)
    )


def conversation_label(obj: dict[str, Any]) -> str:
    """``<id> ("<title>")`` for failure messages."""
    cid = as_str(obj.get("id")) or as_str(obj.get("conversation_id")) or "?"
    title = as_str(obj.get("title"))
    return f'{cid} ("{title}")' if title else cid


def _strip_citations(text: str) -> str:
    if not _MARKER.search(text):
        return text
    return _CITATION.sub("", text)


def _links(meta: dict[str, Any]) -> list[Link]:
    links: list[Link] = []
    seen: set[str] = set()
    for cit in as_list(meta.get("citations")):
        cm = as_dict(as_dict(cit).get("metadata"))
        url = as_str(cm.get("url"))
        if url and url not in seen:
            seen.add(url)
            links.append(Link(kind=URL, target=url, alias=as_str(cm.get("title")), raw=url))
    for ref in as_list(meta.get("content_references")):
        for item in as_list(as_dict(ref).get("items")):
            url = as_str(as_dict(item).get("url"))
            if url and url not in seen:
                seen.add(url)
                links.append(
                    Link(kind=URL, target=url, alias=as_str(as_dict(item).get("title")), raw=url)
                )
    return links


def _part_text(part: dict[str, Any], images: list[str]) -> str:
    """The text of one object part: an image or audio placeholder, a transcription,
    its ``text``, else ``[<content type>]`` (``[attachment]`` without one)."""
    ptype = as_str(part.get("content_type"))
    if ptype == "image_asset_pointer":
        images.append(as_str(part.get("asset_pointer")) or "")
        prompt = as_str(as_dict(as_dict(part.get("metadata")).get("dalle")).get("prompt"))
        return f"[image: {prompt}]" if prompt else "[image]"
    if ptype == "audio_asset_pointer":
        return "[audio]"
    text = as_str(part.get("text"))
    if text and text.strip():
        return text
    if ptype == "audio_transcription":
        return ""  # an empty transcription: nothing was said
    return f"[{ptype}]" if ptype else "[attachment]"


def _parts(content: dict[str, Any], extra: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(texts, object part types) of ``content.parts``: strings as they are, object parts
    (image pointers, transcriptions, anything else) as :func:`_part_text` reads them."""
    out: list[str] = []
    images: list[str] = []
    kinds: list[str] = []
    for part in as_list(content.get("parts")):
        if isinstance(part, str):
            if part.strip():
                out.append(part)
        elif isinstance(part, dict):
            kinds.append(as_str(part.get("content_type")) or "object")
            text = _part_text(part, images)
            if text:
                out.append(text)
    if images:
        extra["images"] = images
    return out, kinds


def _salvage(content: dict[str, Any], extra: dict[str, Any]) -> str:
    parts, _ = _parts(content, extra)
    for key in ("text", "result"):
        value = content.get(key)
        if isinstance(value, str) and value.strip():
            parts.append(value)
    return "\n\n".join(parts)


def _content_text(
    content: dict[str, Any], extra: dict[str, Any], links: list[Link]
) -> tuple[str, str | None, str | None, str | None]:
    """(text, language, kind_hint, warning) of a message content."""
    ctype = content.get("content_type")
    if ctype in ("text", "multimodal_text"):
        parts, kinds = _parts(content, extra)
        warning = None
        if ctype == "text" and kinds:
            # a text message's parts are strings; an object part (an image pointer, a
            # tool's payload) is kept as text or a placeholder, and said
            warning = (
                f"{len(kinds)} part(s) of a text message are objects "
                f"({', '.join(sorted(set(kinds)))}); kept as text or placeholders"
            )
        return "\n\n".join(parts), None, None, warning
    if ctype == "code":
        lang = as_str(content.get("language"))
        if lang == "unknown":
            lang = None
        return str(content.get("text") or ""), lang, "code", None
    if ctype == "execution_output":
        return str(content.get("text") or ""), None, "reference", None
    if ctype in ("tether_quote", "sonic_webpage"):
        url = as_str(content.get("url"))
        title = as_str(content.get("title"))
        if url:
            links.append(Link(kind=URL, target=url, alias=title, raw=url))
        pieces = [x for x in (title, url, as_str(content.get("text"))) if x]
        return "\n".join(pieces), None, "reference", None
    if ctype == "system_error":
        return str(content.get("text") or ""), None, "reference", None
    text = _salvage(content, extra)
    warning = f"unknown content type {ctype!r}" + ("; text salvaged" if text else "; no text")
    return text, None, None, warning


def _canmore(text: str) -> str:
    """The document of a Canvas ``canmore.*`` call (JSON {name, type, content}) as text."""
    try:
        doc = json.loads(text)
    except ValueError:
        return text
    if not isinstance(doc, dict):
        return text
    name = as_str(doc.get("name")) or as_str(doc.get("title"))
    body = as_str(doc.get("content"))
    updates = [as_str(as_dict(u).get("replacement")) for u in as_list(doc.get("updates"))]
    pieces = [f"[canvas: {name}]" if name else "[canvas]"]
    if body:
        pieces.append(body)
    pieces.extend(u for u in updates if u)
    return "\n\n".join(pieces)


def _visible(msg: dict[str, Any]) -> bool:
    meta = as_dict(msg.get("metadata"))
    if meta.get("is_visually_hidden_from_conversation"):
        return False
    role = as_dict(msg.get("author")).get("role")
    content = as_dict(msg.get("content"))
    ctype = content.get("content_type")
    if ctype in _HIDDEN_TYPES:
        return False
    if role == "system":
        return bool(meta.get("is_user_system_message"))
    recipient = msg.get("recipient")
    if role == "assistant" and recipient not in (None, "all"):
        rec = str(recipient)
        return ctype == "code" and (rec == "python" or rec.startswith("canmore."))
    if role == "tool":
        return ctype in _SHOWN_TOOL_TYPES or ctype not in _KNOWN_TYPES
    return not (msg.get("channel") == "commentary" and meta.get("is_thinking_preamble_message"))


def _role(msg: dict[str, Any]) -> str:
    role = as_dict(msg.get("author")).get("role")
    return role if role in ("user", "assistant", "system", "tool") else "assistant"


def read(obj: dict[str, Any]) -> Conversation:
    """One ChatGPT conversation object → :class:`Conversation`.

    Raises:
        ConversationError: no ``mapping`` (e.g. a "Corrupted entry") or a mapping that
            is not an object.
    """
    cid = as_str(obj.get("id")) or as_str(obj.get("conversation_id"))
    if cid is None:
        raise ConversationError("no conversation id")
    mapping = obj.get("mapping")
    if not isinstance(mapping, dict):
        raise ConversationError("no message mapping (entry is incomplete or corrupted)")
    warnings: list[str] = []
    nodes: dict[str, dict[str, Any]] = {
        str(k): v for k, v in mapping.items() if isinstance(v, dict)
    }

    def parent_of(nid: str) -> str | None:
        p = nodes[nid].get("parent")
        return p if isinstance(p, str) else None

    def ctime(nid: str) -> float:
        t = epoch_seconds(as_dict(nodes[nid].get("message")).get("create_time"))
        return float("-inf") if t is None else t

    # the leaf of the canonical branch
    leaf = obj.get("current_node")
    if not (isinstance(leaf, str) and leaf in nodes):
        if leaf is not None:
            warnings.append(f"current_node {leaf!r} is not in the mapping; using the latest leaf")
        leaves = [
            n
            for n, v in nodes.items()
            if not any(isinstance(c, str) and c in nodes for c in as_list(v.get("children")))
        ]
        pool = leaves or list(nodes)
        leaf = max(reversed(pool), key=ctime) if pool else None
    def known_parent(node: str) -> str | None:
        parent = parent_of(node)
        if parent is not None and parent not in nodes:
            warnings.append(
                f"parent {parent!r} of node {node!r} is not in the mapping; branch starts there"
            )
            return None
        return parent

    start = leaf if isinstance(leaf, str) else None
    cycle = "cycle in the message tree at node {!r}; walk stopped"
    path = walk_up(start, known_parent, warnings, cycle)[::-1]
    on_path = set(path)

    # alternates: depth-first from the roots, then anything unreachable
    roots = [n for n in nodes if parent_of(n) is None or parent_of(n) not in nodes]
    order: list[str] = []
    visited: set[str] = set()
    stack = list(reversed(roots))
    while stack:
        n = stack.pop()
        if n in visited:
            continue
        visited.add(n)
        order.append(n)
        kids = [c for c in as_list(nodes[n].get("children")) if isinstance(c, str) and c in nodes]
        stack.extend(reversed(kids))
    order.extend(n for n in nodes if n not in visited)
    alternates = [n for n in order if n not in on_path]

    conv_time = iso_from_epoch(obj.get("create_time"))
    conv_model = as_str(obj.get("default_model_slug"))
    visible_cache: dict[str, bool] = {}

    def visible(nid: str) -> bool:
        if nid not in visible_cache:
            m = nodes[nid].get("message")
            visible_cache[nid] = isinstance(m, dict) and _visible(m)
        return visible_cache[nid]

    def depth(nid: str) -> int:
        count, cur, steps = 0, parent_of(nid), 0
        while cur is not None and cur in nodes and steps < len(nodes):
            count += visible(cur)
            cur, steps = parent_of(cur), steps + 1
        return count

    conv = ConversationBuilder("chatgpt", "chatgpt", cid, warnings)
    for alternate, nids in ((False, path), (True, alternates)):
        for nid in nids:
            raw = nodes[nid].get("message")
            if raw is None:
                continue
            if not isinstance(raw, dict):
                warnings.append(f"node {nid!r}: message is not an object; skipped")
                continue
            mid = as_str(raw.get("id")) or nid
            if raw.get("content") is None:
                if _visible({**raw, "content": {}}):
                    warnings.append(f"message {mid!r}: null content; skipped")
                continue
            if not isinstance(raw.get("content"), dict):
                warnings.append(f"message {mid!r}: content is not an object; skipped")
                continue
            if not visible(nid):
                continue
            msg = _message(raw, mid, conv_time, conv_model, warnings)
            if msg is None:
                continue
            for att in as_list(as_dict(raw.get("metadata")).get("attachments")):
                name = as_str(as_dict(att).get("name"))
                if name:
                    conv.names.append(name)
            msg.alternate = alternate
            msg.position = depth(nid) if alternate else conv.position
            parent = parent_of(nid)
            steps = 0
            while parent is not None and parent in nodes and steps < len(nodes):
                pm = nodes[parent].get("message")
                if visible(parent) and isinstance(pm, dict):
                    msg.extra["parent_message_id"] = as_str(pm.get("id")) or parent
                    break
                parent, steps = parent_of(parent), steps + 1
            conv.add(msg)

    metadata: dict[str, Any] = {}
    for key in (
        "gizmo_id",
        "gizmo_type",
        "is_archived",
        "is_starred",
        "conversation_origin",
        "memory_scope",
        "conversation_template_id",
        "async_status",
    ):
        value = obj.get(key)
        if value is not None and isinstance(value, str | bool | int | float):
            metadata[key] = value
    if as_str(obj.get("conversation_id")) and obj.get("conversation_id") != cid:
        metadata["conversation_id_field"] = obj["conversation_id"]
    return conv.build(
        as_str(obj.get("title")),
        created=conv_time,
        modified=iso_from_epoch(obj.get("update_time")),
        model=conv_model or next((m.model for m in conv.messages if m.model), None),
        metadata=metadata,
    )


def _message(
    raw: dict[str, Any],
    mid: str,
    conv_time: str | None,
    conv_model: str | None,
    warnings: list[str],
) -> Message | None:
    content = as_dict(raw.get("content"))
    meta = as_dict(raw.get("metadata"))
    author = as_dict(raw.get("author"))
    extra: dict[str, Any] = {}
    links = _links(meta)
    text, language, hint, warning = _content_text(content, extra, links)
    if warning:
        warnings.append(f"message {mid!r}: {warning}")
    recipient = raw.get("recipient")
    if isinstance(recipient, str) and recipient.startswith("canmore."):
        text = _canmore(text)
        hint, language = None, None
        extra["canvas"] = recipient
    text = _strip_citations(text)
    own = text
    attachments = [as_str(as_dict(a).get("name")) for a in as_list(meta.get("attachments"))]
    files = [a for a in attachments if a]
    if files:
        extra["attachments"] = files
        text = with_files(text, files)
        if not own.strip():
            hint = "reference"
    if not text.strip():
        return None
    if content.get("content_type") == "multimodal_text" and not own.replace("[image]", "").strip():
        hint = "reference"
    name = as_str(author.get("name"))
    if name:
        extra["name"] = name
    for key in ("status", "channel"):
        value = raw.get(key)
        if isinstance(value, str) and value not in ("finished_successfully",):
            extra[key] = value
    if meta.get("is_user_system_message"):
        extra["user_system_message"] = True
        hint = "reference"
    finish = as_str(as_dict(meta.get("finish_details")).get("type"))
    if finish and finish not in ("stop", "unknown"):
        extra["finish"] = finish
    time = iso_from_epoch(raw.get("create_time"))
    if time is None and conv_time is not None:
        extra["time_estimated"] = True  # null create_time: the conversation's is used
    ctype = content.get("content_type")
    if ctype not in (None, "text"):
        extra["content_type"] = ctype
    return Message(
        role=_role(raw),
        text=text,
        time=time or conv_time,
        message_id=mid,
        model=as_str(meta.get("model_slug")) or as_str(meta.get("default_model_slug")),
        language=language,
        kind_hint=hint,
        own_text=own,
        links=links,
        extra=extra,
    )
