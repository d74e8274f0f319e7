"""``Cairn``: the composition root and the public Python API.

Built from a :class:`cairn.config.Config`, it opens the store and wires the indexer and
the searcher; every interface (CLI, and later HTTP, MCP, web) calls one method of it.

Example::

    from cairn.app import Cairn

    with Cairn.open(db="notes.db") as cairn:
        run = cairn.index(["~/notes"])
        for hit in cairn.search("tag:work budget").hits:
            print(hit.title, hit.abs_path, hit.line_start)
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from cairn.config import Config, load_config
from cairn.embed.base import Embedder
from cairn.errors import CairnError, NotFound, QueryError
from cairn.export.graph import render as render_graph
from cairn.formats.types import RootTypes, load_root_types
from cairn.graph.expand import ExpandConfig
from cairn.graph.service import GraphService
from cairn.ingest.embedding import EmbedProgress
from cairn.ingest.limits import IndexLimits
from cairn.ingest.pipeline import Indexer, Progress, make_root
from cairn.ingest.run import EmbedSettings, complete_run
from cairn.model import (
    MESSAGE,
    AppliedChanges,
    Backlink,
    DocumentView,
    EmbedStep,
    Failure,
    FileView,
    IndexSnapshot,
    Run,
    ShowView,
    SourceRoot,
    StoredDocument,
    StoredUnit,
    UnitView,
)
from cairn.search.eval import EvalReport
from cairn.search.service import UNSET, SearchResult, SearchService, SemanticConfig
from cairn.sources import is_within
from cairn.store import Store, open_store
from cairn.store.lock import WriterLock

Wait = float | None | Literal["config"]
"""How long a writer waits for another one: seconds, ``None`` (as long as it takes) or
``"config"`` (``[index] wait``, default ``0``: do not wait)."""


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
        self.limits = IndexLimits.from_mapping(config.index)
        self._created = False
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
        path = getattr(store, "path", "")
        self.writer_lock = WriterLock(path if isinstance(path, str) else "")
        """The index's writer lock (see :meth:`writing`)."""
        self.types = self._load_types()
        self.graph = GraphService(
            self.store,
            types=self.types.merged,
            renderer=render_graph,
            expand_config=ExpandConfig.from_mapping(config.graph),
        )
        semantic = SemanticConfig.from_mapping(
            {"embed": config.embed, "fusion": config.fusion, "chunking": config.chunking}
        )
        self.semantic = SearchService(
            self.store,
            config.search,
            semantic,
            embedder=UNSET if embedder is None else embedder,
            types=self.types.merged,
            graph=self.graph,
        )
        self.last_embed: EmbedStep | None = None
        self._last_indexer: Indexer | None = None

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
        self.graph.set_types(self.types.merged)
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
        """Close the store."""
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
    def _parse_options(self) -> dict[str, dict[str, object]]:
        org = self.config.org
        if not (org.tags_exclude_from_inheritance or org.inherited_property_keys):
            return {}
        try:
            from cairn.formats.org import OrgOptions
        except ImportError:
            return {}
        opts = OrgOptions(
            tags_exclude_from_inheritance=frozenset(org.tags_exclude_from_inheritance),
            inherited_property_keys=tuple(org.inherited_property_keys),
        )
        return {"org": {"options": opts}}

    def add_roots(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
    ) -> list[SourceRoot]:
        """Register folders as source roots (a file registers its folder, limited to it).

        Raises:
            CairnError: a path does not exist.
        """
        roots: list[SourceRoot] = []
        for p in paths:
            path = Path(p).expanduser()
            if not path.exists():
                raise CairnError(f"{path}: no such file or folder")
            if path.is_file():
                real = path.resolve()
                covering = [
                    r for r in self.store.roots() if Path(r.path) in real.parents and not r.include
                ]
                if covering:  # already inside a registered folder: index that one
                    roots.append(covering[0])
                    continue
                root = make_root(path.parent, (*include, path.name), exclude)
                known = {r.id: r for r in self.store.roots()}
                if root.id in known and known[root.id].include:
                    merged = tuple(dict.fromkeys((*known[root.id].include, path.name)))
                    root = SourceRoot(root.id, root.path, merged, root.exclude)
            else:
                root = make_root(path, include, exclude)
            self._refuse_nesting(root)
            self.store.upsert_root(root)
            roots.append(root)
        return roots

    def _refuse_nesting(self, root: SourceRoot) -> None:
        """A folder inside (or around) a registered one would index files twice."""
        new = Path(root.path)
        for r in self.store.roots():
            old = Path(r.path)
            if r.id == root.id:
                continue
            if old in new.parents:
                raise CairnError(
                    f"{new} is inside the registered folder {old}; run `cairn index {old}` "
                    "(use --include/--exclude to narrow it), or remove that folder first "
                    "with `cairn roots --remove`"
                )
            if new in old.parents:
                raise CairnError(
                    f"{new} holds the registered folder {old}; remove it first with "
                    f"`cairn roots --remove {old}` so no file is indexed twice"
                )

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
            wait / on_wait: for the writer lock (see :meth:`writing`).
            allow_mass_delete: remove files even when more than ``[index]
                mass_delete_share`` of a root is gone.

        Returns:
            The :class:`Run` record (also stored), with ``graph`` and ``embedding``
            (also kept as :attr:`last_embed`) saying what those steps did; notices of
            the embedding step (model missing, turned off) are added to its
            ``warnings`` as ``info``.

        Raises:
            QueryError: ``include``/``exclude`` given without ``paths``.
            CairnError: a path does not exist or would nest roots (a new, empty index
                file is then removed again).
            cairn.store.lock.IndexBusy: another process is writing this index.
            cairn.ingest.limits.MassDelete: the deletion guard stopped the run.
            cairn.errors.StoreError: the index cannot be written (disk full, read-only);
                what was committed before stays usable.
        """
        self._last_indexer = None
        with self.writing(wait, on_wait), self._failed_run_recorded():
            return self._index(
                paths, include, exclude, progress, embed, embed_progress, allow_mass_delete
            )

    def _index(
        self,
        paths: Iterable[str | os.PathLike[str]] | None,
        include: Sequence[str],
        exclude: Sequence[str],
        progress: Progress | None,
        embed: bool,
        embed_progress: EmbedProgress | None,
        allow_mass_delete: bool,
    ) -> Run:
        plist = list(paths or [])
        if not plist and (include or exclude):
            raise QueryError(
                "--include/--exclude apply to the folders given (and are kept for later "
                "runs): run `cairn index FOLDER --exclude GLOB`; `cairn roots` lists the "
                "registered folders"
            )
        try:
            roots = (
                self.add_roots(plist, include=include, exclude=exclude)
                if plist
                else self.store.roots()
            )
        except CairnError:
            self._discard_if_new()
            raise
        return self._run_roots(roots, progress, embed, embed_progress, allow_mass_delete)

    def _run_roots(
        self,
        roots: list[SourceRoot],
        progress: Progress | None,
        embed: bool,
        embed_progress: EmbedProgress | None,
        allow_mass_delete: bool,
    ) -> Run:
        """A full run of these registered roots (their globs as registered)."""
        types = self._reload_types()
        run = self._indexer().run(roots, progress, allow_mass_delete=allow_mass_delete)
        if types.problems:
            run = dataclasses.replace(run, warnings=(*run.warnings, *types.problems))
        return self._complete(run, embed=embed, embed_progress=embed_progress)

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
        self._last_indexer = None
        with self.writing(wait, on_wait), self._failed_run_recorded():
            return self._index_paths(files, progress, embed, embed_progress, allow_mass_delete)

    def _index_paths(
        self,
        files: Iterable[str | os.PathLike[str]],
        progress: Progress | None,
        embed: bool,
        embed_progress: EmbedProgress | None,
        allow_mass_delete: bool,
    ) -> Run:
        by_root: dict[str, tuple[SourceRoot, list[str]]] = {}
        roots = self.store.roots()
        for f in files:
            path = Path(f).expanduser().absolute()
            # the folder holding it, resolved (a symlinked root), then the name as given
            real = Path(os.path.realpath(path.parent)) / path.name
            root = next((r for r in roots if is_within(Path(r.path), real)), None)
            if root is None or real == Path(root.path):
                raise NotFound(f"{path}: not inside a registered source root")
            rel = real.relative_to(root.path).as_posix()
            by_root.setdefault(root.id, (root, []))[1].append(rel)
        self._reload_types()
        indexer = self._indexer()
        runs = [
            indexer.run_paths(root, rels, progress, allow_mass_delete=allow_mass_delete)
            for root, rels in by_root.values()
        ]
        run = runs[0] if len(runs) == 1 else _merge_runs(runs) if runs else indexer.run([])
        return self._complete(run, embed=embed, embed_progress=embed_progress)

    def _indexer(self) -> Indexer:
        self._last_indexer = Indexer(
            self.store,
            config_hash=self.config.fingerprint(),
            parse_options=self._parse_options(),
            limits=self.limits,
        )
        return self._last_indexer

    def _complete(self, run: Run, *, embed: bool, embed_progress: EmbedProgress | None) -> Run:
        """The graph and embedding steps of a run (see :mod:`cairn.ingest.run`)."""
        sem = self.semantic
        settings = EmbedSettings(
            embedder=lambda: sem.embedder,
            notices=lambda: sem.notices,
            chunk_config=sem.chunk_config(),
            batch_size=sem.config.embed.batch_size,
            pending=sem.pending,
            has_vectors=sem.has_vectors,
        )
        indexer = self._last_indexer
        run = complete_run(
            self.store, run, self.graph, settings, embed=embed, progress=embed_progress,
            relinked=bool(indexer is not None and indexer.relinked),
        )
        self.last_embed = run.embedding
        return run

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
                self.graph.update()
                return n
        raise NotFound(f"{real}: not a registered source root")

    # --- search -----------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        mode: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        explain: bool = False,
        include_alternates: bool = False,
        expand: bool | None = None,
    ) -> SearchResult:
        """Search; see :mod:`cairn.search.query` for the syntax and
        :meth:`cairn.search.service.SearchService.search` for the details.

        Args:
            query: any text; never raises for it.
            mode: ``keyword`` (BM25), ``semantic`` (embeddings) or ``hybrid`` (their
                fusion); ``None`` is hybrid when the index has embeddings, else keyword.
            limit: number of hits (default: ``[search] limit``).
            offset: hits to skip (paging: the next page starts at ``offset + limit``).
            explain: give each hit its ranks, raw scores, fused summands and, with
                ``expand``, the edges walked.
            include_alternates: also chat messages off the canonical branch.
            expand: graph expansion: walk 1–2 hops from the top hits along typed edges
                and re-score (see :mod:`cairn.graph.expand`); ``None``: ``[graph]
                expand`` from the configuration (default off).

        Raises:
            QueryError: ``offset`` is negative.
        """
        if expand is None:
            expand = bool(self.config.graph.get("expand", False))
        return self.semantic.search(
            query,
            mode=mode,
            limit=limit,
            offset=offset,
            explain=explain,
            include_alternates=include_alternates,
            expand=expand,
        )

    def evaluate(
        self,
        folder: str | os.PathLike[str],
        *,
        modes: Sequence[str] = ("keyword", "semantic", "hybrid"),
        split: str = "test",
    ) -> EvalReport:
        """nDCG@10, Recall@100 and MRR@10 per mode on a BEIR-layout data set, indexed
        into a throwaway store (see :mod:`cairn.search.eval`).

        Raises:
            CairnError: the folder is not a BEIR data set.
        """
        return self.semantic.evaluate(Path(folder), modes=modes, split=split)

    # --- graph ------------------------------------------------------------------------
    def _fresh_graph(self) -> GraphService:
        """The graph service, brought up to date first if the index changed."""
        if self.graph.is_stale():
            self.graph.update()
        return self.graph

    def neighbors(
        self,
        node: str,
        *,
        hops: int = 1,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
        direction: str = "both",
        limit: int | None = 500,
    ) -> dict[str, Any]:
        """Nodes within ``hops`` of ``node`` (see :meth:`GraphService.neighbors`).

        ``node`` is a unit, document or stub id, a unique id prefix, or ``PATH[:LINE]``;
        ``direction`` is ``out``, ``in`` or ``both``.

        Raises:
            NotFound: no such node. QueryError: bad ``hops`` or ``direction``.
        """
        with _query_errors():
            return self._fresh_graph().neighbors(
                node, hops=hops, relations=relations, origins=origins,
                direction=direction, limit=limit,
            )

    def backlinks_of(self, node: str, *, include_internal: bool = False) -> dict[str, Any]:
        """Declared edges into ``node`` (see :meth:`GraphService.backlinks`): ``{"node",
        "count", "sources", "backlinks"}``.

        Raises:
            NotFound: no such node.
        """
        with _query_errors():
            return self._fresh_graph().backlinks(node, include_internal=include_internal)

    def graph_path(
        self,
        source: str,
        target: str,
        *,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
        direction: str = "both",
        max_hops: int = 12,
    ) -> dict[str, Any]:
        """A shortest path between two nodes (see :meth:`GraphService.path`);
        ``length`` is ``None`` when there is none within ``max_hops``.

        Raises:
            NotFound: no such node. QueryError: bad arguments.
        """
        with _query_errors():
            return self._fresh_graph().path(
                source, target, relations=relations, origins=origins,
                direction=direction, max_hops=max_hops,
            )

    def orphans(self) -> list[dict[str, Any]]:
        """Notes with no link in or out (see :meth:`GraphService.orphans`)."""
        with _query_errors():
            return list(self._fresh_graph().orphans())

    def graph_stats(self, *, origins: Sequence[str] | None = None) -> dict[str, Any]:
        """Nodes, edges per relation and origin, degrees, components (see
        :meth:`GraphService.stats`)."""
        with _query_errors():
            return self._fresh_graph().stats(origins=origins)

    def export_graph(
        self,
        fmt: str = "json",
        *,
        around: str | None = None,
        hops: int = 1,
        relations: Sequence[str] | None = None,
        origins: Sequence[str] | None = None,
    ) -> str:
        """The graph (or the subgraph ``hops`` around a node) as text: ``json``
        (node-link), ``graphml`` or ``cytoscape``.

        Raises:
            QueryError: unknown format. NotFound: ``around`` names no node.
        """
        with _query_errors():
            return self._fresh_graph().export(
                fmt, around=around, hops=hops, relations=relations, origins=origins
            )

    # --- lookups ----------------------------------------------------------------------
    def _locate_path(self, text: str) -> tuple[str, str, int | None] | None:
        """``(root id, relpath, line)`` for ``PATH[:LINE]`` given absolute, relative to
        the current folder, or relative to a root; a path through a symbolic link to a
        root (or inside one) is followed. ``None`` when no indexed file matches."""
        line: int | None = None
        path = text
        head, sep, tail = text.rpartition(":")
        if sep and head and tail.isdigit():
            path, line = head, int(tail)
        roots = self.store.roots()
        candidates = [Path(path).expanduser()]
        if not candidates[0].is_absolute():
            candidates.append(Path.cwd() / path)
        for cand in candidates:
            try:
                real = Path(os.path.realpath(cand))
            except (OSError, ValueError):
                continue
            for r in roots:
                try:
                    rel = real.relative_to(r.path).as_posix()
                except ValueError:
                    continue
                for variant in _spellings(rel):
                    if variant != "." and self.store.documents_at(r.id, variant):
                        return r.id, variant, line
        rel = path.removeprefix("./")
        for r in roots:
            for variant in _spellings(rel):
                if self.store.documents_at(r.id, variant):
                    return r.id, variant, line
        return None

    def show(self, ref: str) -> ShowView:
        """A document or unit with its metadata, outline, links and backlinks.

        Args:
            ref: a unit id, a document id, a unique id prefix (at least 4 characters),
                or ``PATH[:LINE]`` (a line selects the innermost unit whose span holds
                it).

        Returns:
            a :class:`DocumentView` (the document, its units in reading order, their
            links, its backlinks), a :class:`UnitView` (the unit, its document, links
            and sibling titles), or a :class:`FileView` for a file holding several
            documents (a chat export).

        Raises:
            NotFound: nothing matches ``ref``, a prefix is ambiguous, or the line is
                outside the file.
        """
        unit = self.store.unit(ref)
        if unit is not None:
            return self._unit_view(unit)
        doc = self.store.document(ref)
        if doc is not None:
            return self._document_view(doc)
        loc = self._locate_path(ref)
        if loc is not None:
            root_id, rel, line = loc
            docs = self.store.documents_at(root_id, rel)
            if line is not None:
                units = [u for d in docs for u in self.store.units_of(d.id)]
                best = [u for u in units if u.line_start <= line <= u.line_end]
                if best:
                    return self._unit_view(max(best, key=lambda u: u.line_start))
                last = max((u.line_end for u in units), default=0)
                if line < 1 or line > last:
                    raise NotFound(f"{rel}: line {line} is outside the file (1-{last})")
            if len(docs) == 1:
                return self._document_view(docs[0])
            return FileView(path=rel, documents=tuple(docs))
        matches = self.store.find_ids(ref) if len(ref) >= 4 else []
        if len(matches) == 1:
            return self.show(matches[0][1])
        if len(matches) > 1:
            raise NotFound(f"{ref}: ambiguous id prefix ({len(matches)} matches)")
        raise NotFound(f"{ref}: no document, unit or indexed file matches")

    def backlinks(self, document_id: str) -> list[Backlink]:
        """Links from anywhere in the index that resolve to this document (or one of
        its units), by source path and line."""
        return self.store.backlinks(document_id)

    def _document_view(self, d: StoredDocument) -> DocumentView:
        units = reading_order(self.store.units_of(d.id))
        return DocumentView(
            document=d,
            units=tuple(units),
            links=tuple(self.store.links_of([u.id for u in units])),
            backlinks=tuple(self.store.backlinks(d.id)),
        )

    def _unit_view(self, u: StoredUnit) -> UnitView:
        return UnitView(
            unit=u,
            document=self.store.document(u.document_id),
            links=tuple(self.store.links_of([u.id])),
            siblings=tuple(self.store.siblings(u.document_id, u.parent_id, u.id)),
        )

    def read_file(self, path: str | os.PathLike[str]) -> str:
        """The text of an indexed file, refusing any path that resolves outside a root.

        Raises:
            NotFound: the path is outside every source root or is not a file.
        """
        p = Path(path).expanduser()
        for r in self.store.roots():
            rp = Path(r.path)
            cand = p if p.is_absolute() else rp / p
            if is_within(rp, cand) and cand.is_file():
                return cand.read_text(encoding="utf-8", errors="replace")
        raise NotFound(f"{p}: not a file inside a registered source root")

    # --- status -----------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """The index at a glance.

        Returns:
            ``{"db", "schema_version", <the store's counts: roots, files, documents,
            units, links, links_resolved, links_unresolved, fts_rows, failed_files,
            formats>, "last_run": Run | None, "failed_files": [FailedFile], "warnings":
            [{"root", "path", "message", "line", "severity"}]}``; ``failed_files`` here
            lists the files (the count is in the store's counts, replaced).
        """
        return {
            "db": str(self.config.db_path),
            "schema_version": self.store.schema_version,
            **self.store.counts(),
            "last_run": self.store.last_run(),
            "failed_files": self.store.failed_files(),
            "warnings": [
                {"root": root, "path": path, **asdict(w)}
                for root, path, ws in self.store.document_warnings()
                for w in ws
            ],
        }

    def validate(
        self, paths: Iterable[str | os.PathLike[str]] | None = None
    ) -> list[dict[str, Any]]:
        """Check note types (``types.yaml``) and OKF bundle conformance.

        Args:
            paths: registered root folders to check (default: every root). Index them
                first: type checks read the indexed notes.

        Returns:
            Diagnostics as dicts ``{path, line, severity, message}``; ``severity`` is
            ``error`` (an OKF conformance failure, a ``types.yaml`` that cannot be
            read), ``warning`` or ``info``.

        Raises:
            NotFound: a path is not a registered root.
        """
        from cairn.maintain.validate import validate_roots

        roots = self.store.roots()
        if paths:
            wanted = {Path(p).expanduser().resolve().as_posix() for p in paths}
            chosen = [r for r in roots if r.path in wanted]
            missing = wanted - {r.path for r in chosen}
            if missing:
                raise NotFound(f"{sorted(missing)[0]}: not a registered source root")
            roots = chosen
        return [
            {"path": d.path, "line": d.line, "severity": d.severity, "message": d.message}
            for d in validate_roots(self.store, roots, self._load_types())
        ]

    def is_empty(self) -> bool:
        """Whether nothing has been indexed yet."""
        return bool(self.store.counts()["documents"] == 0)

    def check(self) -> list[str]:
        """Integrity problems of the index (empty when healthy)."""
        return self.store.integrity_check()

    # --- one writer, crash safety, watching (issue 11) --------------------------------
    @contextmanager
    def writing(
        self, wait: Wait = "config", on_wait: Callable[[str], None] | None = None
    ) -> Iterator[None]:
        """Hold the index's writer lock (an OS lock on ``<index>.lock``, released by the
        OS if the process dies) for the block; nested calls share it. Readers never
        take it.

        Args:
            wait: seconds to wait for another writer, ``None`` as long as it takes,
                ``"config"`` for ``[index] wait`` (default ``0``: do not wait).
            on_wait: called once with a message when it starts waiting.

        Raises:
            cairn.store.lock.IndexBusy: another process still writes after ``wait``.
        """
        seconds = self.limits.wait if wait == "config" else wait
        with self.writer_lock.hold(seconds if not isinstance(seconds, str) else 0, on_wait):
            yield

    @contextmanager
    def _failed_run_recorded(self) -> Iterator[None]:
        """A run that stops with an error is recorded as such (``finished`` empty, the
        reason as its failure), when the index can still be written."""
        try:
            yield
        except CairnError as exc:
            indexer = self._last_indexer
            if indexer is not None:
                with suppress(CairnError), self.store.transaction():
                    self.store.save_run(
                        Run(
                            id=indexer.run_id,
                            started=indexer.started
                            or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                            finished=None,
                            config_hash=indexer.config_hash,
                            failures=(Failure("", f"run stopped: {exc}"),),
                        )
                    )
            raise

    def apply_changes(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        roots: Sequence[SourceRoot] | None = None,
        embed: bool = True,
        allow_mass_delete: bool = False,
        wait: Wait = "config",
    ) -> AppliedChanges | None:
        """Bring the index up to date for paths that changed (a file watcher's events):
        folders are widened to their files, gone paths to what was indexed under them,
        editor temporary files dropped; the notes are indexed by :meth:`index_paths`,
        and a root whose attachments or ``types.yaml`` changed gets a full run.

        Args:
            paths: absolute paths as the events name them.
            roots: the roots to consider (default: every registered root).

        Returns:
            what was done, or ``None`` when nothing in ``paths`` concerns the index.

        Raises:
            IndexBusy / MassDelete / StoreError: as for :meth:`index`.
        """
        from cairn.ingest.changes import changes_for

        with self.writing(wait):
            todo = changes_for(
                self.store, list(roots or self.store.roots()), (os.fspath(p) for p in paths)
            )
            if not todo.files and not todo.full:
                return None
            run: Run | None = None
            if todo.full:
                self._last_indexer = None
                with self._failed_run_recorded():
                    run = self._run_roots(list(todo.full), None, embed, None, allow_mass_delete)
            if todo.files or run is None:
                run = self.index_paths(
                    todo.files, embed=embed, allow_mass_delete=allow_mass_delete
                )
            return AppliedChanges(run, todo.files, bool(todo.full))

    def snapshot(self) -> IndexSnapshot:
        """Everything an index run produces, in a comparable form: two indexes of the
        same files give equal snapshots (what the watcher and crash tests compare).

        Returns:
            an :class:`IndexSnapshot`; vectors are left out (a cache may keep more),
            chunks are in.
        """
        files: list[tuple[str, str, str, str]] = []
        docs: list[tuple[str, ...]] = []
        units: list[tuple[Any, ...]] = []
        links: list[tuple[Any, ...]] = []
        chunks: list[tuple[str, int, str]] = []
        vectors = self.store.vectors
        for root in sorted(self.store.roots(), key=lambda r: r.path):
            states = self.store.file_states(root.id)
            for rel in sorted(states):
                st = states[rel]
                files.append((root.path, rel, st.status, st.hash))
                for d in self.store.documents_at(root.id, rel):
                    docs.append((d.id, root.path, rel, d.key or "", d.title, d.format))
                    us = self.store.units_of(d.id)
                    for u in us:
                        units.append(
                            (u.id, d.id, u.ordinal, u.kind, u.title, u.outline_path,
                             u.line_start, u.line_end, u.body, u.tags, u.inherited_tags)
                        )
                        cs = vectors.chunks_of(u.id)
                        chunks.append(
                            (u.id, len(cs), ",".join(c.hash for c in cs))
                        )
                    for lk in self.store.links_of([u.id for u in us]):
                        links.append(
                            (lk.unit_id, lk.kind, lk.target, lk.anchor or "", lk.line or 0,
                             lk.resolved_document_id or "", lk.resolved_unit_id or "")
                        )
        graph = json.loads(self._fresh_graph().export("json"))
        edges = sorted(
            (
                str(e.get("source")), str(e.get("target")),
                str(e.get("relation", "")), str(e.get("origin", "")),
            )
            for e in graph.get("links", graph.get("edges", []))
        )
        return IndexSnapshot(
            files=tuple(files),
            documents=tuple(sorted(docs)),
            units=tuple(sorted(units, key=repr)),
            links=tuple(sorted(links, key=repr)),
            edges=tuple(edges),
            chunks=tuple(sorted(chunks)),
        )


@contextmanager
def _query_errors() -> Iterator[None]:
    """Bad arguments surface as :class:`QueryError`, never a bare ``ValueError``."""
    try:
        yield
    except CairnError:
        raise
    except ValueError as exc:
        raise QueryError(str(exc)) from exc


def reading_order(units: Sequence[StoredUnit]) -> list[StoredUnit]:
    """Units in reading order: document order, except that the messages of a
    conversation whose every message has a time are ordered by time (then ordinal),
    each followed by its own units (code blocks), whatever the order of the export's
    message array."""
    messages = [u for u in units if u.kind == MESSAGE]
    if not messages or not all(isinstance(u.extra.get("time"), str) for u in messages):
        return list(units)
    by_id = {u.id: u for u in units}

    def key(u: StoredUnit) -> tuple[str, int, int]:
        owner = u
        while owner.kind != MESSAGE and owner.parent_id in by_id:
            owner = by_id[owner.parent_id]
        if owner.kind != MESSAGE:
            return ("", -1, u.ordinal)
        return (str(owner.extra["time"]), owner.ordinal, u.ordinal)

    return sorted(units, key=key)


def _spellings(rel: str) -> list[str]:
    """A path as given, then in NFC and NFD (macOS writes names in NFD): any spelling
    of a name finds the note."""
    return list(dict.fromkeys((rel, unicodedata.normalize("NFC", rel),
                               unicodedata.normalize("NFD", rel))))


def _merge_runs(runs: Sequence[Run]) -> Run:
    """One record for several roots' runs of :meth:`Cairn.index_paths`."""
    first = runs[0]
    return dataclasses.replace(
        first,
        finished=runs[-1].finished,
        **{
            k: sum(getattr(r, k) for r in runs)
            for k in ("seen", "added", "changed", "removed", "unchanged", "failed", "skipped")
        },
        failures=tuple(f for r in runs for f in r.failures),
        warnings=tuple(w for r in runs for w in r.warnings),
        seconds=round(sum(r.seconds for r in runs), 4),
    )
