"""The vocabulary of LLM enrichment: what a model said about a conversation
(summary, insights, tags) and about a pair of conversations (a typed relation).

Everything here is derived data: kept in the index's own tables (``store.enrichments``),
never written to a user's file, and rebuilt from the reply cache after a re-index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SUMMARY = "summary"
"""Unit kind of a conversation's summary (one per enriched conversation)."""
INSIGHT = "insight"
"""Unit kind of one atomic insight of a conversation."""
ENRICHMENT_KINDS = (SUMMARY, INSIGHT)

InsightType = Literal["decision", "learning", "pattern", "question"]
INSIGHT_TYPES: tuple[InsightType, ...] = ("decision", "learning", "pattern", "question")

LlmRelation = Literal[
    "references", "builds_on", "contradicts", "implements", "derived_from", "prerequisite",
    "related",
]
LLM_RELATIONS: tuple[LlmRelation, ...] = (
    "references", "builds_on", "contradicts", "implements", "derived_from", "prerequisite",
    "related",
)

TagStatus = Literal["existing", "alias", "proposed"]
"""Where an enrichment tag comes from: one of the user's tags (``existing``), an alias
mapped onto one (``alias``), or a new tag the model proposes (``proposed``)."""


@dataclass(frozen=True, slots=True)
class Insight:
    """One atomic insight: its ``type``, its ``text`` and the ids of the message units
    it came from (``messages``)."""

    type: InsightType
    text: str
    messages: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EnrichTag:
    """A tag the model gave a conversation: ``tag`` (the vocabulary's spelling),
    ``status`` (see :data:`TagStatus`) and ``given`` (what the model wrote)."""

    tag: str
    status: TagStatus
    given: str


@dataclass(frozen=True, slots=True)
class Enrichment:
    """What the model said about one conversation.

    Attributes:
        document_id: the conversation's document.
        content_hash: SHA-256 of the (redacted) text the model saw.
        model / prompt_version: what produced it (with ``content_hash``: the cache key).
        summary: a few sentences.
        insights: 3–10 :class:`Insight` values.
        tags: the conversation's tags, the user's vocabulary first (kept apart from the
            user's own tags).
        created: ISO 8601 UTC time the reply was stored.
    """

    document_id: str
    content_hash: str
    model: str
    prompt_version: str
    summary: str
    insights: tuple[Insight, ...]
    tags: tuple[EnrichTag, ...] = ()
    created: str = ""


@dataclass(frozen=True, slots=True)
class RelationLabel:
    """A typed relation the model gave a candidate pair of conversations:
    ``source_document_id`` ``relation`` ``target_document_id`` (``builds_on``: the
    source builds on the target), its ``confidence`` in [0, 1], the model's one-line
    ``reason``, the pair's embedding ``similarity`` and the ``model``."""

    source_document_id: str
    target_document_id: str
    relation: LlmRelation
    confidence: float
    reason: str
    similarity: float
    model: str
    prompt_version: str
