"""Conversations of AI chat exports as threads: the list, one thread with or without
its alternates, and a search within one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cairn.app.parts import Parts
from cairn.errors import NotFound
from cairn.model import MESSAGE

if TYPE_CHECKING:
    from cairn.model import Conversation, StoredDocument, StoredUnit

FILE_FORMATS = frozenset({"org", "markdown", "text", "okf"})
"""Formats whose document is a file of its own; every other format is a chat export's."""


def thread_order(main: list[StoredUnit], off: list[StoredUnit]) -> list[StoredUnit]:
    """The canonical thread with each alternate message placed beside the branch it
    leaves: after the last message already placed that shares its parent (its sibling
    on the main branch, or an earlier alternate), else after its parent, else at the
    end (``extra["parent_message_id"]`` names the parent)."""
    out = list(main)
    for u in off:
        parent = u.extra.get("parent_message_id")
        at = None
        for i, m in enumerate(out):
            if parent is not None and (m.extra.get("parent_message_id") == parent
                                       or m.extra.get("message_id") == parent):
                at = i
        out.insert(len(out) if at is None else at + 1, u)
    return out


def reading_order(units: Sequence[StoredUnit]) -> list[StoredUnit]:
    """Units in the order a reader meets them, the one order every view of a
    conversation uses (``cairn show``, the web thread, OKF and text exports).

    A document without chat messages: document order. A conversation: its units that
    belong to no message (the preamble) first, then the canonical messages in the order
    the importer read them (the user's thread: ChatGPT's and Claude's message tree,
    else the export's list order; never sorted by time, since a time in an export can
    be wrong), each alternate placed beside the branch it leaves
    (:func:`thread_order`), and each message followed by its own units (code blocks).
    """
    ordered = sorted(units, key=lambda u: u.ordinal)
    messages = [u for u in ordered if u.kind == MESSAGE]
    if not messages:
        return ordered
    by_id = {u.id: u for u in ordered}
    own: dict[str, list[StoredUnit]] = {}
    head: list[StoredUnit] = []
    for u in ordered:
        if u.kind == MESSAGE:
            continue
        owner, steps = u, 0
        while owner.kind != MESSAGE and owner.parent_id in by_id and steps < len(by_id):
            owner, steps = by_id[owner.parent_id], steps + 1
        (own.setdefault(owner.id, []) if owner.kind == MESSAGE else head).append(u)
    main = [m for m in messages if not m.extra.get("alternate")]
    off = [m for m in messages if m.extra.get("alternate")]
    out = head
    for m in thread_order(main, off):
        out.append(m)
        out.extend(own.get(m.id, ()))
    return out


class ConversationsMixin(Parts):
    """``Cairn.conversations`` and ``Cairn.conversation``."""

    def conversations(self, *, limit: int = 200, offset: int = 0) -> list[StoredDocument]:
        """The conversations of every chat export in the index, newest first.

        Raises:
            QueryError: ``limit`` < 1 or ``offset`` < 0.
        """
        chats = [f for f in self.store.filter_values("format") if f not in FILE_FORMATS]
        return self.store.documents_by_format(chats, limit=limit, offset=offset)

    def conversation(self, document_id: str, *, alternates: bool = False,
                     query: str = "", limit: int = 50) -> Conversation:
        """One conversation as a thread; with ``query``, the messages it finds within
        it (keyword search restricted to this conversation, at most ``limit``).

        Raises:
            NotFound: no conversation has this id (or the document is a file's).
        """
        doc = self.store.document(document_id)
        if doc is None or doc.format in FILE_FORMATS:
            raise NotFound(f"{document_id}: no conversation has this id")
        units = [u for u in reading_order(self.store.units_of(doc.id)) if u.kind == MESSAGE]
        off = [u for u in units if u.extra.get("alternate")]
        shown = units if alternates else [u for u in units if not u.extra.get("alternate")]
        matches: tuple[str, ...] = ()
        if query.strip():
            own = {u.id for u in shown}
            res = self.semantic.search(f"{query} id:{doc.id}", mode="keyword", limit=limit,
                                       alternates=alternates)
            matches = tuple(h.unit_id for h in res.hits if h.unit_id in own)
        from cairn.model import Conversation

        return Conversation(doc, tuple(shown), len(off), query, matches)
