"""Claude.ai ``conversations.json``: one conversation object → :class:`Conversation`.

Follows CHAT-FORMATS.md "Claude.ai": ``chat_messages`` is a linear list (no branches);
``sender`` ``human`` → ``user``; times are ISO strings (normalised to UTC ``Z``).

A message's body:

* when ``content`` blocks are present they win over ``text``: ``text`` blocks give the
  answer; ``thinking`` and ``redacted_thinking`` blocks are left out of the index
  (the model's reasoning before it answers: drafts the answer often corrects, not
  what was said — a choice stated in ``cairn index --help``), and ``text`` is then
  never used, since it holds the reasoning glued to the answer; ``tool_use`` gives
  ``[tool <name>: <query or url>]``, or for artifacts ``[artifact: <title>]`` and the
  artifact's content (``new_str`` for an update); ``tool_result`` gives its text
  items and ``title — url`` of knowledge items; unknown block types keep their
  ``text`` and add a warning;
* otherwise ``text``, with ``<antArtifact … title="T">`` tags shown as ``[artifact: T]``;
* messages with ``parent_message_uuid`` (web-API captures, 2026 exports) form a tree
  and are read in tree order, whatever the order of the list; with
  ``current_leaf_message_uuid`` messages off the branch ending at the leaf are
  alternates (after the others, ``extra["parent_message_id"]`` naming their parent);
* then each attachment as ``[attachment: <file_name>]`` followed by its
  ``extracted_content``, and each file as ``[file: <file_name>]`` (case 032: a message
  whose only content is an attachment or a file is kept, kind ``reference``).
"""

from __future__ import annotations

import re
from typing import Any

from cairn.formats.chats._common import (
    Conversation,
    ConversationBuilder,
    ConversationError,
    Message,
    walk_up,
)
from cairn.formats.chats._times import iso_from_text
from cairn.formats.chats._values import as_dict, as_list, as_str
from cairn.model import URL, Link

_ARTIFACT_OPEN = re.compile(r"<antArtifact\b([^>]*)>")
_ARTIFACT_CLOSE = re.compile(r"</antArtifact>")
_ATTR_TITLE = re.compile(r'title="([^"]*)"')


def is_claude(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` looks like one Claude.ai conversation."""
    return "chat_messages" in obj


def conversation_label(obj: dict[str, Any]) -> str:
    """``<uuid> ("<name>")`` for failure messages."""
    cid = as_str(obj.get("uuid")) or "?"
    name = as_str(obj.get("name"))
    return f'{cid} ("{name}")' if name else cid


def _artifact_tags(text: str) -> str:
    if "<antArtifact" not in text:
        return text

    def repl(m: re.Match[str]) -> str:
        t = _ATTR_TITLE.search(m.group(1))
        return f"[artifact: {t.group(1)}]\n" if t else "[artifact]\n"

    return _ARTIFACT_CLOSE.sub("", _ARTIFACT_OPEN.sub(repl, text))


def _tool_use(block: dict[str, Any]) -> str:
    name = as_str(block.get("name")) or "tool"
    inp = as_dict(block.get("input"))
    if name == "artifacts" or ("content" in inp and isinstance(inp.get("content"), str)):
        title = as_str(inp.get("title")) or as_str(inp.get("id")) or ""
        body = as_str(inp.get("content")) or as_str(inp.get("new_str")) or ""
        head = f"[artifact: {title}]" if title else "[artifact]"
        return f"{head}\n{body}" if body else head
    for key in ("query", "url", "command", "path"):
        value = inp.get(key)
        if isinstance(value, str) and value:
            return f"[tool {name}: {value}]"
    return f"[tool {name}]"


def _tool_result(block: dict[str, Any], links: list[Link]) -> str:
    out: list[str] = []
    content = block.get("content")
    if isinstance(content, str):
        return content
    for item in as_list(content):
        it = as_dict(item)
        url = as_str(it.get("url"))
        title = as_str(it.get("title"))
        if url:
            links.append(Link(kind=URL, target=url, alias=title, raw=url))
            out.append(f"{title} — {url}" if title else url)
        elif as_str(it.get("text")):
            out.append(str(it["text"]))
    return "\n".join(out)


def _blocks(
    blocks: list[Any], mid: str, warnings: list[str], links: list[Link]
) -> tuple[str, bool]:
    """(text, has_thinking) of a message's ``content`` blocks."""
    out: list[str] = []
    thinking = False
    for raw in blocks:
        block = as_dict(raw)
        btype = block.get("type")
        if btype == "text":
            text = as_str(block.get("text"))
            if text:
                out.append(_artifact_tags(text))
            for cit in as_list(block.get("citations")):
                c = as_dict(cit)
                url = as_str(c.get("url")) or as_str(as_dict(c.get("details")).get("url"))
                if url:
                    links.append(Link(kind=URL, target=url, alias=as_str(c.get("title")), raw=url))
        elif btype in ("thinking", "redacted_thinking"):
            thinking = True
        elif btype == "tool_use":
            out.append(_tool_use(block))
        elif btype == "tool_result":
            text = _tool_result(block, links)
            if text:
                out.append(text)
        elif btype in ("image", "document"):
            out.append(f"[{btype}]")
        else:
            text = as_str(block.get("text"))
            if text:
                out.append(text)
            warnings.append(
                f"message {mid!r}: unknown content block type {btype!r}"
                + ("; text salvaged" if text else "; no text")
            )
    return "\n\n".join(out), thinking


def _order(
    obj: dict[str, Any], raw: list[Any], warnings: list[str]
) -> tuple[list[int], set[str] | None]:
    """(indices of ``raw`` in the order the user saw them, uuids of the canonical
    branch or ``None`` when every message is on it).

    Web-API captures and 2026 exports link messages through ``parent_message_uuid``: a
    message follows its parent (depth first from the roots, siblings in file order), so
    a list stored out of order still reads as the thread did; with
    ``current_leaf_message_uuid`` the branch ending at it comes first and the messages
    off it (alternates) after, in tree order. Without parents: file order.
    """
    parents: dict[str, str | None] = {}
    index: dict[str, int] = {}
    for i, m in enumerate(raw):
        uuid = as_str(m.get("uuid")) if isinstance(m, dict) else None
        if uuid is not None and uuid not in index:
            index[uuid] = i
            parents[uuid] = as_str(m.get("parent_message_uuid"))
    if not any(p in parents for p in parents.values()):
        return list(range(len(raw))), None
    children: dict[str | None, list[str]] = {}
    for uuid, parent in parents.items():
        children.setdefault(parent if parent in parents else None, []).append(uuid)
    tree: list[int] = []
    seen: set[str] = set()
    stack = list(reversed(children.get(None, [])))
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        tree.append(index[node])
        stack.extend(reversed(children.get(node, [])))
    # a cycle leaves its messages unreached: they follow in file order
    placed = set(tree)
    tree.extend(i for i in range(len(raw)) if i not in placed)
    leaf = as_str(obj.get("current_leaf_message_uuid"))
    if leaf is None or leaf not in parents:
        return tree, None

    def parent_of(node: str) -> str | None:
        parent = parents[node]
        return parent if parent in parents else None

    cycle = "cycle in parent_message_uuid at {!r}; walk stopped"
    path = walk_up(leaf, parent_of, warnings, cycle)[::-1]
    on_path = set(path)
    off = [i for i in tree if not (isinstance(raw[i], dict) and raw[i].get("uuid") in on_path)]
    return [index[u] for u in path] + off, on_path


def _depth(parents: dict[str, Any], uuid: str) -> int:
    """How many messages lead to ``uuid`` in ``parents`` (uuid → its
    ``parent_message_uuid``): an alternate's position in its own branch."""
    count, node = 0, parents.get(uuid)
    while node in parents and count < len(parents):
        count, node = count + 1, parents[node]
    return count


def read(obj: dict[str, Any]) -> Conversation:
    """One Claude.ai conversation object → :class:`Conversation`.

    Raises:
        ConversationError: no ``uuid`` or ``chat_messages`` not a list.
    """
    cid = as_str(obj.get("uuid"))
    if cid is None:
        raise ConversationError("no conversation uuid")
    raw_messages = obj.get("chat_messages")
    if not isinstance(raw_messages, list):
        raise ConversationError("chat_messages is not a list")
    conv = ConversationBuilder("claude", "claude", cid)
    warnings = conv.warnings
    created = iso_from_text(obj.get("created_at"))
    order, branch = _order(obj, raw_messages, warnings)
    parents = {
        m["uuid"]: m.get("parent_message_uuid")
        for m in raw_messages
        if isinstance(m, dict) and isinstance(m.get("uuid"), str)
    }
    for i in order:
        raw = raw_messages[i]
        if not isinstance(raw, dict):
            warnings.append(f"message #{i + 1} is not an object; skipped")
            continue
        mid = as_str(raw.get("uuid")) or f"{cid}:{i}"
        alternate = branch is not None and mid not in branch
        links: list[Link] = []
        blocks = raw.get("content")
        text = ""
        if isinstance(blocks, list) and blocks:
            text, thinking = _blocks(blocks, mid, warnings, links)
            if not text.strip() and not thinking:
                text = _artifact_tags(as_str(raw.get("text")) or "")
        else:
            text = _artifact_tags(as_str(raw.get("text")) or "")
        own = text
        pieces = [text] if text.strip() else []
        attachments: list[str] = []
        for att in as_list(raw.get("attachments")):
            a = as_dict(att)
            fname = as_str(a.get("file_name")) or "attachment"
            attachments.append(fname)
            content = a.get("extracted_content")
            pieces.append(
                f"[attachment: {fname}]\n{content}"
                if isinstance(content, str) and content
                else f"[attachment: {fname}]"
            )
        files: list[str] = []
        for f in as_list(raw.get("files")):
            file_name = as_str(as_dict(f).get("file_name"))
            if file_name:
                files.append(file_name)
                pieces.append(f"[file: {file_name}]")
        conv.names.extend(attachments + files)
        body = "\n\n".join(pieces)
        if not body.strip():
            if raw.get("text") is None and raw.get("content") is None:
                warnings.append(f"message {mid!r}: null content; skipped")
            continue
        sender = raw.get("sender")
        role = "user" if sender in ("human", "user") else "assistant"
        extra: dict[str, Any] = {}
        if attachments:
            extra["attachments"] = attachments
        if files:
            extra["files"] = files
        parent = as_str(raw.get("parent_message_uuid"))
        if parent is not None:
            extra["parent_message_id"] = parent
        conv.add(
            Message(
                role=role,
                text=body,
                time=iso_from_text(raw.get("created_at")),
                message_id=mid,
                alternate=alternate,
                position=_depth(parents, mid) if alternate else conv.position,
                kind_hint=None if own.strip() else "reference",
                own_text=own,
                links=links,
                extra=extra,
            )
        )
    metadata: dict[str, Any] = {}
    account = as_str(as_dict(obj.get("account")).get("uuid"))
    if account:
        metadata["account"] = account
    if obj.get("is_starred") is not None:
        metadata["is_starred"] = bool(obj.get("is_starred"))
    if as_str(obj.get("project_uuid")):
        metadata["project_uuid"] = obj["project_uuid"]
    summary = obj.get("summary")
    return conv.build(
        as_str(obj.get("name")),
        created=created,
        modified=iso_from_text(obj.get("updated_at")),
        model=as_str(obj.get("model")),
        summary=summary if isinstance(summary, str) else None,
        metadata=metadata,
    )
