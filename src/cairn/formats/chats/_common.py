"""Shared shapes of the chat importers: the intermediate :class:`Message` and
:class:`Conversation`, and the :class:`ConversationBuilder` every provider fills.

Provider modules (``chatgpt``, ``claude``, ``gemini``, ``generic``) only read their JSON
shape into a :class:`Conversation`; times are normalised in :mod:`._times`, text helpers
live in :mod:`._text`, and :mod:`._document` decides what a unit looks like, so the rules
documented in :mod:`cairn.formats.chats` hold for every provider.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cairn.formats.chats._text import first_words
from cairn.model import Link


class ConversationError(Exception):
    """A conversation that cannot be read; becomes one :class:`cairn.model.Failure`."""


@dataclass(slots=True)
class Message:
    """One message as read from an export, before it becomes a unit.

    ``role`` is one of :data:`ROLES`; ``text`` the searchable body (plain text or
    Markdown, never JSON); ``time`` an ISO 8601 UTC string or ``None``; ``kind_hint``
    forces the kind (``code`` for a code message, ``reference`` for a tool result or an
    attachment-only message); ``own_text`` is the author's own text without attachments
    (used for fallback titles); ``extra`` holds provider fields (JSON-serialisable).
    """

    role: str
    text: str
    time: str | None = None
    message_id: str | None = None
    model: str | None = None
    alternate: bool = False
    position: int | None = None
    language: str | None = None
    kind_hint: str | None = None
    own_text: str | None = None
    links: list[Link] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Conversation:
    """One conversation as read from an export.

    ``format`` is the Document format (``chatgpt``, ``claude``, ``gemini`` or ``chat``);
    ``provider`` the tool that wrote it (``chatgpt``, ``claude``, ``gemini``,
    ``aistudio``, ``librechat``, ``openwebui``, ``chatbotui``). ``messages`` holds the
    canonical branch in order, then alternates (``alternate=True``).
    """

    format: str
    provider: str
    conversation_id: str
    title: str
    messages: list[Message]
    created: str | None = None
    modified: str | None = None
    model: str | None = None
    summary: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def fallback_title(
    messages: list[Message], names: list[str], created: str | None, provider: str
) -> str:
    """Title for a conversation without one: the first user message's first words, else
    the first attachment or file name in ``names``, else ``"<provider> conversation
    <date>"``."""
    for msg in messages:
        if msg.role == "user" and not msg.alternate:
            own = msg.text if msg.own_text is None else msg.own_text
            if own.strip():
                return first_words(own)
            break
    if names:
        return names[0]
    label = {"chatgpt": "ChatGPT", "claude": "Claude", "gemini": "Gemini"}.get(provider, provider)
    return f"{label} conversation {created[:10]}" if created else f"{label} conversation"


def walk_up(
    start: str | None, parent_of: Callable[[str], str | None], warnings: list[str], cycle: str
) -> list[str]:
    """Ids from ``start`` up to its root, ``start`` first (reverse it for the branch in
    reading order), following ``parent_of`` (``None`` at a root).

    A cycle stops the walk and appends ``cycle.format(id)`` to ``warnings`` (a template
    such as ``"cycle in the message tree at {!r}; walk stopped"``).
    """
    path: list[str] = []
    seen: set[str] = set()
    node = start
    while node is not None:
        if node in seen:
            warnings.append(cycle.format(node))
            break
        seen.add(node)
        path.append(node)
        node = parent_of(node)
    return path


def with_files(text: str, names: Sequence[str]) -> str:
    """``text`` followed by a ``[file: name]`` line per name, paragraphs apart; without
    text, the file lines alone, one per line."""
    lines = [f"[file: {name}]" for name in names]
    if not lines:
        return text
    return "\n\n".join([text, *lines]) if text.strip() else "\n".join(lines)


@dataclass(slots=True)
class ConversationBuilder:
    """One conversation being read: every provider adds its messages here and calls
    :meth:`build`, so ordering (canonical branch first, then alternates), positions and
    fallback titles follow one rule.

    Attributes:
        format, provider, conversation_id: as in :class:`Conversation`.
        warnings: problems found while reading (strings, no file name).
        names: attachment and file names in reading order (for fallback titles).
    """

    format: str
    provider: str
    conversation_id: str
    warnings: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    canonical: list[Message] = field(default_factory=list)
    alternates: list[Message] = field(default_factory=list)

    @property
    def position(self) -> int:
        """The position the next canonical message gets (0-based)."""
        return len(self.canonical)

    @property
    def messages(self) -> list[Message]:
        """The canonical messages in order, then the alternates."""
        return self.canonical + self.alternates

    def add(self, message: Message) -> Message:
        """Add ``message`` (to the alternates when ``message.alternate``); returns it."""
        (self.alternates if message.alternate else self.canonical).append(message)
        return message

    def build(
        self,
        title: str | None,
        *,
        created: str | None = None,
        modified: str | None = None,
        model: str | None = None,
        summary: str | None = None,
        metadata: dict[str, Any] | None = None,
        label: str | None = None,
    ) -> Conversation:
        """The :class:`Conversation`. A missing or blank ``title`` becomes
        :func:`fallback_title` (``label`` names the tool there; default: the provider)."""
        messages = self.messages
        if not (title or "").strip():
            title = fallback_title(messages, self.names, created, label or self.provider)
        return Conversation(
            format=self.format,
            provider=self.provider,
            conversation_id=self.conversation_id,
            title=title or "",
            messages=messages,
            created=created,
            modified=modified,
            model=model,
            summary=summary,
            metadata=metadata if metadata is not None else {},
            warnings=self.warnings,
        )
