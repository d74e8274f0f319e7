"""The narrow store protocol of LLM enrichment (``store.enrichments``): the reply
cache keyed by (model, prompt version, content hash), each conversation's enrichment,
the typed relations between conversations, and the enrichment units (summary and
insights) written beside a conversation's own units.

All of it is derived data: a user's file is never written, and what a re-index drops
(the units of a re-written document, the edges of its units) is rebuilt from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from cairn.model import Edge, Unit
    from cairn.model.enrich import Enrichment, RelationLabel


class EnrichIndex(Protocol):
    """The enrichment tables of one index."""

    # --- the reply cache -------------------------------------------------------------
    def cached(self, key: str) -> tuple[str, str] | None:
        """``(status, reply)`` stored under a cache key (``status`` ``ok`` with the
        validated reply as JSON text, or ``invalid`` with the reason), or ``None``."""
        ...

    def cache_put(self, key: str, *, kind: str, model: str, prompt_version: str,
                  content_hash: str, status: str, reply: str) -> None:
        """Store one reply (or the reason it was refused) under ``key``; committed at
        once, so an interrupted run resumes after the last stored reply."""
        ...

    # --- conversations ----------------------------------------------------------------
    def save_enrichment(self, enrichment: Enrichment) -> None:
        """Store (replace) a conversation's enrichment."""
        ...

    def enrichment(self, document_id: str) -> Enrichment | None:
        """A conversation's enrichment, or ``None``."""
        ...

    def enrichments(self) -> list[Enrichment]:
        """Every stored enrichment, by document id."""
        ...

    def forget(self, document_ids: Sequence[str]) -> int:
        """Drop the enrichments (and relations, and enrichment units) of these
        documents; returns how many enrichments."""
        ...

    def without_units(self) -> list[str]:
        """Enriched documents that exist but have lost their enrichment units (a
        re-index re-wrote them)."""
        ...

    def orphans(self) -> list[str]:
        """Enriched document ids no longer in the index."""
        ...

    def put_units(self, document_id: str, units: Sequence[Unit]) -> None:
        """Replace the document's enrichment units (kinds ``summary``/``insight``) with
        ``units`` (final ids, ordinals after the document's own units); they are
        searchable like any unit."""
        ...

    # --- relations --------------------------------------------------------------------
    def save_relations(self, labels: Sequence[RelationLabel]) -> None:
        """Store (replace) relation labels, one per ordered document pair."""
        ...

    def relations(self) -> list[RelationLabel]:
        """Every stored relation label."""
        ...

    def llm_edges(self, edges: Sequence[Edge]) -> int:
        """Replace every edge of origin ``llm`` with ``edges`` (those whose source unit
        exists); returns how many were written."""
        ...

    def user_tags(self, limit: int) -> list[str]:
        """The user's tags (units' own and inherited, lower-cased), most used first."""
        ...

    def counts(self) -> dict[str, int]:
        """``{"cache", "conversations", "insights", "relations", "llm_edges"}``."""
        ...
