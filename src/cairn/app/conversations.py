"""Conversations of AI chat exports as threads: the list, one thread with or without
its alternates, and a search within one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cairn.app.parts import Parts
from cairn.errors import NotFound

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
        units = [u for u in self.store.units_of(doc.id) if u.kind == "message"]
        off = [u for u in units if u.extra.get("alternate")]
        main = [u for u in units if not u.extra.get("alternate")]
        shown = thread_order(main, off) if alternates else main
        matches: tuple[str, ...] = ()
        if query.strip():
            own = {u.id for u in shown}
            res = self.semantic.search(f"{query} id:{doc.id}", mode="keyword", limit=limit,
                                       include_alternates=alternates)
            matches = tuple(h.unit_id for h in res.hits if h.unit_id in own)
        from cairn.model import Conversation

        return Conversation(doc, tuple(shown), len(off), query, matches)
