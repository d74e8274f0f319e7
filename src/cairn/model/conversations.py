"""A conversation of an AI chat export as a thread (the web UI's conversations page)."""

from __future__ import annotations

from dataclasses import dataclass

from cairn.model.views import StoredDocument, StoredUnit


@dataclass(frozen=True, slots=True)
class Conversation:
    """One conversation, its messages in order.

    Attributes:
        document: the conversation's document (``metadata`` holds provider, model,
            message and alternate counts).
        messages: its message units in thread order; the canonical branch only unless
            asked for alternates (those have ``extra["alternate"]`` true).
        alternates: how many messages are off the canonical branch (shown or not).
        query: the search within it (``""``: none); ``matches`` the ids of the
            messages it found, best first.
    """

    document: StoredDocument
    messages: tuple[StoredUnit, ...]
    alternates: int
    query: str = ""
    matches: tuple[str, ...] = ()
