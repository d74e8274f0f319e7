"""One writer, crash safety and watching: the reliability part of :class:`cairn.app.Cairn`
(issue 11)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from cairn.app.parts import Parts
from cairn.errors import CairnError
from cairn.model import Failure, Run, SourceRoot

if TYPE_CHECKING:
    from cairn.graph.service import GraphService
    from cairn.ingest.limits import IndexLimits
    from cairn.ingest.pipeline import Indexer
    from cairn.model import AppliedChanges
    from cairn.model.reliability import Wait
    from cairn.store.lock import WriterLock



class ReliabilityMixin(Parts):
    """The writer lock, failed-run records, watcher batches and index snapshots."""

    _limits: IndexLimits | None = None

    @property
    def limits(self) -> IndexLimits:
        """The ``[index]`` settings (read on first use: a search needs none of them)."""
        if self._limits is None:
            from cairn.ingest.limits import IndexLimits

            self._limits = IndexLimits.from_mapping(self.config.index)
        return self._limits
    writer_lock: WriterLock
    _last_indexer: Indexer | None

    def _fresh_graph(self) -> GraphService:
        raise NotImplementedError

    def index_paths(
        self,
        files: Iterable[str | os.PathLike[str]],
        *,
        embed: bool = True,
        allow_mass_delete: bool = False,
    ) -> Run:
        raise NotImplementedError

    def _run_roots(
        self,
        roots: list[SourceRoot],
        progress: Any,
        embed: bool,
        embed_progress: Any,
        allow_mass_delete: bool,
    ) -> Run:
        raise NotImplementedError

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
        from cairn.model import AppliedChanges

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
                self._last_indexer = None
                with self._failed_run_recorded():
                    run = self._run_roots(list(todo.full), None, embed, None, allow_mass_delete)
                # the full run indexed (or removed) every file of its roots: the batch's
                # record is its run, plus one for the files of other roots, if any
                tops = [r.path.rstrip("/") + "/" for r in todo.full]
                files = tuple(f for f in files if not f.startswith(tuple(tops)))
            if files or run is None:
                more = self.index_paths(files, embed=embed, allow_mass_delete=allow_mass_delete)
                run = more if run is None else _added(run, more)
            return AppliedChanges(run, todo.files, bool(todo.full))


def _added(first: Run, then: Run) -> Run:
    """One record of two runs of one watcher batch (a full run of some roots, then the
    changed files of the others): counts, failures and warnings of both."""
    import dataclasses

    counts = ("seen", "added", "changed", "removed", "unchanged", "failed", "skipped")
    return dataclasses.replace(
        first,
        finished=then.finished,
        **{k: getattr(first, k) + getattr(then, k) for k in counts},
        failures=first.failures + then.failures,
        warnings=first.warnings + then.warnings,
        seconds=round(first.seconds + then.seconds, 4),
    )


def refused_mass_delete(exc: BaseException) -> bool:
    """Whether ``exc`` is the deletion guard's refusal
    (:class:`cairn.ingest.limits.MassDelete`): a decision, not a transient error, for
    callers outside the ingest layer."""
    from cairn.ingest.limits import MassDelete

    return isinstance(exc, MassDelete)
