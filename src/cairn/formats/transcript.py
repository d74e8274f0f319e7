"""Plain chat transcripts in Markdown or HTML, with role markers → one conversation.

Browser extensions and copy-paste leave conversations as Markdown or HTML files where
each message starts with a role marker. A file is read as a transcript (and not as a
note) when :func:`sniff` finds, outside fenced code, at least one marker of the user
and one of the assistant. A marker is a line that holds only a role label — as a
heading (``## You``, ``#### ChatGPT:``), in bold (``**User:**``), or followed by a
colon (``Assistant:``) — or a bold label that starts a line of text
(``**Claude:** Sure, …``). Role labels, case-insensitive:

* user: ``You``, ``User``, ``Me``, ``Human``, ``Prompt``;
* assistant: ``ChatGPT``, ``GPT-4``/``GPT-4o``/``GPT-5``, ``Assistant``, ``Claude``,
  ``Gemini``, ``Bard``, ``Copilot``, ``AI``, ``Model``, ``Response``.

``Question``/``Answer`` are deliberately not labels: FAQ notes use them as headings.

The document (format ``chat``, ``metadata["provider"] = "transcript"``) has the same
unit layout as the JSON exports (:mod:`cairn.formats.chats`): a preamble (the text
before the first marker: front matter is skipped, a ``# Title`` names the
conversation), then one ``message`` unit per marker with its role, kind and keywords,
each followed by its fenced code blocks as ``code`` units. Markdown transcripts keep
their line spans; HTML ones are turned into text first (their units point at line 1).
Messages have no times and no provider ids: ids come from the path.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import PurePosixPath

from cairn.formats.chats._common import Conversation, Message
from cairn.formats.chats._document import build_document
from cairn.formats.chats._html import html_to_text
from cairn.formats.guard import check_text
from cairn.model import Document

USER_LABELS = ("you", "user", "me", "human", "prompt")
ASSISTANT_LABELS = (
    "chatgpt",
    "gpt-4",
    "gpt-4o",
    "gpt-5",
    "assistant",
    "claude",
    "gemini",
    "bard",
    "copilot",
    "ai",
    "model",
    "response",
)
_LABEL = "|".join(re.escape(x) for x in sorted(USER_LABELS + ASSISTANT_LABELS, key=len)[::-1])
# a line holding only a label: "## You", "#### ChatGPT:", "**User:**", "Assistant:"
_ALONE = re.compile(
    rf"^ {{0,3}}(?:#{{1,6}}[ \t]+)?(?:\*\*|__)?[ \t]*(?P<label>{_LABEL})[ \t]*:?[ \t]*"
    rf"(?:\*\*|__)?[ \t]*:?[ \t]*$",
    re.IGNORECASE,
)
# a bold label starting a line of text: "**Claude:** Sure, here it is."
_INLINE = re.compile(
    rf"^ {{0,3}}(?:\*\*|__)(?P<label>{_LABEL})[ \t]*:[ \t]*(?:\*\*|__)[ \t]*(?P<rest>\S.*)$",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HTML = re.compile(r"<(?:html|body|div|p|h[1-6])\b", re.IGNORECASE)
_H1 = re.compile(r"^#[ \t]+(.+?)[ \t]*#*[ \t]*$")


def _role(label: str) -> str:
    return "user" if label.casefold() in USER_LABELS else "assistant"


def _markers(lines: list[str]) -> list[tuple[int, str, str]]:
    """``(0-based line, role, text after an inline label)`` of every marker outside
    fenced code."""
    out: list[tuple[int, str, str]] = []
    fence: str | None = None
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)[0]
            elif m.group(1)[0] == fence:
                fence = None
            continue
        if fence is not None:
            continue
        a = _ALONE.match(line)
        if a:
            out.append((i, _role(a.group("label")), ""))
            continue
        b = _INLINE.match(line)
        if b:
            out.append((i, _role(b.group("label")), b.group("rest")))
    return out


def _text_of(data: str) -> tuple[str, bool]:
    """Text to read markers from, and whether it came from HTML."""
    if _HTML.search(data[:4096]):
        return html_to_text(data), True
    return data, False


def _strip_front_matter(lines: list[str]) -> int:
    """Index of the first line after a ``---`` front matter block (0 when none)."""
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                return i + 1
    return 0


def looks_like_transcript(text: str) -> bool:
    """Whether ``text`` has a user marker and an assistant marker (see module doc)."""
    roles = {role for _i, role, _r in _markers(_text_of(text)[0].splitlines())}
    return roles == {"user", "assistant"}


def sniff(head: bytes) -> bool:
    """Whether the first bytes of a ``.md``/``.html`` file read as a transcript."""
    return looks_like_transcript(head.decode("utf-8", errors="replace"))


def parse(text: str, relpath: str) -> Document:
    """Parse a transcript into one conversation :class:`Document` (see module doc).

    Args:
        text: the decoded file (Markdown or HTML).
        relpath: the file's path relative to its source root.
    """
    check_text(text, relpath)
    body, from_html = _text_of(text)
    lines = body.splitlines()
    marks = _markers(lines)
    start = _strip_front_matter(lines)
    first = marks[0][0] if marks else len(lines)
    title = PurePosixPath(relpath).stem
    for line in lines[start:first]:
        m = _H1.match(line)
        if m:
            title = m.group(1).strip()
            break
    messages: list[Message] = []
    spans: list[tuple[int, int]] = []
    for n, (i, role, rest) in enumerate(marks):
        end = marks[n + 1][0] if n + 1 < len(marks) else len(lines)
        chunk = "\n".join([rest, *lines[i + 1 : end]] if rest else lines[i + 1 : end])
        messages.append(Message(role=role, text=chunk.strip("\n"), position=n))
        spans.append((i + 1, max(i + 1, end)))
    conv = Conversation(
        format="chat",
        provider="transcript",
        conversation_id=relpath,
        title=title,
        messages=messages,
        metadata={"source": "html" if from_html else "markdown"},
    )
    doc = build_document(conv, relpath)
    # line spans (Markdown only: HTML was turned into text), and ids from the path
    units = list(doc.units)
    if not from_html:
        units[0] = dataclasses.replace(units[0], line_start=1, line_end=max(1, first))
        msg = -1
        for k in range(1, len(units)):
            if units[k].kind == "message":
                msg += 1
            if 0 <= msg < len(spans):
                units[k] = dataclasses.replace(
                    units[k], line_start=spans[msg][0], line_end=spans[msg][1]
                )
    return dataclasses.replace(doc, units=tuple(units), declared_id=None, key=None)
