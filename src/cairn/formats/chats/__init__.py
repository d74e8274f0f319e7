"""AI chat exports (ChatGPT, Claude, Gemini and others) → one Document per conversation.

A *file* parser (see :mod:`cairn.formats`): :func:`parse_file` reads a ``.zip`` as
downloaded, the ``conversations.json`` inside it, or another supported JSON export, as a
stream (memory bounded by the largest single conversation), detects the provider of
each top-level entry from its structure, and yields a :class:`cairn.model.Document` per
conversation or a :class:`cairn.model.Failure` per conversation it cannot read; the rest
are still imported. Formats and their quirks: ``shared/CHAT-FORMATS.md``; provider
details in :mod:`.chatgpt`, :mod:`.claude`, :mod:`.gemini`, :mod:`.generic`.

**Detection** (per top-level entry, first match): ``chat_messages`` → Claude;
``mapping`` (or ChatGPT conversation fields without one) → ChatGPT; ``header`` +
``title`` + ``time``/``products`` → Google "My Activity" (only Gemini prompts kept);
``chunkedPrompt`` → Google AI Studio; ``conversationId`` + ``messages`` → LibreChat;
``chat.history`` → Open WebUI; ``messages[{role, content}]`` → Chatbot UI / linear chat.
Top level: an array of entries, one entry object (case 029), or an object whose
``conversations`` / ``history`` / ``chats`` array holds the entries. When the first
entry is not recognised the whole file gives one Failure starting
``not a recognised chat export:``.

**Document**: ``format`` = ``chatgpt`` | ``claude`` | ``gemini`` | ``chat`` (the generic
ones, ``metadata["provider"]`` naming the tool); ``key`` = ``declared_id`` = the
provider's conversation id (Gemini activity records have none: ``gemini-`` + a hash of
time and title); ``title`` = the conversation's, else the first user message's first
words, else the first attachment or file name, else ``"<Provider> conversation
<date>"``; ``created``/``modified`` ISO 8601 UTC with ``Z`` (milliseconds kept when not
zero); ``metadata``: provider, conversation_id, model, messages (canonical count),
alternates, plus provider fields (gizmo_id, is_archived, …).

**Units**, in order:

* ordinal 0: ``preamble`` (level 0), title = conversation title, body = the title (and
  Claude's ``summary`` when present);
* each message of the canonical branch: kind ``message``, level 1, title
  ``"<role> · YYYY-MM-DD HH:MM"`` (UTC; ``"<role> · message N"`` without a time; the
  speaker's name instead of the role where the export names one),
  ``outline_path`` = (conversation title, unit title), body = the message's text (text
  parts, code, informative tool results, ``[image]`` / ``[file: name]`` placeholders,
  attachments' extracted content — never raw JSON), ``timestamps`` = the relative
  dates in the text ("yesterday", "last Saturday") resolved against the message's time
  (:mod:`._when`), ``declared_id`` = the provider's
  message id, ``language`` for a code message, ``links`` = cited URLs, ``extra``: role
  (user/assistant/system/tool), time, message_id, position (0-based in the branch),
  model, kind, keywords, alternate, and provider fields (name, status, images,
  attachments, parent_message_id …); each message is followed by its fenced code blocks,
  one ``code`` unit each (level 2, ``parent`` = the message's ordinal, ``language``,
  title ``"<language>: <first line>"``, ``declared_id`` = ``<message id>#code-N``);
* then the alternates (messages off the canonical branch: ChatGPT regenerations and
  edits, LibreChat and Open WebUI side branches, AI Studio superseded drafts, Claude
  web-API captures off ``current_leaf_message_uuid``), laid out
  the same way with ``extra["alternate"] = True``: kept and searchable when asked for,
  left out of default search.

``line_start``/``line_end`` are 1: JSON exports have no useful lines.

**Message kind** (``extra["kind"]``, first rule that matches; see
:func:`._document.message_kind`): ``reference`` for tool results (quoted web pages, code
output), attachment- or file-only messages and user system instructions; ``code`` for a
code message or when fenced code makes up at least half of the body; ``decision`` when
the text states a choice (``decided``, ``let's go with``, ``we'll use``, ``settled on``,
``chose``, ``opted for`` …); ``question`` for any other user message; ``insight`` for an
assistant message flagging a conclusion (``key insight``, ``in summary``, ``tl;dr``,
``rule of thumb``, ``the main reason`` …); ``answer`` otherwise.

**Keywords** (``extra["keywords"]``): up to 5 lower-cased words of 3+ characters that
are not stop words, ranked by count in the message, ties by first occurrence.

**Problems**: a conversation that cannot be read (e.g. ChatGPT "Corrupted entry" with
no mapping) → ``Failure(reason="conversation <id> ("<title>"): …")``; truncated or
invalid JSON → the conversations before the break, then one Failure naming the byte
position and the last conversation read; an entry the JSON decoder cannot build (nested
past the recursion limit, an integer of more than 4300 digits) → one Failure naming its
index and position, the entries around it still imported; null content, unknown content types (text
salvaged when any), cycles and dangling parents → ``Document.warnings``; zip: unsafe or
unexpected members, encrypted members, zip bombs (size, ratio, over-long
decompression) → one Failure each, never extracted.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from cairn.formats.chats._entries import Entry, Reuse
from cairn.formats.chats._stream import stream_json, stream_zip
from cairn.model import Document, Failure

__all__ = ["Entry", "Reuse", "parse_file", "read_entries", "sniff"]

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")


def sniff(head: bytes) -> bool:
    """Whether the first bytes of a ``.json``/``.zip`` file may be a chat export: a zip
    signature, or JSON text starting with ``[`` or ``{`` (after a BOM and blanks). The
    full check happens in :func:`parse_file`."""
    if head.startswith(_ZIP_MAGIC):
        return True
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    return head.lstrip()[:1] in (b"[", b"{")


def parse_file(path: Path, relpath: str, max_entry: int = 0) -> Iterator[Document | Failure]:
    """Read one export file and yield a Document per conversation, a Failure per
    conversation (or zip member) that cannot be read.

    Args:
        path: the file on disk (``.zip`` or ``.json``).
        relpath: its path relative to the source root; used as ``Document.path`` and
            ``Failure.path``.
        max_entry: a conversation (an entry of the top-level array) of more characters
            is skipped without being held, and reported (``0``: no limit). The file
            itself may be of any size: it is read a conversation at a time.

    Never raises on bad input: an unreadable file gives one Failure.
    """
    for item in read_entries(path, relpath, max_entry):
        if isinstance(item, Failure):
            yield item
        elif item.doc is not None:  # always, without ``reuse``
            yield item.doc


def read_entries(
    path: Path, relpath: str, max_entry: int = 0, reuse: Reuse | None = None
) -> Iterator[Entry | Failure]:
    """:func:`parse_file`, with each conversation as an :class:`Entry` that carries the
    digest of its text, and without building the conversations ``reuse`` says the
    caller holds (``Entry.doc`` is ``None`` for those: an index re-reading a newer
    export builds only the conversations that changed). Without ``reuse`` no digest
    is taken and every conversation is built. Never raises on bad input.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        yield Failure(relpath, f"cannot read file: {exc}")
        return
    if head.startswith(_ZIP_MAGIC):
        yield from stream_zip(path, relpath, max_entry, reuse)
        return
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below, the generator owns it
    except OSError as exc:
        yield Failure(relpath, f"cannot read file: {exc}")
        return
    with fh:
        yield from stream_json(fh, relpath, relpath, max_entry=max_entry, reuse=reuse)
