"""Skipping the conversations of an export that a caller holds already, before they are
built: what the stream reader yields per entry, and the hash it is recognised by.

A conversation is recognised by a digest of its text as written in the export (the
top-level array item, byte for byte after UTF-8 decoding), of the chat parser's own
source code (a new parser builds different documents from the same text, so every
conversation counts as changed after an upgrade) and, for the providers whose
conversations carry no id (their key is derived from the entry's place in the file),
of that fallback key. An entry whose digest the caller knows is neither turned into a
document nor handed on: only its place in the export is reported.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from cairn.model import Document

PARSER_REVISION = "1"
"""Bumped by hand when documents change for a reason outside this package's source."""

POSITIONAL = frozenset({"aistudio", "librechat", "linear"})
"""Providers whose readers name an id-less conversation after its place in the file."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One conversation of an export.

    Attributes:
        digest: :func:`entry_digest` of its text (``""`` when it has no text of its own:
            a file holding one conversation object, or when no :class:`Reuse` was given).
        doc: the document, or ``None`` when the caller knew the digest (not built).
    """

    digest: str
    doc: Document | None


@dataclass(frozen=True, slots=True)
class Reuse:
    """What a caller already holds of an export.

    Attributes:
        unchanged: given an entry's digest, whether the caller holds that very entry and
            wants it skipped (called once per entry; ``True`` claims it).
        claimed: given a conversation id, whether an entry already skipped in this read
            had it (so a later copy is reported as a duplicate, as when both are built).
        stopped: called when reading stops before the end of the export (truncated or
            invalid JSON, a zip member past its size): the conversations not read are
            not known to be gone.
    """

    unchanged: Callable[[str], bool]
    claimed: Callable[[str], bool]
    stopped: Callable[[], None] = lambda: None


@cache
def parser_fingerprint() -> str:
    """A hash of this package's source files and :data:`PARSER_REVISION`: it changes
    whenever the documents built from the same export could."""
    h = hashlib.blake2b(PARSER_REVISION.encode(), digest_size=16)
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode())
        try:
            h.update(path.read_bytes())
        except OSError:  # unreadable source: a fresh value, so nothing is reused
            h.update(os.urandom(16))
    return h.hexdigest()


def entry_digest(text: str, provider: str, fallback_id: str) -> str:
    """The digest of one top-level entry's ``text`` read as ``provider``; the
    ``fallback_id`` counts only for :data:`POSITIONAL` providers."""
    h = hashlib.blake2b(parser_fingerprint().encode(), digest_size=16)
    h.update(provider.encode() + b"\x00")
    if provider in POSITIONAL:
        h.update(fallback_id.encode("utf-8", "surrogatepass") + b"\x00")
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()
