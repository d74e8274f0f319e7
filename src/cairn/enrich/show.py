"""``cairn enrich show``: one conversation's enrichment, found by document or unit id,
a unique id prefix, or a path (``PATH[:LINE]``, as ``cairn show`` takes it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cairn.errors import NotFound

if TYPE_CHECKING:
    from cairn.model import StoredDocument
    from cairn.model.enrich import Enrichment
    from cairn.store import Store

Locate = Callable[[str], "tuple[str, str, int | None] | None"]
"""``PATH[:LINE]`` → ``(root id, relpath, line)``, or ``None`` when it names no file."""


@dataclass(frozen=True, slots=True)
class ConversationRelation:
    """A relation the model found between this conversation and another.

    Attributes:
        relation: its type (``builds_on`` …); ``direction``: ``out`` when this
            conversation is its source, else ``in``.
        document_id / title: the other conversation (``title`` empty when it is gone).
        confidence / reason: the model's; ``similarity``: of the two conversations'
            embeddings.
    """

    relation: str
    direction: str
    document_id: str
    title: str
    confidence: float
    reason: str
    similarity: float


@dataclass(frozen=True)
class EnrichedConversation:
    """``cairn enrich show``: one conversation's enrichment and its relations."""

    document_id: str
    title: str
    path: str
    enrichment: Enrichment
    relations: tuple[ConversationRelation, ...] = field(default_factory=tuple)


def enriched_document(store: Store, ref: str, locate: Locate) -> StoredDocument:
    """The enriched conversation ``ref`` names.

    Raises:
        NotFound: nothing matches, a prefix or a file is ambiguous, or what matches
            is not enriched.
    """
    en = store.enrichments
    doc_id = ref if store.document(ref) is not None else store.unit_owner(ref)
    if doc_id is None and (loc := locate(ref)) is not None:
        root_id, rel, line = loc
        docs = store.documents_at(root_id, rel)
        if line is not None:  # the conversation whose units hold the line
            docs = [d for d in docs if any(
                u.line_start <= line <= u.line_end for u in store.units_of(d.id))]
        # an export holds many conversations: the enriched ones among them
        enriched = [d for d in docs if en.enrichment(d.id) is not None]
        if len(enriched) > 1:
            raise NotFound(
                f"{ref}: {len(enriched)} enriched conversations in this file; "
                "name one by its id (`cairn show PATH` lists them)"
            )
        doc_id = enriched[0].id if enriched else docs[0].id if docs else None
    if doc_id is None and len(ref) >= 4:
        owners = {
            i if kind == "document" else store.unit_owner(i)
            for kind, i in store.find_ids(ref)
        }
        owners.discard(None)
        if len(owners) > 1:
            raise NotFound(f"{ref}: ambiguous id prefix ({len(owners)} conversations)")
        doc_id = next(iter(owners), None)
    doc = store.document(doc_id) if doc_id else None
    if doc is None:
        raise NotFound(f"{ref}: no conversation matches (an id, an id prefix or a path)")
    if en.enrichment(doc.id) is None:
        raise NotFound(f"{ref}: {doc.title!r} is not enriched yet (run `cairn enrich`)")
    return doc


def enriched_conversation(store: Store, ref: str, locate: Locate) -> EnrichedConversation:
    """One conversation's enrichment: ``ref`` is a document id, a unit id (of any of
    its units), a unique id prefix (at least 4 characters) or a path
    (``PATH[:LINE]``; a file of several enriched conversations needs the line or
    an id).

    Raises:
        NotFound: no such conversation, ``ref`` is ambiguous, or it is not enriched.
    """
    en = store.enrichments
    doc = enriched_document(store, ref, locate)
    e = en.enrichment(doc.id)
    assert e is not None  # checked by enriched_document
    rels: list[ConversationRelation] = []
    for r in en.relations():
        if doc.id not in (r.source_document_id, r.target_document_id):
            continue
        other = r.target_document_id if r.source_document_id == doc.id else r.source_document_id
        od = store.document(other)
        out = other == r.target_document_id
        rels.append(ConversationRelation(
            r.relation, "out" if out else "in", other, od.title if od else "",
            r.confidence, r.reason, r.similarity))
    return EnrichedConversation(doc.id, doc.title, doc.path, e, tuple(rels))
