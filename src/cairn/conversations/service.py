"""``cairn.conversations``: the conversations of the index's chat exports, one thread
with or without its alternates, and a keyword search within one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from cairn.conversations import reading_order
from cairn.errors import NotFound
from cairn.formats import conversation_formats
from cairn.model import MESSAGE

if TYPE_CHECKING:
    from cairn.model import Conversation, StoredDocument
    from cairn.store import Store

KeywordSearch = Callable[[str, int, bool], list[str]]
"""``search(query, limit, alternates) -> unit ids``: a keyword search over the index."""


class ConversationService:
    """The conversations of one index.

    Args:
        store: the index.
        keyword_unit_ids: a keyword search returning the units found, best first
            (``search(query, limit, alternates)``).
    """

    def __init__(self, store: Store, keyword_unit_ids: KeywordSearch) -> None:
        self._store = store
        self._search = keyword_unit_ids

    def list(self, *, limit: int = 200, offset: int = 0) -> list[StoredDocument]:
        """The conversations of every chat export in the index, newest first (a
        document of a format the registry does not call a conversation is not one).

        Raises:
            QueryError: ``limit`` < 1 or ``offset`` < 0.
        """
        chats = [f for f in self._store.filter_values("format") if f in conversation_formats()]
        return self._store.documents_by_format(chats, limit=limit, offset=offset)

    def thread(self, document_id: str, *, alternates: bool = False,
               query: str = "", limit: int = 50) -> Conversation:
        """One conversation as a thread; with ``query``, the messages it finds within
        it (keyword search restricted to this conversation, at most ``limit``).

        Raises:
            NotFound: no conversation has this id (or the document is a note).
        """
        doc = self._store.document(document_id)
        if doc is None or doc.format not in conversation_formats():
            raise NotFound(f"{document_id}: no conversation has this id")
        units = [u for u in reading_order(self._store.units_of(doc.id)) if u.kind == MESSAGE]
        off = [u for u in units if u.extra.get("alternate")]
        shown = units if alternates else [u for u in units if not u.extra.get("alternate")]
        matches: tuple[str, ...] = ()
        if query.strip():
            own = {u.id for u in shown}
            found = self._search(f"{query} id:{doc.id}", limit, alternates)
            matches = tuple(u for u in found if u in own)
        from cairn.model import Conversation

        return Conversation(doc, tuple(shown), len(off), query, matches)
