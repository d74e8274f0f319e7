"""Searchable first, embedded next: the embedding part of :class:`cairn.app.Cairn`.

An index run commits every file (keyword-searchable at once) before its embedding
step; that step commits vectors every few seconds, so Ctrl-C or a killed process keeps
what was finished. :meth:`EmbeddingMixin.embed` (``cairn embed``) resumes it — as the
next ``cairn index`` or ``cairn watch`` does by itself — and a semantic or hybrid
search over a partly embedded index ranks by the vectors that exist and says how many
units still wait (a note in :attr:`SearchResult.notes`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from cairn.app.reliability import ReliabilityMixin
from cairn.model import EmbedStep

if TYPE_CHECKING:
    from cairn.ingest.chunking import ChunkConfig
    from cairn.ingest.embedding import EmbedProgress
    from cairn.ingest.run import EmbedSettings
    from cairn.model.reliability import Wait
    from cairn.search.service import SearchResult


WAITING_NOTE = (
    "{n} units are still waiting to be embedded: they are found by keywords only until "
    "the embedding step reaches them (an index run may be embedding now; else run "
    "`cairn embed`)"
)


class EmbeddingMixin(ReliabilityMixin):
    """``embed`` (resume the embedding step) and the waiting-units note of a search."""

    _embed_signature: str
    last_embed: EmbedStep | None

    def _chunk_config(self) -> ChunkConfig:
        raise NotImplementedError

    def _embed_settings(self) -> EmbedSettings:
        """How the embedding step runs with this index's model and chunking."""
        from cairn.ingest.run import EmbedSettings

        sem = self.semantic
        return EmbedSettings(
            embedder=lambda: sem.embedder,
            notices=lambda: sem.notices,
            chunk_config=self._chunk_config(),
            batch_size=sem.config.embed.batch_size,
            signature=self._embed_signature,
        )

    def embed(
        self,
        *,
        progress: EmbedProgress | None = None,
        wait: Wait = "config",
        on_wait: Callable[[str], None] | None = None,
    ) -> EmbedStep:
        """Finish the embedding step: chunk units without chunks and embed chunks
        without a vector in the configured model's space (what an interrupted, killed or
        ``--no-embed`` run left), then prune unused vectors. Files are not looked at
        (``cairn index`` does that). Vectors already stored are never embedded again.

        Args:
            progress: ``progress(done, total, phase)``, phase ``chunk`` or ``embed``.
            wait / on_wait: for the writer lock (see :meth:`writing`).

        Returns:
            The :class:`EmbedStep` (also :attr:`last_embed`): ``embedded`` texts,
            ``pending`` chunks still without a vector, ``interrupted`` after Ctrl-C
            (finished batches are kept), ``notices`` when no model is available.

        Raises:
            cairn.store.lock.IndexBusy: another process is writing this index.
            cairn.errors.StoreError: the index cannot be written.
        """
        from cairn.ingest.run import embed_now

        with self.writing(wait, on_wait):
            self._reload_types()
            step = embed_now(self.store, self._embed_settings(), progress)
        self.last_embed = step
        return step

    def _reload_types(self) -> object:
        raise NotImplementedError

    def waiting_units(self) -> int | None:
        """Units the configured model's semantic search cannot find yet (see
        :meth:`cairn.store.VectorIndex.waiting_units`); ``None`` when no model is
        available. Loads the model (for its space)."""
        emb = self.semantic.embedder
        return None if emb is None else self.store.vectors.waiting_units(emb.fingerprint)

    def _record_waiting(self) -> None:
        """At the end of an index run: count the units still waiting for a vector in
        the loaded model's space and leave the count in the index
        (:meth:`cairn.store.sql.waiting.WaitingCounts.record_waiting`), so that a
        server, or the next ``cairn search``, need not scan for it. Nothing when no
        model was loaded (the run embedded nothing)."""
        emb = self.semantic._embedder
        if emb is None or not hasattr(emb, "fingerprint") or not self.semantic.has_vectors():
            return
        with self.store.transaction():
            self.store.vectors.record_waiting(emb.fingerprint)

    def _with_waiting(self, result: SearchResult, mode: str | None) -> SearchResult:
        """``result`` with a note on units still waiting for a vector, when the search
        ranked by meaning (a keyword search, or an index without vectors, loads no
        model here)."""
        if mode == "keyword" or not self.semantic.has_vectors():
            return result
        n = self.waiting_units()
        if not n:
            return result
        return dataclasses.replace(result, notes=(*result.notes, WAITING_NOTE.format(n=n)))
