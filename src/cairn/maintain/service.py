"""``cairn.maintain``: the dream cycle of one index (:class:`MaintainService`) — run the
maintenance checks, apply their fixes through safe write-back, keep and restore
backups, list unresolved links."""

from __future__ import annotations

import contextlib
import datetime as _dt
import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cairn.config import Config
    from cairn.formats.types import RootTypes
    from cairn.maintain.dream import DreamReport, DreamSettings
    from cairn.maintain.dream.fixes import FileChange
    from cairn.memory.maintain import MaintainReport
    from cairn.model import Run
    from cairn.store import Store
    from cairn.writeback import Backup, Backups, Batch, Pruned, Restored, WriteResult


@dataclass(frozen=True, slots=True)
class DreamRun:
    """What :meth:`MaintainService.run` returns.

    Attributes:
        report: the report (after ``apply``: the report of the re-indexed files, so
            what was mended shows as ``fixed``).
        changes: per file, what ``apply`` or ``dry_run`` did (empty otherwise).
        applied: whether files were written.
        before: with ``apply``, the report the fixes came from.
    """

    report: DreamReport
    changes: tuple[FileChange, ...] = ()
    applied: bool = False
    before: DreamReport | None = None

    def markdown(self, *, limit: int = 50) -> str:
        """The report as Markdown (at most ``limit`` findings per check)."""
        from cairn.maintain.dream import render_markdown

        return render_markdown(self.report, limit=limit)

    def as_data(self) -> dict[str, Any]:
        """The ``cairn dream --json`` document: ``{"report", "changes", "applied",
        "before"}`` (docs/guides/dream.md gives the shapes)."""
        return {
            "report": self.report.as_data(),
            "changes": [
                {"path": c.path, "action": c.action, "fixes": list(c.fixes), "diff": c.diff,
                 "reason": c.reason, "backup": c.backup}
                for c in self.changes
            ],
            "applied": self.applied,
            "before": None if self.before is None else self.before.id,
        }


@dataclass(frozen=True, slots=True)
class ReportSummary:
    """A stored dream report at a glance (what :meth:`MaintainService.reports` lists).

    Attributes:
        id: the report's id (sortable by time); ``created``: ISO 8601 UTC.
        checks: the checks that ran.
        summary: ``{"findings", "new", "persists", "fixed"}``; ``counts``: findings per
            check (as in ``cairn dream --json``; ``None`` for a report stored without).
    """

    id: str
    created: str
    checks: tuple[str, ...]
    summary: Mapping[str, int] | None
    counts: Mapping[str, int] | None


@dataclass(frozen=True, slots=True)
class UnresolvedLink:
    """A link or anchor that names nothing (what ``cairn graph unresolved`` lists).

    Attributes:
        path: ``<root folder name>/<path in the root>``; ``abs_path``: the file.
        line: the link's line (``None`` when not known).
        kind: the link's kind (``wikilink``, ``org-file`` …); ``target`` and ``anchor``
            (the part after ``#``, or ``None``) what it names; ``raw``: its text.
        reason: why it does not resolve.
    """

    path: str
    abs_path: str
    line: int | None
    kind: str
    target: str
    anchor: str | None
    raw: str
    reason: str


class MaintainService:
    """``cairn dream``, ``cairn restore`` and ``cairn graph unresolved`` over one index.

    Args:
        store: the index.
        config: the configuration (``[dream]``, ``[writeback]``).
        types: the roots' note types as loaded now.
        fresh_graph: brings the graph up to date when the index changed.
        index_paths: ``index_paths(files, embed=)``: re-index files written.
        maintain_memory: ``maintain_memory(bundle, dry_run)``: one memory maintenance
            cycle (:meth:`cairn.memory.service.MemoryService.maintain`).
    """

    def __init__(
        self,
        store: Store,
        config: Config,
        *,
        types: Callable[[], RootTypes],
        fresh_graph: Callable[[], object],
        index_paths: Callable[..., Run],
        maintain_memory: Callable[[str, bool], MaintainReport],
    ) -> None:
        self._store = store
        self._config = config
        self._types = types
        self._fresh_graph = fresh_graph
        self._index_paths = index_paths
        self._maintain_memory = maintain_memory

    @property
    def settings(self) -> DreamSettings:
        """``[dream]`` as :class:`cairn.maintain.dream.DreamSettings`.

        Raises:
            ConfigError: a value of the wrong type.
        """
        from cairn.maintain.dream import DreamSettings

        return DreamSettings.from_mapping(getattr(self._config, "dream", {}))

    @property
    def backups(self) -> Backups:
        """The backup folder of safe write-back (``[writeback] backup_dir``)."""
        from cairn.writeback import Backups

        return Backups(self._config.backup_folder)

    def validate(
        self, only: Sequence[str] | None = None, fix_kinds: Sequence[str] | None = None
    ) -> None:
        """Check ``--only`` check names and ``--fix`` kinds before any work.

        Raises:
            QueryError: an unknown check or fix kind (the message lists the known ones).
        """
        from cairn.errors import QueryError
        from cairn.maintain.dream import select_checks
        from cairn.maintain.dream.base import FIX_KINDS

        bad = [k for k in fix_kinds or () if k not in FIX_KINDS]
        if bad:
            raise QueryError(f"unknown fix kind {', '.join(bad)}; known: {', '.join(FIX_KINDS)}")
        select_checks(only)

    def run(
        self,
        *,
        only: Sequence[str] | None = None,
        apply: bool = False,
        dry_run: bool = False,
        fix_kinds: Sequence[str] | None = None,
        today: _dt.date | None = None,
        proposed: bool = False,
        save: bool = True,
    ) -> DreamRun:
        """Run the dream checks over the index (see :mod:`cairn.maintain.dream`).

        Args:
            only: check names (default: every registered check).
            apply: make the findings' fixes (atomic, compare-and-swap, backed up), then
                re-index the files written and report again.
            dry_run: plan the fixes and give their diffs; nothing is written.
            fix_kinds: only fixes of these kinds (``retarget_link``, ``add_org_id``,
                ``mark_status``, ``create_note``, ``normalise_tag``).
            today: the date taken as today (tests; default: today, UTC).
            proposed: with ``apply``/``dry_run``, make the fixes that are only proposed
                too (weaker evidence, ``Fix.auto`` false); otherwise only the sure ones.
            save: keep the report in the index (the next one's new / persists / fixed
                compare with it); ``False`` for a read-only look.

        Returns:
            A :class:`DreamRun`.

        Raises:
            QueryError: an unknown check or fix kind. ConfigError: bad ``[dream]``.
        """
        from cairn.maintain.dream import run_dream
        from cairn.maintain.dream.fixes import apply_fixes

        self.validate(only, fix_kinds)
        settings = self.settings
        self._fresh_graph()
        report = run_dream(self._store, today=today, settings=settings, only=only,
                           types=self._types(), save=save and not dry_run)
        if not (apply or dry_run):
            return DreamRun(report)
        backups = self.backups
        # a report can be reused by the next run: the batch id is the run's own
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S")
        with backups.batch(f"dream-{stamp}-{secrets.token_hex(3)}"):
            changes = apply_fixes(self._store, report.findings, backups=backups,
                                  dry_run=dry_run or not apply, kinds=fix_kinds, today=today,
                                  proposed=proposed)
            changes += self._memory_fixes(report.findings, fix_kinds, dry_run or not apply)
        if dry_run or not apply:
            return DreamRun(report, tuple(changes))
        written = [c.path for c in changes if c.action in ("changed", "created")]
        if written:
            self._index_paths(written, embed=False)
            self._fresh_graph()
        if any(c.action in ("changed", "maintained") for c in changes):
            self.prune_backups()
        after = run_dream(self._store, today=today, settings=settings, only=only,
                          types=self._types())
        return DreamRun(after, tuple(changes), applied=True, before=report)

    def _memory_fixes(
        self, findings: Sequence[Any], kinds: Sequence[str] | None, dry_run: bool
    ) -> list[FileChange]:
        """Run (or plan) one memory maintenance cycle per ``memory_maintain`` fix
        (:meth:`cairn.memory.service.MemoryService.maintain`, which re-indexes what it
        wrote)."""
        from cairn.maintain.dream.fixes import FileChange

        out: list[FileChange] = []
        for f in findings:
            fix = f.fix
            if fix is None or fix.kind != "memory_maintain" or (kinds and fix.kind not in kinds):
                continue
            rep = self._maintain_memory(fix.path, dry_run)
            action = "planned" if dry_run else "maintained"  # indexed by memory.maintain
            out.append(FileChange(fix.path, action, (fix.description,), "\n".join(rep.diffs),
                                  f"{len(rep.changed)} files of the bundle"))
        return out

    def every(
        self,
        stop: threading.Event,
        *,
        minutes: float | None = None,
        on_report: Callable[[DreamReport], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
    ) -> int:
        """Run :meth:`run` (the report only, never ``apply``) now and then every
        ``minutes`` (default: ``[dream] schedule_minutes``) until ``stop`` is set; what
        ``cairn serve`` runs in a thread. A failed run is handed to ``on_error`` and
        the schedule goes on. Returns the number of runs made.

        Raises:
            QueryError: ``minutes`` is not positive.
        """
        from cairn.errors import CairnError, QueryError

        every = self.settings.schedule_minutes if minutes is None else minutes
        if every <= 0:
            raise QueryError("the dream schedule needs a positive number of minutes "
                             "([dream] schedule_minutes)")
        runs = 0
        while not stop.is_set():
            try:
                report = self.run().report
                runs += 1
                if on_report is not None:
                    on_report(report)
            except CairnError as exc:
                if on_error is not None:
                    on_error(exc)
            if stop.wait(every * 60):
                break
        return runs

    def reports(self, limit: int = 10) -> list[ReportSummary]:
        """The last stored reports, newest first."""
        return [
            ReportSummary(r.id, r.created, tuple(r.checks), r.data.get("summary"),
                          r.data.get("counts"))
            for r in self._store.reports.recent(limit)
        ]

    def prune_backups(self, *, dry_run: bool = False) -> Pruned:
        """Drop old backups by ``[writeback] keep_days`` and ``keep_per_file``
        (:meth:`cairn.writeback.Backups.prune`; the newest copy of each file stays).
        ``cairn dream --apply`` and memory maintenance prune after they write.

        Raises:
            StoreError: the backup folder cannot be written.
        """
        from cairn.errors import StoreError

        c = self._config
        try:
            return self.backups.prune(keep_days=c.backup_keep_days,
                                      keep_per_file=c.backup_keep_per_file, dry_run=dry_run)
        except OSError as exc:
            raise StoreError(f"{self.backups.folder}: cannot prune backups: {exc}") from exc

    def list_backups(self, path: str | None = None) -> list[Backup]:
        """Every backup, oldest first (only those of ``path`` when given)."""
        return self.backups.list(None if path is None else Path(path).expanduser().absolute())

    def restore(self, backup_id: str | None = None) -> WriteResult:
        """Put a backup's bytes back (default: the newest backup); the bytes replaced
        are backed up in turn, and the file is re-indexed when it is in a root.

        Raises:
            NotFound: no such backup (or no backup at all). WriteConflict: the file
            changed while restoring.
        """
        from cairn.errors import CairnError, NotFound

        backups = self.backups
        if backup_id is None:
            every = backups.list()
            if not every:
                raise NotFound(f"{backups.folder}: no backups yet")
            backup_id = every[-1].id
        result = backups.restore(backup_id)
        with contextlib.suppress(CairnError):  # outside every root: restored, not indexed
            self._index_paths([str(result.path)], embed=False)
        return result

    def list_batches(self) -> list[Batch]:
        """Every write batch (one dream run, one restore …), oldest first
        (:func:`cairn.writeback.batches`)."""
        from cairn.writeback import batches

        return batches(self.backups)

    def restore_batch(self, batch_id: str | None = None) -> Restored:
        """Undo a whole write batch (default: the newest dream run or write batch not
        yet undone; a restore's own safety copies are never picked): changed files get
        their bytes from before it, files it created are removed while they still hold
        the bytes written. The files restored are re-indexed, and removed ones dropped
        from the index, when they are in a root.

        Raises:
            NotFound: no such batch, or nothing left to undo. NotRemoved: a file the
            batch created has changed since (nothing written). WriteConflict: a file
            changed while restoring.
        """
        from cairn.errors import CairnError
        from cairn.writeback import restore_batch

        done = restore_batch(self.backups, batch_id)
        paths = [str(r.path) for _, r in done.results]
        if paths:
            with contextlib.suppress(CairnError):  # outside every root: not indexed
                self._index_paths(paths, embed=False)
        return done

    def unresolved_links(self) -> list[UnresolvedLink]:
        """Every unresolved link and anchor (URLs left out), by path and line. A link
        whose note resolves but whose anchor names nothing there is listed too."""
        from cairn.graph.catalog import is_missing_anchor

        roots = {r.id: r.path for r in self._store.roots()}
        out: list[UnresolvedLink] = []
        for x in self._store.links_from(None):
            if x.kind == "url" or not x.unresolved_reason:
                continue
            if x.unresolved_reason.startswith("attachment:"):
                continue
            if x.resolved_document_id and not is_missing_anchor(x.unresolved_reason):
                continue
            root = roots.get(x.root_id, "")
            out.append(UnresolvedLink(
                f"{Path(root).name}/{x.path}", f"{root}/{x.path}", x.line, x.kind, x.target,
                x.anchor, x.raw, x.unresolved_reason))
        out.sort(key=lambda u: (u.path, u.line or 0))
        return out
