"""Searchable first, embedded next: the embedding step on its own (``Cairn.embedding``).

An index run commits every file (keyword-searchable at once) before its embedding
step; that step commits vectors every few seconds, so Ctrl-C or a killed process keeps
what was finished. :meth:`EmbeddingStep.run` (``cairn embed``) resumes it — as the next
``cairn index`` or ``cairn watch`` does by itself — and a semantic or hybrid search over
a partly embedded index ranks by the vectors that exist and says how many units still
wait (:meth:`EmbeddingStep.waiting_note`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from cairn.embed.base import Embedder
from cairn.ingest.embedding import EmbedProgress
from cairn.ingest.run import EmbedSettings, embed_now
from cairn.model import EmbedStep
from cairn.model.reliability import Wait
from cairn.store import Store


def waiting_note(n: int) -> str:
    """The note a search adds when ``n`` units still wait for a vector."""
    return (
        f"{n} {'unit is' if n == 1 else 'units are'} still waiting to be embedded: "
        f"{'it is' if n == 1 else 'they are'} found by keywords only until the embedding "
        "step reaches them (an index run may be embedding now; else run `cairn embed`)"
    )

Writing = Callable[[Wait, Callable[[str], None] | None], AbstractContextManager[None]]
"""``writing(wait, on_wait)``: the index's writer lock held for a block."""


class EmbeddingStep:
    """``embed`` (resume the embedding step) and the count of units still waiting.

    Args:
        store: the index.
        settings: how the step runs now (model, chunking with the note types applied).
        writing: holds the writer lock (see :data:`Writing`).
        reload_types: reads the note types again before a step.
        embedder: the configured embedder, loaded on first call (``None``: none).
        loaded: the embedder if it is loaded already, else ``None`` (never loads it).
        has_vectors: whether the index holds any vectors.
    """

    def __init__(
        self,
        store: Store,
        *,
        settings: Callable[[], EmbedSettings],
        writing: Writing,
        reload_types: Callable[[], object],
        embedder: Callable[[], Embedder | None],
        loaded: Callable[[], object | None],
        has_vectors: Callable[[], bool],
    ) -> None:
        self.store = store
        self.settings = settings
        self._writing = writing
        self._reload_types = reload_types
        self._embedder = embedder
        self._loaded = loaded
        self._has_vectors = has_vectors

    def run(
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
            wait / on_wait: for the writer lock
                (:meth:`cairn.ingest.service.IndexService.writing`).

        Returns:
            The :class:`EmbedStep`: ``embedded`` texts,
            ``pending`` chunks still without a vector, ``interrupted`` after Ctrl-C
            (finished batches are kept), ``notices`` when no model is available.

        Raises:
            cairn.store.lock.IndexBusy: another process is writing this index.
            cairn.errors.StoreError: the index cannot be written.
        """
        with self._writing(wait, on_wait):
            self._reload_types()
            return embed_now(self.store, self.settings(), progress)

    def waiting_units(self) -> int | None:
        """Units the configured model's semantic search cannot find yet (see
        :meth:`cairn.store.VectorIndex.waiting_units`); ``None`` when no model is
        available. Loads the model (for its space)."""
        emb = self._embedder()
        return None if emb is None else self.store.vectors.waiting_units(emb.fingerprint)

    def record_waiting(self) -> None:
        """At the end of an index run: count the units still waiting for a vector in
        the loaded model's space and leave the count in the index
        (:meth:`cairn.store.VectorIndex.record_waiting`), so that a server, or the next
        ``cairn search``, need not scan for it. Nothing when no model was loaded (the
        run embedded nothing)."""
        emb = self._loaded()
        fingerprint = getattr(emb, "fingerprint", None)
        if emb is None or fingerprint is None or not self._has_vectors():
            return
        with self.store.transaction():
            self.store.vectors.record_waiting(fingerprint)

    def waiting_note(self, mode: str | None) -> str | None:
        """The note a search adds on units still waiting for a vector, when it ranked
        by meaning (a keyword search, or an index without vectors, loads no model
        here); ``None`` when there is nothing to say."""
        if mode == "keyword" or not self._has_vectors():
            return None
        n = self.waiting_units()
        return waiting_note(n) if n else None
