"""Shared pieces of the chat importers: the intermediate message shape, time
normalisation, the message-kind rule, keywords, fenced code blocks, and the builder that
turns a :class:`Conversation` into a :class:`cairn.model.Document`.

Provider modules (``chatgpt``, ``claude``, ``gemini``, ``generic``) only read their JSON
shape into a :class:`Conversation`; everything a unit looks like is decided here, so the
rules documented in :mod:`cairn.formats.chats` hold for every provider.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cairn.formats.chats._when import relative_dates
from cairn.model import CODE, MESSAGE, PREAMBLE, Diagnostic, Document, Link, Unit

ROLES = ("user", "assistant", "system", "tool")


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


# --- times ---------------------------------------------------------------------------


def _fmt(dt: datetime) -> str:
    dt = dt.astimezone(UTC)
    ms = dt.microsecond // 1000
    base = dt.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{base}.{ms:03d}Z" if ms else f"{base}Z"


_LAST_SECOND = 253402300799.0  # 9999-12-31T23:59:59Z, the last time datetime can hold


def epoch_seconds(value: Any) -> float | None:
    """Epoch seconds of an export's time (int, float or numeric string; values above
    1e11 are taken as milliseconds), or ``None`` when it is no usable time: not a number,
    NaN, infinite, zero or negative, or past the year 9999. Such a time is *unknown*: it
    never decides the order of messages or which branch is the latest."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str) and len(value) > 40:
        return None  # a 100,000-digit string is no time (and int() of it would raise)
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if seconds != seconds or seconds <= 0:  # NaN, zero, negative
        return None
    if seconds > 1e11:
        seconds /= 1000.0
    return seconds if seconds <= _LAST_SECOND else None


def iso_from_epoch(value: Any) -> str | None:
    """Epoch seconds (see :func:`epoch_seconds`) → ISO 8601 UTC with ``Z``.

    Milliseconds are kept when not zero (``2023-11-14T22:13:21.500Z``); a value that is
    no usable time gives ``None``.
    """
    seconds = epoch_seconds(value)
    if seconds is None:
        return None
    try:
        return _fmt(datetime.fromtimestamp(seconds, tz=UTC))
    except (OverflowError, OSError, ValueError):
        return None


_ISO_FRACTION = re.compile(r"(\.\d+)")


def iso_from_text(value: Any) -> str | None:
    """An ISO 8601 string (any offset, ``Z``, or none = UTC) → ISO 8601 UTC with ``Z``.

    ``2024-06-01T10:00:00.000000Z`` → ``2024-06-01T10:00:00Z``;
    ``2024-03-02T09:15:00.123Z`` → ``2024-03-02T09:15:00.123Z``; numbers are read as
    epoch seconds; anything unreadable gives ``None``.
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        return iso_from_epoch(value)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    # Python 3.11 accepts up to 6 fraction digits; trim longer ones (nanoseconds).
    m = _ISO_FRACTION.search(text)
    if m and len(m.group(1)) > 7:
        text = text[: m.start(1)] + m.group(1)[:7] + text[m.end(1) :]
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return _fmt(dt)


# --- text helpers --------------------------------------------------------------------

_WORD = re.compile(r"\S+")


def first_words(text: str, words: int = 8, limit: int = 80) -> str:
    """The first ``words`` words of ``text`` on one line, cut at ``limit`` characters."""
    found = _WORD.findall(text)
    out = " ".join(found[:words])
    if len(found) > words or len(out) > limit:
        out = out[:limit].rstrip() + "…"
    return out


_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """A fenced code block: ``language`` (``None`` when the fence names none), ``code``."""

    language: str | None
    code: str


def code_blocks(text: str) -> list[CodeBlock]:
    """Fenced code blocks (``` or ~~~, CommonMark rules: the closing fence uses the
    same character, at least as long, and an unclosed fence runs to the end) in
    ``text``, in order."""
    if "```" not in text and "~~~" not in text:
        return []
    blocks: list[CodeBlock] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2)
        body: list[str] = []
        i += 1
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped.startswith(fence[0] * len(fence)) and set(stripped) == {fence[0]}:
                break
            body.append(lines[i])
            i += 1
        i += 1
        blocks.append(CodeBlock(lang.strip().lower() or None, "\n".join(body)))
    return blocks


_STOPWORDS_TEXT = """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot com could did didn do does doesn
    doing don down during each else etc even ever every few for from further get gets got
    had has have having he her here hers herself him himself his how however html http
    https i if in into is isn it its itself just let like ll make may me might more most
    much must my myself need no nor not now of off on once one only or org other our ours
    ourselves out over own per please re really same say see she should so some such sure
    than thank thanks that the their theirs them themselves then there these they thing
    things this those though through to too under until up upon us use used using ve very
    via want was wasn way we well were weren what when where whether which while who whom
    why will with within without won would www yes yet you your yours yourself yourselves
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
"""English stop words left out of keywords."""

_KW_TOKEN = re.compile(r"[^\W\d_][\w+#-]*[\w+#]|[^\W\d_]{2}", re.UNICODE)


def keywords(text: str, limit: int = 5) -> list[str]:
    """A few keywords of ``text``: lower-cased words of 3+ characters (letters first;
    digits, ``-``, ``+``, ``#`` allowed inside) that are not in :data:`STOPWORDS`,
    ranked by count, ties broken by first occurrence; at most ``limit``."""
    words = [w for w in _KW_TOKEN.findall(text.lower()) if len(w) >= 3 and w not in STOPWORDS]
    # Counter keeps first-occurrence order and most_common is stable on ties
    return [w for w, _ in Counter(words).most_common(limit)]


# --- the kind rule -------------------------------------------------------------------

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
    if msg.kind_hint == "reference":
        return "reference"
    if msg.kind_hint == "code":
        return "code"
    blocks = code_blocks(body)
    if blocks and sum(len(b.code) for b in blocks) * 2 >= len(body.strip()):
        return "code"
    lower = body.lower()  # the patterns are lower-case
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
        kind = message_kind(msg, text)
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
            "keywords": keywords(text),
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
                timestamps=relative_dates(text, msg.time),
                extra=extra,
            )
        )
        if msg.kind_hint == "code":
            continue  # the message is itself one code block
        for k, block in enumerate(code_blocks(text)):
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


# --- building a conversation ---------------------------------------------------------


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
