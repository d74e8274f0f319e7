"""How :class:`cairn.app.Cairn` builds each feature's service: what each one is handed
(the store, the configuration and the few callables it needs, never the ``Cairn``)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from cairn.config import Config, in_file, load_config
from cairn.embed.profile import fast_embed
from cairn.errors import ConfigError
from cairn.search.service import SemanticConfig

if TYPE_CHECKING:
    from cairn.agenda.service import AgendaService
    from cairn.app import Cairn
    from cairn.conversations.service import ConversationService
    from cairn.enrich.service import EnrichService
    from cairn.evaluation import Evaluator
    from cairn.export.service import ExportService
    from cairn.fields.service import FieldsService
    from cairn.graph.queries import GraphQueries
    from cairn.graph.service import GraphService
    from cairn.ingest.background import BackgroundIndex
    from cairn.ingest.embed_step import EmbeddingStep
    from cairn.ingest.service import IndexService
    from cairn.ingest.static_training import StaticTrainer
    from cairn.maintain.service import MaintainService
    from cairn.memory.service import MemoryService
    from cairn.redact.service import RedactService
    from cairn.store.copy import IndexCopier


GRAPH_REFRESH = threading.Lock()
"""Serialises graph refreshes triggered by reads (a refresh writes), in the whole
process."""


def search_settings(config: Config) -> SemanticConfig:
    """The search settings of ``config``; every given ``[index]`` and ``[chunking]``
    setting is checked now, before a run, not after its files were indexed (their
    modules load only when those tables are given: a keyword search needs neither).

    Raises:
        ConfigError: a bad value, naming it and the configuration file.
    """
    try:
        if config.index:
            from cairn.ingest.limits import IndexLimits

            IndexLimits.from_mapping(config.index)
        if config.chunking:
            from cairn.ingest.chunking import ChunkConfig

            ChunkConfig.from_mapping(config.chunking)
        return SemanticConfig.from_mapping(
            {"embed": fast_embed(config), "fusion": config.fusion, "chunking": config.chunking,
             "rerank": config.rerank}
        )
    except ConfigError as exc:
        raise in_file(exc, config.config_file) from None


def conversations(cairn: Cairn) -> ConversationService:
    """The conversations of the index's chat exports (:mod:`cairn.conversations`)."""
    from cairn.conversations.service import ConversationService

    def keyword(query: str, limit: int, alternates: bool) -> list[str]:
        res = cairn.semantic.search(query, mode="keyword", limit=limit, alternates=alternates)
        return [h.unit_id for h in res.hits]

    return ConversationService(cairn.store, keyword)


def enrich(cairn: Cairn) -> EnrichService:
    """Summaries, insights and relations of conversations by the ``[enrich]`` model
    (:mod:`cairn.enrich.service`)."""
    from cairn.enrich.relations import Vectors
    from cairn.enrich.service import EnrichService

    return EnrichService(
        cairn.store, cairn.config, writing=cairn.runs.writing,
        vectors=Vectors(cairn.semantic.has_vectors, lambda: cairn.semantic.embedder),
        locate=cairn.notes.locate_path,
    )


def memory(cairn: Cairn) -> MemoryService:
    """Agent memory on OKF bundles (:mod:`cairn.memory.service`)."""
    from cairn.memory.service import MemoryService

    return MemoryService(
        cairn.store, cairn.config, index=cairn.index, index_paths=cairn.index_paths,
        search=lambda q, mode, limit: cairn.search(q, mode=mode, limit=limit).hits,
        embedder=lambda: cairn.semantic.embedder,
        prune_backups=lambda: cairn.maintain.prune_backups(),
    )


def maintain(cairn: Cairn) -> MaintainService:
    """The dream cycle, backups and restore (:mod:`cairn.maintain.service`)."""
    from cairn.maintain.service import MaintainService

    return MaintainService(
        cairn.store, cairn.config, types=lambda: cairn.types,
        fresh_graph=lambda: cairn.graph.fresh(), index_paths=cairn.index_paths,
        maintain_memory=lambda bundle, dry_run: cairn.memory.maintain(bundle, dry_run=dry_run),
    )


def fields(cairn: Cairn) -> FieldsService:
    """Facets of a search, hits as table columns, a term across the index
    (:mod:`cairn.fields.service`)."""
    from cairn.fields.service import FieldsService

    def candidates(query: str, mode: str | None, depth: int, alternates: bool) -> list[str]:
        return cairn.semantic.candidates(query, mode=mode, limit=depth,
                                        include_alternates=alternates)

    return FieldsService(cairn.store, cairn.config.search.weights, candidates)


def redact(cairn: Cairn) -> RedactService:
    """The ingest hook's redaction, what doors show of a file, the scan
    (:mod:`cairn.redact.service`)."""
    from cairn.redact.service import RedactService

    return RedactService(cairn.store, cairn.config)


def export(cairn: Cairn) -> ExportService:
    """Export as an OKF bundle, an Obsidian vault or JSON, and the round trip
    (:mod:`cairn.export.service`)."""
    from cairn.export.service import ExportService

    def keyword_documents(query: str) -> set[str]:
        hits = cairn.search(query, mode="keyword", limit=10_000).hits
        return {h.document_id for h in hits}

    return ExportService(
        cairn.store, cairn.config, keyword_documents=keyword_documents,
        shown_text=cairn.redact.shown_text, fresh_graph=lambda: cairn.graph.fresh(),
        scratch=lambda db: type(cairn)(load_config(db=db)),
    )


def graph(cairn: Cairn) -> GraphQueries:
    """The graph as doors ask it, brought up to date before each read
    (:mod:`cairn.graph.queries`)."""
    from cairn.graph.queries import GraphQueries
    from cairn.ingest.background import BackgroundIndex

    return GraphQueries(cairn.store, lambda: cairn.graph_service,
                        busy=BackgroundIndex.busy, refresh_lock=GRAPH_REFRESH)


def graph_service(cairn: Cairn) -> GraphService:
    """The graph service over the index, with the note types and ``[graph]``."""
    from cairn.export.graph import render as render_graph
    from cairn.graph.expand import ExpandConfig
    from cairn.graph.service import GraphService

    return GraphService(cairn.store, types=cairn.types.merged, renderer=render_graph,
                        expand_config=ExpandConfig.from_mapping(cairn.config.graph))


def agenda(cairn: Cairn) -> AgendaService:
    """Deadlines, scheduled items and timestamps day by day
    (:mod:`cairn.agenda.service`)."""
    from cairn.agenda.service import AgendaService

    return AgendaService(cairn.store)


def storage(cairn: Cairn) -> IndexCopier:
    """This index copied into another backend, under its writer lock
    (:mod:`cairn.store.copy`)."""
    from cairn.store.copy import IndexCopier

    return IndexCopier(cairn.store, cairn.writer_lock)


def evaluation(cairn: Cairn) -> Evaluator:
    """This index's model and settings measured on a BEIR data set
    (:mod:`cairn.evaluation`)."""
    from cairn.evaluation import Evaluator

    return Evaluator(cairn.store, cairn.config, lambda: cairn.semantic.embedder,
                     cairn.semantic.config.fusion)


def embedding(cairn: Cairn) -> EmbeddingStep:
    """The embedding step on its own and the units still waiting for a vector
    (:mod:`cairn.ingest.embed_step`)."""
    from cairn.ingest.chunking import ChunkConfig
    from cairn.ingest.embed_step import EmbeddingStep
    from cairn.ingest.run import EmbedSettings

    sem = cairn.semantic

    def chunk_config() -> ChunkConfig:  # [chunking] with the note types' profiles
        cfg = ChunkConfig.from_mapping(cairn.config.chunking)
        return cfg.with_types(cairn.types.merged) if cairn.types.merged is not None else cfg

    def settings() -> EmbedSettings:
        return EmbedSettings(
            embedder=lambda: sem.embedder, notices=lambda: sem.notices,
            chunk_config=chunk_config(), batch_size=sem.config.embed.batch_size,
            signature=cairn._embed_signature,
        )

    return EmbeddingStep(
        cairn.store, settings=settings, writing=cairn.runs.writing,
        reload_types=cairn._reload_types, embedder=lambda: sem.embedder,
        loaded=lambda: sem._embedder, has_vectors=sem.has_vectors,
    )


def runs(cairn: Cairn) -> IndexService:
    """Index runs, whole (:mod:`cairn.ingest.service`)."""
    from cairn.ingest.service import IndexService, RunHooks
    from cairn.redact.fingerprint import index_config_hash

    def after_run() -> None:
        cairn.enrich.refresh()  # enrichment units and llm edges a re-index dropped
        cairn.embedding.record_waiting()  # for a server, or the next search, to take

    hooks = RunHooks(
        graph=lambda: cairn.graph_service, reload_types=cairn._reload_types,
        embed_settings=lambda: cairn.embedding.settings(),
        redactor=lambda: cairn.redact.redactor(),
        scrubber=lambda: cairn.redact.message_scrubber(),
        config_hash=lambda: index_config_hash(cairn.config),
        after_run=after_run, discard_new=cairn._discard_if_new,
    )
    return IndexService(cairn.store, cairn.config, writer_lock=cairn.writer_lock, hooks=hooks)


def background(cairn: Cairn) -> BackgroundIndex:
    """A server's index runs: on a thread, or in the child process a server attaches
    (:func:`cairn.serving.index_worker.attach`)."""
    from cairn.ingest.background import BackgroundIndex

    return BackgroundIndex(lambda: cairn.index(), reload_types=cairn._reload_types)


def training(cairn: Cairn) -> StaticTrainer:
    """The fast profile's model trained on this index
    (:mod:`cairn.ingest.static_training`)."""
    from cairn.ingest.static_training import StaticTrainer

    return StaticTrainer(
        cairn.store, cairn.config, writing=cairn.runs.writing, embedding=cairn.embedding,
        use_embedder=cairn.semantic.use_embedder,
    )
