"""An index run, whole, in one place: roots → discover, parse and store the files
(:class:`cairn.ingest.pipeline.Indexer`) → the graph → the embedding step
(:func:`cairn.ingest.run.complete_run`), under the index's writer lock, recorded as a
failed run when it stops with an error. It returns one :class:`cairn.model.Run` that
carries every step's figures (``run.graph``, ``run.embedding``); a file watcher's batch
of changed paths goes through the same run (:meth:`IndexService.apply_changes`).

The service is handed what it needs of the rest of the engine as callables (the graph,
the note types, the embedding settings, the redaction hooks), never the ``Cairn``.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from cairn.config import Config
from cairn.errors import CairnError, NotFound, QueryError
from cairn.ingest.limits import IndexLimits, MassDelete
from cairn.ingest.roots import add_roots
from cairn.model import AppliedChanges, Document, Failure, Run, SourceRoot
from cairn.model.reliability import Wait
from cairn.sources import is_within
from cairn.store import Store
from cairn.store.lock import WriterLock

if TYPE_CHECKING:
    from cairn.formats.types import RootTypes
    from cairn.ingest.embedding import EmbedProgress
    from cairn.ingest.pipeline import Indexer, Progress
    from cairn.ingest.run import EmbedSettings, GraphUpdater


@dataclasses.dataclass(frozen=True, slots=True)
class RunHooks:
    """What an index run asks of the rest of the engine.

    Attributes:
        graph: the graph service to bring up to date (built on first call).
        reload_types: reads the roots' ``types.yaml`` again and hands the registry to
            chunking, search and the graph; returns it (its ``problems`` become the
            run's warnings).
        embed_settings: how the embedding step runs now.
        redactor / scrubber: the redaction hook every parsed document passes, and what
            every failure's text passes (:mod:`cairn.redact.service`).
        config_hash: the hash of everything that changes what a run stores (the
            settings, the redaction detectors), compared with the last run's; a new
            one re-indexes every file (:func:`cairn.redact.fingerprint.index_config_hash`).
        after_run: called after each completed run (enrichment rows a re-index
            dropped, the count of units waiting for a vector).
        discard_new: a first run that failed before anything was registered removes
            the index file it created.
    """

    graph: Callable[[], GraphUpdater]
    reload_types: Callable[[], RootTypes]
    embed_settings: Callable[[], EmbedSettings]
    redactor: Callable[[], Callable[[Document], Document]]
    scrubber: Callable[[], Callable[[str], str]]
    config_hash: Callable[[], str]
    after_run: Callable[[], None]
    discard_new: Callable[[], None]


class _Attempt:
    """The indexers one call made (the last one names the run recorded as failed)."""

    def __init__(self) -> None:
        self.indexer: Indexer | None = None


class IndexService:
    """Index runs of one index: full runs, runs of named files, watcher batches.

    Args:
        store: the open index.
        config: the configuration (``[index]``, ``[org]``).
        writer_lock: the index's writer lock.
        hooks: see :class:`RunHooks`.

    Raises:
        cairn.errors.ConfigError: ``[index]`` has a bad value (on first use of
            :attr:`limits`).
    """

    def __init__(
        self, store: Store, config: Config, *, writer_lock: WriterLock, hooks: RunHooks
    ) -> None:
        self.store = store
        self.config = config
        self.writer_lock = writer_lock
        self.hooks = hooks

    @cached_property
    def limits(self) -> IndexLimits:
        """The ``[index]`` settings."""
        return IndexLimits.from_mapping(self.config.index)

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

    def repair(self, wait: Wait = 0.0) -> list[str]:
        """Mend the keyword index's rows (see :meth:`cairn.store.base.Store.repair`)
        under the writer lock; what was done, one sentence each.

        Raises:
            cairn.store.lock.IndexBusy: another process writes the index (after ``wait``).
        """
        with self.writing(wait):
            return self.store.repair()

    def add_roots(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
    ) -> list[SourceRoot]:
        """Register folders as source roots (see :func:`cairn.ingest.roots.add_roots`)."""
        return add_roots(self.store, paths, include=include, exclude=exclude)

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
        attempt = _Attempt()
        with self.writing(wait, on_wait), self._recorded(attempt):
            plist = list(paths or [])
            if not plist and (include or exclude):
                raise QueryError(
                    "--include/--exclude apply to the folders given (and are kept for "
                    "later runs): run `cairn index FOLDER --exclude GLOB`; `cairn roots` "
                    "lists the registered folders"
                )
            before = {r.id: r for r in self.store.roots()}
            try:
                roots = (
                    self.add_roots(plist, include=include, exclude=exclude)
                    if plist
                    else self.store.roots()
                )
            except CairnError:
                self.hooks.discard_new()
                raise
            try:
                return self._run_roots(
                    attempt, roots, progress, embed, embed_progress, allow_mass_delete
                )
            except MassDelete:  # the guard refused: roots keep the globs they had
                for r in roots:
                    if r.id in before and before[r.id] != r:
                        self.store.upsert_root(before[r.id])
                raise

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
        attempt = _Attempt()
        with self.writing(wait, on_wait), self._recorded(attempt):
            return self._run_paths(
                attempt, files, progress, embed, embed_progress, allow_mass_delete
            )

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
        editor temporary files dropped; the notes are indexed as by :meth:`index_paths`,
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
                self.store, list(roots or self.store.roots()), (os.fspath(p) for p in paths),
                skip_templates=self.limits.skip_templates,
            )
            if not todo.files and not todo.full:
                return None
            run: Run | None = None
            files = todo.files
            if todo.full:
                attempt = _Attempt()
                with self._recorded(attempt):
                    run = self._run_roots(
                        attempt, list(todo.full), None, embed, None, allow_mass_delete
                    )
                # the full run indexed (or removed) every file of its roots: the batch's
                # record is its run, plus one for the files of other roots, if any
                tops = [r.path.rstrip("/") + "/" for r in todo.full]
                files = tuple(f for f in files if not f.startswith(tuple(tops)))
            if files or run is None:
                more = self.index_paths(files, embed=embed, allow_mass_delete=allow_mass_delete)
                run = more if run is None else Run.merged((run, more))
            return AppliedChanges(run, todo.files, bool(todo.full))

    # --- the steps --------------------------------------------------------------------
    def _run_roots(
        self,
        attempt: _Attempt,
        roots: list[SourceRoot],
        progress: Progress | None,
        embed: bool,
        embed_progress: EmbedProgress | None,
        allow_mass_delete: bool,
    ) -> Run:
        """A full run of these registered roots (their globs as registered)."""
        types = self.hooks.reload_types()
        indexer = self._indexer(attempt)
        run = indexer.run(roots, progress, allow_mass_delete=allow_mass_delete)
        if types.problems:
            run = dataclasses.replace(run, warnings=(*run.warnings, *types.problems))
        return self._complete(indexer, run, embed, embed_progress)

    def _run_paths(
        self,
        attempt: _Attempt,
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
        self.hooks.reload_types()
        indexer = self._indexer(attempt)
        runs = [
            indexer.run_paths(root, rels, progress, allow_mass_delete=allow_mass_delete)
            for root, rels in by_root.values()
        ]
        run = runs[0] if len(runs) == 1 else Run.merged(runs) if runs else indexer.run([])
        return self._complete(indexer, run, embed, embed_progress)

    def _indexer(self, attempt: _Attempt) -> Indexer:
        from cairn.ingest.pipeline import Indexer

        attempt.indexer = Indexer(
            self.store,
            config_hash=self.hooks.config_hash(),
            parse_options=self._parse_options(),
            limits=self.limits,
            redact=self.hooks.redactor(),
            scrub=self.hooks.scrubber(),
        )
        return attempt.indexer

    def _complete(
        self, indexer: Indexer, run: Run, embed: bool, embed_progress: EmbedProgress | None
    ) -> Run:
        """The graph and embedding steps of a run (see :mod:`cairn.ingest.run`)."""
        from cairn.ingest.run import complete_run

        run = complete_run(
            self.store,
            run,
            self.hooks.graph(),
            self.hooks.embed_settings(),
            embed=embed,
            progress=embed_progress,
            relinked=indexer.relinked,
        )
        self.hooks.after_run()
        return run

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

    @contextmanager
    def _recorded(self, attempt: _Attempt) -> Iterator[None]:
        """A run that stops with an error is recorded as such (``finished`` empty, the
        reason as its failure), when the index can still be written."""
        try:
            yield
        except CairnError as exc:
            indexer = attempt.indexer
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
