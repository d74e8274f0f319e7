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
import os
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import unquote

from cairn.config import Config, load_config
from cairn.embed.base import Embedder
from cairn.errors import CairnError, NotFound, QueryError
from cairn.export.graph import render as render_graph
from cairn.formats.types import RootTypes, load_root_types
from cairn.graph.expand import ExpandConfig
from cairn.graph.service import GraphService
from cairn.ingest.embedding import EmbedProgress
from cairn.ingest.pipeline import Indexer, Progress, make_root
from cairn.ingest.run import EmbedSettings, complete_run
from cairn.model import (
    MESSAGE,
    Backlink,
    DocumentView,
    EmbedStep,
    FileView,
    Provenance,
    RecentDocument,
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

        Returns:
            The :class:`Run` record (also stored), with ``graph`` and ``embedding``
            (also kept as :attr:`last_embed`) saying what those steps did; notices of
            the embedding step (model missing, turned off) are added to its
            ``warnings`` as ``info``.

        Raises:
            QueryError: ``include``/``exclude`` given without ``paths``.
            CairnError: a path does not exist or would nest roots (a new, empty index
                file is then removed again).
        """
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
        types = self._reload_types()
        run = self._indexer().run(roots, progress)
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
    ) -> Run:
        """Index the given files (of registered roots) and only them, then the graph and
        embeddings, exactly as a full :meth:`index` would leave them: a file that no
        longer exists, or that the root's globs exclude, is removed from the index.

        Args:
            files: absolute paths (or relative to the current folder) inside registered
                roots, e.g. what a file watcher saw change.

        Raises:
            NotFound: a path is not inside any registered root.
        """
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
        runs = [indexer.run_paths(root, rels, progress) for root, rels in by_root.values()]
        run = runs[0] if len(runs) == 1 else _merge_runs(runs) if runs else indexer.run([])
        return self._complete(run, embed=embed, embed_progress=embed_progress)

    def _indexer(self) -> Indexer:
        return Indexer(
            self.store,
            config_hash=self.config.fingerprint(),
            parse_options=self._parse_options(),
        )

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
        run = complete_run(
            self.store, run, self.graph, settings, embed=embed, progress=embed_progress
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
        """The graph service, brought up to date first if the index changed — one
        refresh at a time, and none while a door's index run (:meth:`indexing`) writes:
        that run brings the graph up to date when it ends."""
        if self._index_running or not self.graph.is_stale():
            return self.graph
        with self._graph_refresh:
            if not self._index_running and self.graph.is_stale():
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
                if rel != "." and self.store.documents_at(r.id, rel):
                    return r.id, rel, line
        rel = path.removeprefix("./")
        for r in roots:
            if self.store.documents_at(r.id, rel):
                return r.id, rel, line
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

    # --- doors: what the MCP server and the HTTP API need (issue 13) -------------------
    _index_running = 0
    """How many :meth:`indexing` blocks are open (graph reads then skip refreshing)."""
    _graph_refresh = threading.Lock()
    """Serialises graph refreshes triggered by reads (a refresh writes)."""

    @contextmanager
    def indexing(self) -> Iterator[None]:
        """Mark an index run the doors start while readers go on: reads of the graph
        do not refresh it meanwhile (they would race the run for the write lock); they
        see the graph as it was, and the run updates it when it ends."""
        type(self)._index_running += 1
        try:
            yield
        finally:
            type(self)._index_running -= 1

    def inside_roots(self, path: str) -> Path:
        """Resolve a path a client passed and make sure it lies inside a registered root.

        Symbolic links are resolved first; a relative path is taken relative to each
        root in turn (never to the server's working folder); percent-escapes are
        decoded and the decoded spelling must stay inside too.

        Args:
            path: a file path, absolute or relative to a root (no ``:LINE``).

        Returns:
            The resolved absolute path (it may not exist).

        Raises:
            QueryError: the path is empty, holds a NUL byte or a control character, or
                resolves outside every registered root (``../``, an absolute path
                elsewhere, a symbolic link out, ``%2e%2e/``).
        """
        if not path or any(ord(c) < 32 for c in path):
            raise QueryError(f"{path!r}: refused: an empty path or one with control "
                             "characters (a NUL byte) is never a note")
        roots = [Path(r.path) for r in self.store.roots()]
        found: Path | None = None
        for spelling in dict.fromkeys((path, unquote(path))):
            if any(ord(c) < 32 for c in spelling):
                raise QueryError(f"{path!r}: refused: it decodes to a control character")
            try:
                cand = Path(spelling).expanduser()
            except RuntimeError:  # ~nosuchuser/…
                raise QueryError(f"{path}: refused: no such home folder") from None
            tries = [cand] if cand.is_absolute() else [r / cand for r in roots]
            inside = [t for t in tries if any(is_within(r, t) for r in roots)]
            if not inside:
                raise QueryError(
                    f"{path}: refused: it resolves outside every registered source root "
                    "(only files under the folders `cairn roots` lists can be read)"
                )
            if found is None:
                found = next((t for t in inside if _exists(t)), inside[0]).resolve()
        assert found is not None
        return found

    def confine(self, ref: str) -> str:
        """``ref`` unchanged when it is an id, or a ``PATH[:LINE]`` inside a registered
        root; what the doors check every reference a client passes with.

        Raises:
            QueryError: ``ref`` names a path outside every root, or holds a NUL byte
                or a control character (see :meth:`inside_roots`).
            NotFound: ``ref`` names a path inside a root where there is no file.
        """
        if any(ord(c) < 32 for c in ref):
            raise QueryError(f"{ref!r}: refused: a reference with control characters "
                             "(a NUL byte) is never a note")
        if self.store.unit(ref) is not None or self.store.document(ref) is not None:
            return ref
        head, sep, tail = ref.rpartition(":")
        path = head if sep and head and tail.isdigit() else ref
        if (re.search(r"[/\\~%]|^\.", path) or Path(path).suffix) and not _exists(
            self.inside_roots(path)
        ):
            raise NotFound(f"{path}: no such file inside a registered source root")
        return ref

    def get(self, ref: str) -> ShowView:
        """:meth:`show` for a client of a door: ``ref`` is checked by :meth:`confine`
        first, so no path outside the roots is ever looked at.

        Raises:
            QueryError: a path outside every root. NotFound: nothing matches.
        """
        return self.show(self.confine(ref))

    def provenance(self, ids: Sequence[str]) -> list[Provenance]:
        """Where each quoted unit or document comes from (file, line span, content
        hash), in the order given; ids that name nothing are left out.

        Args:
            ids: unit ids or document ids (a search's hits, a shown view).
        """
        out: list[Provenance] = []
        hashes: dict[tuple[str, str], dict[str, str]] = {}

        def content_hash(d: StoredDocument) -> str:
            key = (d.root_id, d.path)
            if key not in hashes:
                hashes[key] = self.store.document_hashes(d.root_id, d.path)
            return hashes[key].get(d.id, "")

        for i in ids:
            unit = self.store.unit(i)
            if unit is not None:
                doc = self.store.document(unit.document_id)
                if doc is not None:
                    out.append(Provenance(unit.id, doc.id, doc.path, doc.abs_path,
                                          unit.line_start, unit.line_end, content_hash(doc)))
                continue
            doc = self.store.document(i)
            if doc is not None:
                units = self.store.units_of(doc.id)
                first = min((u.line_start for u in units), default=1)
                last = max((u.line_end for u in units), default=1)
                out.append(Provenance(None, doc.id, doc.path, doc.abs_path, first, last,
                                      content_hash(doc)))
        return out

    def recent(self, since: str, *, limit: int = 50) -> list[RecentDocument]:
        """Documents whose file changed at or after ``since``, newest first.

        Args:
            since: an ISO 8601 date or time (``2026-03-01``, ``2026-03-01T09:30``; UTC
                unless it names a zone), or an age: ``7d``, ``12h``, ``30m``.
            limit: at most this many (1-1000).

        Raises:
            QueryError: ``since`` is neither, or ``limit`` is out of range.
        """
        if not 1 <= limit <= 1000:
            raise QueryError(f"limit must be 1-1000, not {limit}")
        cutoff = _since(since)
        found = [
            d for r in self.store.roots() for d in self.store.documents_of_root(r.id)
            if d.mtime >= cutoff
        ]
        found.sort(key=lambda d: (-d.mtime, d.path, d.key or ""))
        paths = {r.id: r.path for r in self.store.roots()}
        return [
            RecentDocument(
                document_id=d.id,
                title=d.title,
                format=d.format,
                path=d.path,
                abs_path=str(Path(paths.get(d.root_id, "")) / d.path),
                changed=datetime.fromtimestamp(d.mtime, UTC).isoformat(timespec="seconds"),
                modified=d.modified,
                content_hash=d.content_hash,
            )
            for d in found[:limit]
        ]

    def document_text(self, document_id: str) -> str:
        """A document's text: its file as written when the file holds only it, else
        (one conversation of a chat export) its units' titles and bodies in reading
        order.

        Raises:
            NotFound: no such document, or its file is no longer inside a root.
        """
        doc = self.store.document(document_id)
        if doc is None:
            raise NotFound(f"{document_id}: no such document")
        if len(self.store.documents_at(doc.root_id, doc.path)) == 1:
            return self.read_file(doc.abs_path)
        units = reading_order(self.store.units_of(doc.id))
        return "\n\n".join(f"{u.title}\n{u.body}".strip() for u in units)


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


def _exists(path: Path) -> bool:
    """``path.exists()``, false for a name the system cannot even look up (too long)."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def _since(text: str) -> float:
    """POSIX seconds of an ISO date/time (UTC unless zoned) or an age ``7d``/``12h``/``30m``.

    Raises:
        QueryError: neither.
    """
    m = re.fullmatch(r"\s*(\d+)\s*([dhm])\s*", text)
    if m:
        seconds = int(m[1]) * {"d": 86400, "h": 3600, "m": 60}[m[2]]
        return datetime.now(UTC).timestamp() - seconds
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise QueryError(
            f"{text!r}: give a date (2026-03-01), a time (2026-03-01T09:30) or an age "
            "(7d, 12h, 30m)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


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
