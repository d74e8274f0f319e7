"""One indexing run, whole: files, then the graph, then chunks and embeddings.

:class:`cairn.ingest.pipeline.Indexer` brings the files into the store (discover, parse,
ids, store, resolve links); :func:`complete_run` then brings the graph up to date and
runs the embedding step, and returns the one :class:`cairn.model.Run` record with both
steps' figures (``run.graph``, ``run.embedding``) and their notices. The composition
root (:class:`cairn.app.Cairn`) only wires the parts together.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from cairn.embed.base import NO_EMBEDDER_NOTICE, Embedder
from cairn.errors import ProviderUnavailable
from cairn.ingest.chunking import ChunkConfig
from cairn.ingest.embedding import EmbedProgress, EmbedReport, embed_pass
from cairn.model import Diagnostic, EmbedStep, GraphStep, Run
from cairn.store import Store

NO_EMBED_NOTICE = (
    "--no-embed: new and changed notes were not embedded; they are found by keywords "
    "until `cairn embed` (or the next `cairn index` without --no-embed) embeds them"
)


class GraphUpdater(Protocol):
    """What the run needs of the graph: :class:`cairn.graph.service.GraphService`."""

    def is_stale(self) -> bool:
        """Whether documents changed since the last graph update."""
        ...

    def update(self, document_ids: Any = None, *, run_id: str | None = None) -> Any:
        """Bring the graph up to date; returns an ``UpdateReport``."""
        ...


@dataclass(frozen=True, slots=True)
class EmbedSettings:
    """How the embedding step runs.

    Attributes:
        embedder: returns the embedder, loading it on first call (``None``: none is
            available); called only when there is something to embed.
        notices: why no embedder is available (read after ``embedder()`` gave ``None``).
        chunk_config: the chunking settings (``types.yaml`` profiles applied).
        batch_size: texts per embedder call.
        signature: identifies the configured model (provider, model, endpoint); when
            it differs from the one the last embedding step used, the next run embeds
            every chunk into the new model's space even if no file changed.
    """

    embedder: Callable[[], Embedder | None]
    notices: Callable[[], Sequence[str]]
    chunk_config: ChunkConfig
    batch_size: int
    signature: str = ""


def embedding_pending(store: Store, settings: EmbedSettings) -> bool:
    """Whether the embedding step has work although no file changed: a unit not
    chunked yet (after ``index --no-embed``), chunks lacking a vector in the space the
    configured model last filled, or another model configured since. Cheap: loads no
    model (the model's space is remembered by the step that used it)."""
    vs = store.vectors
    if vs.has_unchunked():
        return True
    if vs.meta("embed_signature") != settings.signature:
        return True
    space = vs.meta("embed_space")
    return bool(space) and vs.missing_vectors(space or "") > 0


def complete_run(
    store: Store,
    run: Run,
    graph: GraphUpdater,
    settings: EmbedSettings,
    *,
    embed: bool = True,
    progress: EmbedProgress | None = None,
    relinked: bool = False,
) -> Run:
    """The graph and embedding steps after the files step, folded into ``run``.

    The graph is updated when the run changed something or it is stale; the embedding
    step runs when something changed or units still lack chunks (e.g. after an
    ``--no-embed`` run). Without a model (or with ``embed=False``) units are still
    chunked when the index holds vectors, so moved notes keep their cached vectors (an
    index with none is not chunked until it embeds), and the run carries one notice.
    Never raises for a missing model or an endpoint that went away. ``relinked``: links
    were resolved again (an attachment appeared or went away): the graph is updated.

    Returns:
        ``run`` with ``graph``, ``embedding``, notices added to ``warnings`` (severity
        ``info``) and ``seconds`` covering every step; saved again in the store.
    """
    t0 = time.perf_counter()
    changed = bool(run.added or run.changed or run.removed)
    graph_step: GraphStep | None = None
    if changed or relinked or graph.is_stale():
        with store.bulk_writes():  # one large transaction: checkpointed less often
            rep = graph.update(run_id=run.id)
        graph_step = GraphStep(
            changed_documents=rep.changed_documents,
            removed_documents=rep.removed_documents,
            edges_written=sum(rep.written.values()),
            edges_deleted=sum(rep.deleted.values()),
            edges=rep.edges,
            seconds=rep.seconds,
        )
    step: EmbedStep | None = None
    notices: tuple[str, ...] = ()
    if not embed and not store.vectors.any_vectors():
        # keyword-only index: chunks would only serve to keep moved notes' vectors, and
        # there are none; the first embedding run chunks every unit still pending
        notices = (NO_EMBED_NOTICE,) if changed else ()
    elif (
        changed
        or (embed and embedding_pending(store, settings))
        or (not embed and store.vectors.has_unchunked())
    ):
        # units left unchunked (a run killed before its embedding step) are chunked by
        # the next run, --no-embed included when the index holds vectors; chunks that a
        # --no-embed run made are embedded by the next run that embeds
        step, notices = _embed(store, settings, embed, progress)
    notes = tuple(Diagnostic("", n, severity="info") for n in notices)
    out = dataclasses.replace(
        run,
        graph=graph_step,
        embedding=step,
        warnings=(*run.warnings, *notes),
        seconds=round(run.seconds + time.perf_counter() - t0, 4),
    )
    with store.transaction():
        store.save_run(out)
    return out


INTERRUPTED_NOTICE = (
    "embedding interrupted: {pending} chunks still wait for a vector (found by keywords "
    "until then); `cairn embed` or the next `cairn index` embeds only those"
)


def embed_now(
    store: Store, settings: EmbedSettings, progress: EmbedProgress | None = None
) -> EmbedStep:
    """The embedding step alone (``cairn embed``): chunk units that have no chunks,
    embed chunks that have no vector in the configured model's space — what an
    interrupted or ``--no-embed`` run left — and prune. Already stored vectors are never
    embedded again. Ctrl-C stops it after the last committed batch (see
    :func:`cairn.ingest.embedding.embed_pass`).

    Returns:
        The :class:`EmbedStep`, with ``notices`` (no model available, interrupted).
    """
    step, notices = _embed(store, settings, True, progress)
    return dataclasses.replace(step, notices=notices)


def _embed(
    store: Store, settings: EmbedSettings, embed: bool, progress: EmbedProgress | None
) -> tuple[EmbedReport, tuple[str, ...]]:
    """Run the embedding pass; ``(report, notices)``."""
    emb = settings.embedder() if embed else None
    config = settings.chunk_config
    try:
        report = embed_pass(
            store,
            emb,
            config=config,
            batch_size=settings.batch_size,
            progress=progress,
        )
    except ProviderUnavailable as exc:  # e.g. the endpoint went away mid-run
        report = embed_pass(store, None, config=config)
        return report, (f"{exc}; {NO_EMBEDDER_NOTICE}",)
    if not embed:
        return report, (NO_EMBED_NOTICE,)
    if report.interrupted:
        return report, (INTERRUPTED_NOTICE.format(pending=report.pending),)
    with store.transaction():  # the model this step ran with (for embedding_pending)
        store.vectors.set_meta("embed_signature", settings.signature)
        store.vectors.set_meta("embed_space", emb.fingerprint if emb is not None else "")
    if emb is None:
        return report, tuple(settings.notices()) or (NO_EMBEDDER_NOTICE,)
    return report, ()
