"""Reading an export file as a stream: zip safety, top-level JSON shapes, provider
detection per entry, and turning every problem into a :class:`cairn.model.Failure`.

Memory is bounded by the largest single conversation: a top-level array is read item
by item (:mod:`._json`); a top-level object key by key, and its ``conversations`` /
``history`` / ``chats`` array, if any, item by item. A zip is never extracted: only the
export member(s) are opened and streamed.
"""

from __future__ import annotations

import re
import stat
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from cairn.formats.chats import chatgpt, claude, gemini, generic
from cairn.formats.chats._common import Conversation, ConversationError
from cairn.formats.chats._document import build_document
from cairn.formats.chats._entries import Entry, Reuse, entry_digest
from cairn.formats.chats._json import (
    BadEntry,
    EntryUnreadable,
    JsonInvalid,
    JsonStop,
    JsonTooDeep,
    JsonTruncated,
    SizeLimit,
    TextBuffer,
)
from cairn.model import Failure

# --- limits (module constants so a caller or a test can lower them) -------------------
MAX_MEMBER_BYTES = 4 * 1024**3
"""Largest uncompressed export member read from a zip (4 GiB)."""
MAX_RATIO = 200
"""Largest uncompressed/compressed ratio accepted for a member above 1 MiB."""
MAX_MEMBERS = 200_000
"""Most members a zip may list."""
STREAM_KEYS = ("conversations", "history", "chats")
"""Keys of a top-level object whose array is read item by item as conversations."""

_EXPORT_MEMBER = re.compile(
    r"^(?:[^/]+/)?conversations\.json$|(?:^|/)Gemini Apps/My ?Activity\.json$", re.IGNORECASE
)
_EXPECTED_MEMBER = re.compile(
    r"""^(?:[^/]+/)?(?:
        (?:user|users|chat|message_feedback|shared_conversations|group_chats|shopping|sora|
           projects|memories|model_comparisons|conversations|library|settings)\.(?:json|html)
      | (?:textdocs|dalle-generations|user-[^/]+|audio|files|images|media|attachments)/.*
      | file[-_][^/]*
    )$
    | ^Takeout/.*
    | ^__MACOSX/.*
    | (?:^|/)\.DS_Store$
    | /$
    | \.(?:png|jpe?g|gif|webp|heic|svg|wav|mp3|m4a|ogg|webm|mp4|mov|pdf|txt|csv|md|docx?|
         xlsx?|pptx?|json|html?)$
    """,
    re.IGNORECASE | re.VERBOSE,
)


# --- provider detection ---------------------------------------------------------------

Reader = Callable[[dict[str, Any]], Conversation | None]


def detect(obj: Any, fallback_id: str) -> tuple[str, Reader, Callable[[], str]] | None:
    """(provider name, reader, label) for one top-level entry, or ``None`` when the entry
    is no conversation we know."""
    if not isinstance(obj, dict):
        return None
    if claude.is_claude(obj):
        return "claude", claude.read, lambda: claude.conversation_label(obj)
    if chatgpt.is_chatgpt(obj):
        return "chatgpt", chatgpt.read, lambda: chatgpt.conversation_label(obj)
    if gemini.is_activity(obj):
        return "gemini-activity", gemini.read_activity, lambda: str(obj.get("title"))[:80]
    if gemini.is_aistudio(obj):
        return (
            "aistudio",
            lambda o: gemini.read_aistudio(o, fallback_id),
            lambda: str(obj.get("id") or obj.get("displayName") or fallback_id),
        )
    if generic.is_librechat(obj):
        return (
            "librechat",
            lambda o: generic.read_librechat(o, fallback_id),
            lambda: str(obj.get("conversationId") or fallback_id),
        )
    if generic.is_openwebui(obj):
        return "openwebui", generic.read_openwebui, lambda: _label(obj, "id", "title")
    if generic.is_linear(obj):
        return (
            "linear",
            lambda o: generic.read_linear(o, fallback_id),
            lambda: _label(obj, "id", "name"),
        )
    return None


def _label(obj: dict[str, Any], id_key: str, title_key: str) -> str:
    cid = obj.get(id_key)
    title = obj.get(title_key)
    if cid and title:
        return f'{cid} ("{title}")'
    return str(cid or title or "?")


def _keys(obj: Any) -> str:
    if isinstance(obj, dict):
        keys = list(obj)[:8]
        return "an object with keys " + ", ".join(map(str, keys)) if keys else "an empty object"
    return f"a {type(obj).__name__}"


class _Dispatcher:
    """Turns top-level entries into Documents and Failures, counting as it goes; with a
    :class:`Reuse`, an entry whose text the caller holds is not built."""

    def __init__(self, relpath: str, fallback_id: str, reuse: Reuse | None = None) -> None:
        self.relpath = relpath
        self.fallback_id = fallback_id
        self.reuse = reuse
        self.entries = 0
        self.recognised = 0
        self.documents = 0
        self.activity_skipped = 0
        self.last_label: Callable[[], str] | None = None  # named only if reading stops
        self.stop = False
        self.keys: set[str] = set()

    def fail(self, reason: str) -> Failure:
        return Failure(path=self.relpath, reason=reason)

    def entry(
        self, obj: Any, whole_file: bool = False, text: str | None = None
    ) -> Iterator[Entry | Failure]:
        """The Entry or Failure of one top-level entry ``obj``; ``text``: the entry as
        written in the file, by which :attr:`reuse` recognises an unchanged one."""
        self.entries += 1
        index = self.entries
        fallback = self.fallback_id if whole_file else f"{self.fallback_id}#{index}"
        if isinstance(obj, BadEntry):
            yield self.fail(
                f"conversation #{index} (at character {obj.offset}): {obj.reason}; skipped, "
                "the other conversations are read"
            )
            return
        found = detect(obj, fallback)
        if found is None:
            if self.recognised == 0:
                self.stop = True
                where = "the file is" if whole_file else "the first entry is"
                yield self.fail(f"not a recognised chat export: {where} {_keys(obj)}")
            else:
                yield self.fail(f"conversation #{index}: unrecognised entry ({_keys(obj)})")
            return
        self.recognised += 1
        kind, reader, full_label = found

        def label() -> str:
            shown = full_label()
            return shown if len(shown) <= 120 else shown[:119] + "…"

        digest = ""
        if self.reuse is not None and text is not None:
            digest = entry_digest(text, kind, fallback)
            if self.reuse.unchanged(digest):
                self.last_label = label
                self.documents += 1
                yield Entry(digest, None)
                return
        try:
            conv = reader(obj)
            if conv is None:
                self.activity_skipped += kind == "gemini-activity"
                return
            doc = build_document(conv, self.relpath)
        except ConversationError as exc:
            yield self.fail(f"conversation {label()}: {exc}")
            return
        except Exception as exc:  # a parser never raises on bad input
            yield self.fail(f"conversation {label()}: cannot be read ({type(exc).__name__}: {exc})")
            return
        if doc.key in self.keys or (
            self.reuse is not None and doc.key and self.reuse.claimed(doc.key)
        ):
            yield self.fail(
                f"conversation {label()}: the same conversation id appears earlier in this "
                "export; this copy is skipped"
            )
            return
        self.keys.add(doc.key or "")
        self.last_label = label
        self.documents += 1
        yield Entry(digest, doc)

    def finish(self) -> Iterator[Failure]:
        if self.documents == 0 and self.activity_skipped and not self.stop:
            yield self.fail(
                "not a recognised chat export: a Google activity file with no Gemini Apps "
                f"prompts ({self.activity_skipped} records skipped)"
            )


# --- JSON ------------------------------------------------------------------------------


def _object_entries(buf: TextBuffer, disp: _Dispatcher) -> Iterator[Entry | Failure]:
    """A top-level object: stream its conversations array, or read it as one entry."""
    buf.take("{")
    top: dict[str, Any] = {}
    streamed = False
    if buf.peek() == "}":
        buf.pos += 1
    else:
        while True:
            key = buf.value()
            if not isinstance(key, str):
                raise JsonInvalid("an object key is not a string", buf.offset)
            buf.take(":")
            if key in STREAM_KEYS and buf.peek() == "[":
                streamed = True
                for item in buf.array_items():
                    yield from disp.entry(item, text=_text(buf, disp))
                    if disp.stop:
                        return
            else:
                top[key] = buf.value()
            sep = buf.peek()
            if sep == ",":
                buf.pos += 1
                continue
            if sep == "}":
                buf.pos += 1
                break
            if not sep:
                raise JsonTruncated("the file ends inside the top-level object", buf.offset)
            raise JsonInvalid(f"expected ',' or '}}', found {sep!r}", buf.offset)
    if not streamed:
        yield from disp.entry(top, whole_file=True)


def _text(buf: TextBuffer, disp: _Dispatcher) -> str | None:
    """The text of the array item just read, when the dispatcher recognises entries by
    it (a copy of the entry's text; not taken otherwise)."""
    return buf.last_text() if disp.reuse is not None else None


def stream_json(
    raw: IO[bytes],
    relpath: str,
    fallback_id: str,
    limit: int | None = None,
    max_entry: int = 0,
    reuse: Reuse | None = None,
) -> Iterator[Entry | Failure]:
    """The Entries (one per conversation) and Failures of one JSON export read from
    ``raw``.

    ``fallback_id`` names conversations that carry no id (AI Studio, LibreChat);
    ``limit`` caps the bytes read (zip members); ``max_entry`` (``0``: none) the
    characters of one conversation: a larger one is skipped, not held, and reported;
    ``reuse``: the entries the caller holds already, not built again.
    """
    buf = TextBuffer(raw, limit, max_entry)
    disp = _Dispatcher(relpath, fallback_id, reuse)
    try:
        first = buf.peek()
        if first == "[":
            for item in buf.array_items():
                yield from disp.entry(item, text=_text(buf, disp))
                if disp.stop:
                    return
        elif first == "{":
            yield from _object_entries(buf, disp)
        else:
            shown = repr(first) if first else "an empty file"
            yield Failure(relpath, f"not a recognised chat export: not JSON (starts with {shown})")
            return
    except SizeLimit as exc:
        if reuse is not None:
            reuse.stopped()
        yield Failure(relpath, f"possible zip bomb: {exc}; reading stopped")
        return
    except JsonStop as exc:
        if reuse is not None:
            reuse.stopped()
        kind = {
            JsonTruncated: "truncated JSON",
            JsonTooDeep: "JSON nested too deep",
            EntryUnreadable: "unreadable JSON",
        }.get(type(exc), "invalid JSON")
        after = (
            f"after conversation {disp.last_label()} ({disp.documents} imported)"
            if disp.last_label
            else "before any conversation was read"
        )
        yield Failure(relpath, f"{kind} at character {exc.offset} ({after}): {exc}")
        return
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        if reuse is not None:
            reuse.stopped()
        yield Failure(relpath, f"read error near byte {buf.bytes_read}: {exc}")
        return
    yield from disp.finish()


# --- zip -------------------------------------------------------------------------------


def _unsafe(name: str) -> str | None:
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return "absolute path"
    if any(part == ".." for part in re.split(r"[/\\]", name)):
        return "path escapes the archive ('..')"
    if "\x00" in name:
        return "NUL in name"
    return None


def stream_zip(
    path: Path, relpath: str, max_entry: int = 0, reuse: Reuse | None = None
) -> Iterator[Entry | Failure]:
    """Entries and Failures of a zipped export (ChatGPT, Claude, Google Takeout).

    Only ``conversations.json`` (at the root or in one folder) and ``…/Gemini
    Apps/MyActivity.json`` are read. Every other member is checked by name only: unsafe
    names (absolute, ``..``), symlinks and members that do not belong in a chat export
    each give a Failure (they are never read). A member is refused when encrypted, larger
    than :data:`MAX_MEMBER_BYTES`, compressed more than :data:`MAX_RATIO`:1, or when it
    decompresses past its declared size.
    """
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        yield Failure(relpath, f"not a readable zip archive: {exc}")
        return
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            yield Failure(
                relpath, f"zip lists {len(infos)} members (limit {MAX_MEMBERS}); not read"
            )
            return
        exports: list[zipfile.ZipInfo] = []
        odd: list[Failure] = []
        for info in infos:
            name = info.filename
            why = _unsafe(name)
            if why is None and stat.S_ISLNK(info.external_attr >> 16):
                why = "symbolic link"
            if why is not None:
                odd.append(
                    Failure(relpath, f"zip member {name!r}: unsafe member ({why}); not read")
                )
                continue
            if _EXPORT_MEMBER.search(name):
                exports.append(info)
            elif not _EXPECTED_MEMBER.search(name):
                odd.append(
                    Failure(
                        relpath,
                        f"zip member {name!r}: unexpected member in a chat export; not read",
                    )
                )
        if not exports:  # some other zip: one failure, not one per member
            yield Failure(
                relpath,
                "not a recognised chat export: the zip holds no conversations.json "
                "or Gemini Apps/MyActivity.json",
            )
            return
        yield from odd
        exports.sort(key=lambda i: (i.filename.count("/"), i.filename))
        for info in exports:
            yield from _read_member(zf, info, relpath, max_entry, reuse)


def _read_member(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, relpath: str, max_entry: int,
    reuse: Reuse | None,
) -> Iterator[Entry | Failure]:
    """One export member's Entries and Failures. A member refused unread tells
    ``reuse`` that reading stopped short: its conversations are not known gone."""
    name = info.filename
    size, packed = info.file_size, info.compress_size
    refused: str | None = None
    if info.flag_bits & 0x1:
        refused = "encrypted; not read"
    elif size > MAX_MEMBER_BYTES:
        refused = (
            f"{size} bytes uncompressed exceeds the limit of {MAX_MEMBER_BYTES} "
            "(possible zip bomb); not read"
        )
    elif size > 1024 * 1024 and (packed == 0 or size / packed > MAX_RATIO):
        ratio = "infinite" if packed == 0 else f"{size / packed:.0f}:1"
        refused = f"compression ratio {ratio} exceeds {MAX_RATIO}:1 (possible zip bomb); not read"
    else:
        try:
            member = zf.open(info)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError) as exc:
            refused = f"cannot be opened: {exc}"
    if refused is not None:
        if reuse is not None:
            reuse.stopped()
        yield Failure(relpath, f"zip member {name!r}: {refused}")
        return
    with member:
        for item in stream_json(member, relpath, f"{relpath}!{name}", size, max_entry, reuse):
            if isinstance(item, Failure) and not item.reason.startswith(
                ("zip member", "conversation")
            ):
                item = Failure(item.path, f"zip member {name!r}: {item.reason}", item.line)
            yield item
