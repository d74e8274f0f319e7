"""``Cairn``: the composition root and the public Python API.

Built from a :class:`cairn.config.Config`, it opens the store and the embedder and builds
the services over them (each in the package whose job it is, handed only what it needs,
never the ``Cairn``), exposed as attributes: ``cairn.runs`` (index runs),
``cairn.notes`` (show, stats, checks), ``cairn.doors``, ``cairn.graph``, ``cairn.memory``
… Every door (CLI, HTTP, MCP, web) calls them, or the few core verbs kept here.

Example::

    from cairn.app import Cairn

    with Cairn.open(db="notes.db") as cairn:
        run = cairn.index(["~/notes"])
        for hit in cairn.search("tag:work budget").hits:
            print(hit.title, hit.abs_path, hit.line_start)
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from cairn.app import services
from cairn.config import Config, in_file, load_config
from cairn.conversations import reading_order
from cairn.embed.base import Embedder
from cairn.embed.profile import fast_embed
from cairn.errors import ConfigError, NotFound
from cairn.formats import note_formats
from cairn.formats.types import RootTypes, load_root_types
from cairn.model import Run, SourceRoot
from cairn.model.search_request import SearchRequest
from cairn.notes.doors import Doors
from cairn.notes.service import NoteService
from cairn.search.service import UNSET, SearchResult, SearchService, SemanticConfig
from cairn.store import Store, open_store, open_url
from cairn.store.lock import WriterLock

# Loaded when a method needs them (a keyword search needs none of them: start-up time
# of a new `cairn search` process, see bench/startup.py).
if TYPE_CHECKING:
    from cairn.agenda.service import AgendaService
    from cairn.conversations.service import ConversationService
    from cairn.enrich.service import EnrichService
    from cairn.evaluation import Evaluator
    from cairn.export.service import ExportService
    from cairn.fields.service import FieldsService
    from cairn.graph.queries import GraphQueries
    from cairn.graph.service import GraphService
    from cairn.ingest.background import BackgroundIndex
    from cairn.ingest.embed_step import EmbeddingStep
    from cairn.ingest.embedding import EmbedProgress
    from cairn.ingest.pipeline import Progress
    from cairn.ingest.service import IndexService
    from cairn.ingest.static_training import StaticTrainer
    from cairn.maintain.service import MaintainService
    from cairn.memory.service import MemoryService
    from cairn.model import ShowView
    from cairn.model.reliability import Wait
    from cairn.redact.service import RedactService
    from cairn.store.copy import IndexCopier

__all__ = ["Cairn", "note_formats", "reading_order", "refused_mass_delete"]


class Cairn:
    """One knowledge base: a store plus the services over it.

    Args:
        config: the frozen configuration (see :func:`cairn.config.load_config`).
        store: a store to use instead of opening ``config.db_path`` (tests, servers,
            another backend).
        embedder: an embedder to use instead of the one ``[embed]`` names.
        create: create the index file when it does not exist (``False``: raise
            :class:`NotFound` instead, for read-only commands).

    Raises:
        cairn.errors.StoreError: the index cannot be opened.
        NotFound: ``create`` is false and there is no index file yet.
    """

    def __init__(
        self,
        config: Config,
        *,
        store: Store | None = None,
        embedder: Embedder | None = None,
        create: bool = True,
    ) -> None:
        self.config = config
        try:  # given settings are checked at once (a ConfigError names them and the file)
            if config.index:
                from cairn.ingest.limits import IndexLimits

                IndexLimits.from_mapping(config.index)
            if config.chunking:  # before a run, not after its files were indexed
                from cairn.ingest.chunking import ChunkConfig

                ChunkConfig.from_mapping(config.chunking)
            semantic = SemanticConfig.from_mapping(
                {"embed": fast_embed(config), "fusion": config.fusion, "chunking": config.chunking,
                 "rerank": config.rerank}
            )
        except ConfigError as exc:
            raise in_file(exc, config.config_file) from None
        self._created = False
        self.own_parts = store is None and embedder is None  # a child can open the same
        if store is None and config.db_url is not None:
            store = open_url(config.db_url)
        if store is None:
            if not config.db_path.exists():
                if not create:
                    raise NotFound(
                        f"{config.db_path}: no index here yet; run `cairn index FOLDER` "
                        "first (or choose an index with --db / CAIRN_DB)"
                    )
                self._created = True
            store = open_store(config.db_path)
        self.store: Store = store
        self.writer_lock: WriterLock = store.writer_lock()
        """The index's writer lock (held through :meth:`IndexService.writing
        <cairn.ingest.service.IndexService.writing>`)."""
        self.types = self._load_types()
        self._graph: GraphService | None = None  # built on first use (see `graph`)
        self._graph_build = threading.Lock()
        self.semantic = SearchService(
            self.store,
            config.search,
            semantic,
            embedder=UNSET if embedder is None else embedder,
            types=self.types.merged,
            graph_factory=lambda: self.graph_service,
        )
        self.notes = NoteService(store, config, shown_text=self._shown_text,
                                 load_types=self._load_types)
        """Show a reference, the text of a file, stats and checks
        (:mod:`cairn.notes.service`)."""
        self.doors = Doors(store, self.notes)
        """Paths confined to the roots, provenance, recent changes
        (:mod:`cairn.notes.doors`)."""
        self._embed_signature = (
            f"given:{embedder.fingerprint}"
            if embedder is not None
            else self.semantic.config.embed.signature
        )

    @cached_property
    def runs(self) -> IndexService:
        """Index runs: full runs, runs of named files, a watcher's batches, the writer
        lock and the ``[index]`` limits (:mod:`cairn.ingest.service`)."""
        return services.runs(self)

    @cached_property
    def background(self) -> BackgroundIndex:
        """A server's index runs, in a child process at a lower priority
        (:mod:`cairn.ingest.background`)."""
        return services.background(self)

    @cached_property
    def training(self) -> StaticTrainer:
        """The fast profile's static model trained on this index
        (:mod:`cairn.ingest.static_training`)."""
        return services.training(self)

    @cached_property
    def agenda(self) -> AgendaService:
        """The agenda, day by day (:mod:`cairn.agenda.service`)."""
        return services.agenda(self)

    @cached_property
    def conversations(self) -> ConversationService:
        """The conversations of the index's chat exports (:mod:`cairn.conversations`)."""
        return services.conversations(self)

    @cached_property
    def enrich(self) -> EnrichService:
        """Summaries, insights and relations of conversations by the ``[enrich]`` model
        (:mod:`cairn.enrich.service`)."""
        return services.enrich(self)

    @cached_property
    def memory(self) -> MemoryService:
        """Agent memory on OKF bundles (:mod:`cairn.memory.service`)."""
        return services.memory(self)

    @cached_property
    def maintain(self) -> MaintainService:
        """The dream cycle, backups and restore (:mod:`cairn.maintain.service`)."""
        return services.maintain(self)

    @cached_property
    def fields(self) -> FieldsService:
        """Facets of a search, hits as table columns, a term across the index
        (:mod:`cairn.fields.service`)."""
        return services.fields(self)

    @cached_property
    def redact(self) -> RedactService:
        """The ingest hook's redaction, what doors show of a file, the scan
        (:mod:`cairn.redact.service`)."""
        return services.redact(self)

    @cached_property
    def export(self) -> ExportService:
        """Export as an OKF bundle, an Obsidian vault or JSON, and the round trip
        (:mod:`cairn.export.service`)."""
        return services.export(self)

    @cached_property
    def storage(self) -> IndexCopier:
        """This index copied into another backend (:mod:`cairn.store.copy`)."""
        return services.storage(self)

    @cached_property
    def evaluation(self) -> Evaluator:
        """This index's model and settings measured on a BEIR data set
        (:mod:`cairn.evaluation`)."""
        return services.evaluation(self)

    @cached_property
    def embedding(self) -> EmbeddingStep:
        """The embedding step on its own (``cairn embed``) and the units still waiting
        for a vector (:mod:`cairn.ingest.embed_step`)."""
        return services.embedding(self)

    @cached_property
    def graph(self) -> GraphQueries:
        """The graph as doors ask it, brought up to date before each read
        (:mod:`cairn.graph.queries`)."""
        return services.graph(self)

    @property
    def graph_service(self) -> GraphService:
        """The graph service over this store, built on first use (a keyword search
        never needs it, so a new process does not import the graph builders)."""
        if self._graph is None:
            from cairn.export.graph import render as render_graph
            from cairn.graph.expand import ExpandConfig
            from cairn.graph.service import GraphService

            with self._graph_build:  # a server's threads build it once
                if self._graph is None:
                    self._graph = GraphService(
                        self.store,
                        types=self.types.merged,
                        renderer=render_graph,
                        expand_config=ExpandConfig.from_mapping(self.config.graph),
                    )
        return self._graph

    @graph_service.setter
    def graph_service(self, value: GraphService) -> None:
        """Use this graph service (its settings) instead of the configured one."""
        self._graph = value

    def _load_types(self) -> RootTypes:
        """The note types of every registered root (each ``types.yaml`` read once)."""
        return load_root_types(
            [(r.id, Path(r.path)) for r in self.store.roots()], self.config.types_file
        )

    def _reload_types(self) -> RootTypes:
        """Read the roots' ``types.yaml`` again (once per run: a file may have appeared
        or changed) and hand the registry to chunking, search and the graph."""
        self.types = self._load_types()
        self.semantic.set_types(self.types.merged)
        if self._graph is not None:  # else it is built with these types
            self.graph_service.set_types(self.types.merged)
        return self.types

    @classmethod
    def open(
        cls,
        *,
        db: str | os.PathLike[str] | None = None,
        config_file: str | os.PathLike[str] | None = None,
        create: bool = True,
    ) -> Cairn:
        """Load the configuration (``--db``, ``CAIRN_DB``, ``cairn.toml``) and open.

        Raises:
            NotFound: ``create`` is false and there is no index file yet.
            cairn.errors.ConfigError / StoreError: bad configuration or index file.
        """
        return cls(load_config(db=db, config_file=config_file), create=create)

    def close(self) -> None:
        """Close the store (and stop a server's index process)."""
        background = self.__dict__.get("background")
        if background is not None:
            background.close()
        self.store.close()

    def __enter__(self) -> Cairn:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- indexing ---------------------------------------------------------------------
    def add_roots(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
    ) -> list[SourceRoot]:
        """Register folders as source roots (a file registers its folder, limited to it).

        Raises:
            CairnError: a path does not exist, or would nest roots.
            ConfigError: a glob is unusable (:func:`cairn.globs.glob_problem`);
                nothing is registered.
        """
        return self.runs.add_roots(paths, include=include, exclude=exclude)

    def index(
        self,
        paths: Iterable[str | os.PathLike[str]] | None = None,
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        progress: Progress | None = None,
        embed: bool = True,
        embed_progress: EmbedProgress | None = None,
        wait: Wait = "config",
        on_wait: Callable[[str], None] | None = None,
        allow_mass_delete: bool = False,
    ) -> Run:
        """Index folders (registering them as roots), or every registered root, then
        bring the graph and the embeddings up to date.

        Args:
            paths: folders (or single export files) to index; ``None`` or empty means
                every registered root.
            include / exclude: globs for the roots given (kept for later runs).
            progress: ``progress(done, total, relpath)`` after each file.
            embed: chunk and embed what changed (``False``: keyword search only until a
                later run embeds; without a model the same happens, with one notice).
            embed_progress: ``progress(done, total, what)`` while embedding.
            wait / on_wait: for the writer lock (see
                :meth:`cairn.ingest.service.IndexService.writing`).
            allow_mass_delete: remove files even when more than ``[index]
                mass_delete_share`` of a root is gone.

        Returns:
            The :class:`Run` record (also stored), with ``graph`` and ``embedding``
            saying what those steps did (``embedding.interrupted`` after Ctrl-C in the
            embedding step); notices of the embedding step (model missing, turned off)
            are added to its ``warnings`` as ``info``.

        Raises:
            QueryError: ``include``/``exclude`` given without ``paths``.
            CairnError: a path does not exist or would nest roots (a new, empty index
                file is then removed again).
            cairn.store.lock.IndexBusy: another process is writing this index.
            cairn.ingest.limits.MassDelete: the deletion guard stopped the run.
            cairn.errors.StoreError: the index cannot be written (disk full, read-only);
                what was committed before stays usable.
        """
        return self.runs.index(
            paths, include=include, exclude=exclude, progress=progress, embed=embed,
            embed_progress=embed_progress, wait=wait, on_wait=on_wait,
            allow_mass_delete=allow_mass_delete,
        )

    def index_paths(
        self,
        files: Iterable[str | os.PathLike[str]],
        *,
        progress: Progress | None = None,
        embed: bool = True,
        embed_progress: EmbedProgress | None = None,
        wait: Wait = "config",
        on_wait: Callable[[str], None] | None = None,
        allow_mass_delete: bool = False,
    ) -> Run:
        """Index the given files (of registered roots) and only them, then the graph and
        embeddings, exactly as a full :meth:`index` would leave them: a file that no
        longer exists, or that the root's globs exclude, is removed from the index.

        Args:
            files: absolute paths (or relative to the current folder) inside registered
                roots, e.g. what a file watcher saw change.
            wait / on_wait / allow_mass_delete: as for :meth:`index`.

        Raises:
            NotFound: a path is not inside any registered root.
            IndexBusy / MassDelete / StoreError: as for :meth:`index`.
        """
        return self.runs.index_paths(
            files, progress=progress, embed=embed, embed_progress=embed_progress,
            wait=wait, on_wait=on_wait, allow_mass_delete=allow_mass_delete,
        )

    def _discard_if_new(self) -> None:
        """A first run that failed before anything was registered leaves no empty index
        file behind (this ``Cairn`` is closed then)."""
        if not self._created or self.store.roots():
            return
        self.store.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.config.db_path}{suffix}").unlink(missing_ok=True)

    def roots(self) -> list[SourceRoot]:
        """Registered source roots."""
        return self.store.roots()

    def remove_root(self, path: str | os.PathLike[str]) -> int:
        """Forget a root and its documents; returns the number of documents removed.

        Raises:
            NotFound: no root at that path.
        """
        real = Path(path).expanduser().resolve().as_posix()
        for r in self.store.roots():
            if r.path == real:
                n = self.store.remove_root(r.id)
                self.graph_service.update()
                return n
        raise NotFound(f"{real}: not a registered source root")

    # --- lookups ----------------------------------------------------------------------
    def show(self, ref: str) -> ShowView:
        """A document or unit with its metadata, outline, links and backlinks (see
        :meth:`cairn.notes.service.NoteService.show`).

        Raises:
            NotFound: nothing matches ``ref``, a prefix is ambiguous, or the line is
                outside the file.
        """
        return self.notes.show(ref)

    def stats(self) -> dict[str, Any]:
        """The index at a glance (see :meth:`cairn.notes.service.NoteService.stats`)."""
        return self.notes.stats()

    def _shown_text(self, root_id: str, relpath: str, text: str) -> str:
        return self.redact.shown_text(root_id, relpath, text)

    # --- search -----------------------------------------------------------------------
    def search(self, request: SearchRequest | str, /, **options: Any) -> SearchResult:
        """Search; see :class:`cairn.model.SearchRequest` for the fields,
        :mod:`cairn.search.query` for the syntax and
        :meth:`cairn.search.service.SearchService.search` for the details.

        Args:
            request: the search; or its query text (any text, never rejected), with
                the other fields as ``options``:
                ``cairn.search("tag:work budget", mode="keyword", limit=5)``. An unset
                ``expand`` takes ``[graph] expand`` from the configuration (off).

        Raises:
            QueryError: a field is unknown or has a bad value (the message names it),
                or a sort key is unknown.
        """
        req = SearchRequest.of(request, **options).with_defaults(
            expand=bool(self.config.graph.get("expand", False)))
        result = self.semantic.search(req)
        return self._with_waiting(result, req.mode)  # a partly embedded index says so

    def _with_waiting(self, result: SearchResult, mode: str | None) -> SearchResult:
        if mode == "keyword":  # ranked by words: no note, and the embedding step unbuilt
            return result
        note = self.embedding.waiting_note(mode)
        return result if note is None else dataclasses.replace(
            result, notes=(*result.notes, note))


def refused_mass_delete(exc: BaseException) -> bool:
    """Whether ``exc`` is the deletion guard's refusal
    (:class:`cairn.ingest.limits.MassDelete`): a decision, not a transient error, for
    callers outside the ingest layer."""
    from cairn.ingest.limits import MassDelete

    return isinstance(exc, MassDelete)
