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
from cairn.config import Config, load_config
from cairn.conversations import reading_order
from cairn.embed.base import Embedder
from cairn.errors import NotFound
from cairn.formats import note_formats
from cairn.formats.types import RootTypes, load_root_types
from cairn.model import Run, SourceRoot
from cairn.model.search_request import SearchRequest
from cairn.notes.doors import Doors
from cairn.notes.service import NoteService
from cairn.search.service import UNSET, SearchResult, SearchService
from cairn.store import Store, open_store, open_url
from cairn.store.lock import WriterLock

# Loaded when a method needs them (a keyword search needs none of them: start-up time
# of a new `cairn search` process, see bench/startup.py).
if TYPE_CHECKING:
    from cairn.graph.service import GraphService
    from cairn.ingest.embedding import EmbedProgress
    from cairn.ingest.pipeline import Progress
    from cairn.model import ShowView
    from cairn.model.index_results import IndexStats
    from cairn.model.reliability import Wait

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
        semantic = services.search_settings(config)
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
                                 load_types=self._load_types,
                                 embed_signature=self._configured_signature)
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

    # the services, each built on first use from :mod:`cairn.app.services` (a keyword
    # search builds none of them: start-up time of a new `cairn search` process)
    runs = cached_property(services.runs)
    background = cached_property(services.background)
    training = cached_property(services.training)
    agenda = cached_property(services.agenda)
    conversations = cached_property(services.conversations)
    enrich = cached_property(services.enrich)
    memory = cached_property(services.memory)
    maintain = cached_property(services.maintain)
    fields = cached_property(services.fields)
    redact = cached_property(services.redact)
    export = cached_property(services.export)
    storage = cached_property(services.storage)
    evaluation = cached_property(services.evaluation)
    embedding = cached_property(services.embedding)
    graph = cached_property(services.graph)

    @property
    def graph_service(self) -> GraphService:
        """The graph service over this store, built on first use (a keyword search
        never needs it, so a new process does not import the graph builders)."""
        if self._graph is None:
            with self._graph_build:  # a server's threads build it once
                if self._graph is None:
                    self._graph = services.graph_service(self)
        return self._graph

    @graph_service.setter
    def graph_service(self, value: GraphService) -> None:
        """Use this graph service (its settings) instead of the configured one."""
        self._graph = value

    def _configured_signature(self) -> str:
        """The configured embedding model's signature, as an embedding step records it
        (``""`` when embeddings are off: provider ``none``)."""
        given = self._embed_signature.startswith("given:")
        off = not given and self.semantic.config.embed.provider == "none"
        return "" if off else self._embed_signature

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
        the graph and the embeddings; the arguments, the :class:`Run` returned and the
        errors raised are those of :meth:`cairn.ingest.service.IndexService.index`."""
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
        """Index the given files (of registered roots) and only them, as
        :meth:`cairn.ingest.service.IndexService.index_paths` describes."""
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

    def stats(self) -> IndexStats:
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
