"""The indexing pipeline: discover → detect → parse → assign ids → store → resolve links.

Change detection is (size, mtime) first, then the content hash: a file whose size and
mtime are unchanged is not read; a file whose bytes hash the same is only touched; only
changed files are parsed again. Files gone from disk are removed with everything
indexed from them. A file that cannot be read or parsed becomes a
:class:`cairn.model.Failure` in the run, and the rest of the run goes on; documents
indexed from an earlier good version of that file are kept.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

from cairn import formats
from cairn.errors import IndexInterrupted, StoreUnwritable
from cairn.formats import okf
from cairn.graph.resolve import resolve_links
from cairn.ingest import ids
from cairn.ingest.batch import BATCH, COLD_BATCH, Batch
from cairn.ingest.bundles import bundle_of
from cairn.ingest.exports import store_export
from cairn.ingest.limits import IndexLimits, check_mass_delete, glob_failure
from cairn.ingest.prepare import Job, Prepared, Preparer
from cairn.ingest.tally import Tally as _Tally
from cairn.ingest.tally import epoch as _epoch
from cairn.ingest.tally import now_iso as _now_iso
from cairn.model import Diagnostic, Document, Failure, FileState, Run, SourceRoot
from cairn.sources import SourceFile, discover, source_file
from cairn.store import Store

RACY_SECONDS = 2.0
"""A file whose recorded mtime is this close to (or after) the start of the last run
may have changed again within the file system's mtime granularity (FAT: 2 s) after it
was read: it is hashed again instead of trusted by its (size, mtime)."""

COMMIT_SECONDS = 2.0
"""A transaction open this long is committed before the next file is waited for, so
one slow file does not keep the good notes parsed before it out of the index. Not much
shorter: each commit writes the pages it touched in every index of the tables, most of
them keyed by random ids, so the bytes a commit writes grow with the index; when the
parse workers trail the writer (a loaded machine), short waits made most commits."""

COLD_COMMIT_SECONDS = 10.0
""":data:`COMMIT_SECONDS` in a root's first index run, with :data:`COLD_BATCH` files
at most per transaction: there every file is new, the transactions are many, and each
rewrites the pages of the random-id indexes (units, links, documents) it touches, which
a first build of a large root touches nearly all of: most of the run's bytes written.
Fewer commits write less; what a crash loses is re-indexed by the next run."""

Progress = Callable[[int, int, str], None]
"""``progress(done, total, relpath)``: called after each file."""


def make_root(path: Path, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> SourceRoot:
    """A :class:`SourceRoot` for a folder, with its deterministic id."""
    real = path.expanduser().resolve()
    return SourceRoot(ids.root_id(real), real.as_posix(), tuple(include), tuple(exclude))


def _is_note(relpath: str) -> bool:
    return bool(formats.candidates(relpath))


class Indexer:
    """Indexes source roots into a store.

    Args:
        store: the open store.
        config_hash: fingerprint of the settings that change parse results; recorded
            in each run.
        parse_options: per-format keyword options passed to text parsers that accept
            them (``{"org": {"options": OrgOptions(...)}}``).
        workers: processes that parse files side by side on a large run (default: the
            usable CPUs, ``CAIRN_WORKERS``; ``1``: parse in this process).
        limits: per-file limits and the deletion guard (``[index]``).
        redact: the redaction hook (:meth:`cairn.redact.service.RedactService.redactor`):
            every parsed document passes through it before it is stored.
        scrub: what the text of every failure and warning passes through before it
            is stored or returned (:meth:`cairn.redact.service.RedactService.message_scrubber`):
            a parser's message may quote what it read, such as a conversation's title.
    """

    def __init__(
        self,
        store: Store,
        *,
        config_hash: str = "",
        parse_options: dict[str, dict[str, object]] | None = None,
        workers: int | None = None,
        limits: IndexLimits | None = None,
        redact: Callable[[Document], Document] | None = None,
        scrub: Callable[[str], str] | None = None,
    ) -> None:
        self.store = store
        self.redact = redact or (lambda doc: doc)
        self.scrub = scrub or (lambda text: text)
        self.config_hash = config_hash
        self.parse_options = parse_options or {}
        self.limits = limits or IndexLimits()
        self.preparer = Preparer(workers, memory_mb=self.limits.file_memory_mb)
        self.run_id = str(uuid.uuid4())
        self.started = ""
        """When the run began (ISO 8601 UTC), once it has been recorded."""
        self._bundles: dict[str, list[str]] = {}
        self._force = False
        self._racy_since = 0.0
        self.relinked = False
        """Whether link targets other than notes (attachments) changed in the run: links
        were resolved again, and the graph must be updated even if no note changed."""

    def run(
        self,
        roots: list[SourceRoot],
        progress: Progress | None = None,
        *,
        allow_mass_delete: bool = False,
    ) -> Run:
        """Index every root once and return the run record (also saved in the store).

        Roots that do not exist are reported as failures; nothing indexed from them is
        removed (a missing mount must not wipe the index).

        Raises:
            MassDelete: the run would remove more than ``limits.mass_delete_share`` of a
                root's files and ``allow_mass_delete`` is false (nothing was changed).
        """
        started, t0, tally = _now_iso(), time.perf_counter(), _Tally()
        plans: list[tuple[SourceRoot, list[SourceFile], set[str]]] = []
        for root in roots:
            folder = Path(root.path)
            if not folder.is_dir():
                tally.failures.append(
                    Failure(root.path, "source root is not a folder or is missing")
                )
                tally.failed += 1
                continue
            if (bad := glob_failure(root)) is not None:
                tally.failures.append(bad)
                tally.failed += 1
                continue
            self.store.upsert_root(root)
            found = discover(folder, include=root.include, exclude=root.exclude, is_note=_is_note,
                             skip_templates=self.limits.skip_templates)
            tally.warnings.extend(found.warnings)
            self._bundles[root.id] = okf.find_bundles(folder, [f.relpath for f in found.files])
            before = {p for r, p in self.store.attachments() if r == root.id}
            if before != set(found.attachments):  # link targets appeared or went away
                self.relinked = True
                with self.store.transaction():
                    self.store.set_attachments(root.id, found.attachments)
            seen = {f.relpath for f in found.files}
            if found.unreadable:  # a folder that could not be listed hides files, not gone
                hidden = tuple(found.unreadable)
                seen.update(p for p in self.store.file_states(root.id) if p.startswith(hidden))
            plans.append((root, found.files, seen))
        states = {root.id: self.store.file_states(root.id) for root, _f, _s in plans}
        for root, _files, seen in plans:
            known_files = states[root.id]
            check_mass_delete(
                root.path,
                len(known_files),
                len(set(known_files) - seen),
                self.limits.mass_delete_share,
                allow_mass_delete,
            )
        self._check_settings(tally)
        self._begin(started)
        total = sum(len(p[1]) for p in plans)
        done = 0
        for root, files, seen in plans:
            known = states[root.id]
            if known and not files and (root.include or root.exclude):
                tally.warnings.append(
                    Diagnostic(
                        "",
                        f"{root.path}: no file matches its --include/--exclude globs "
                        f"({', '.join((*root.include, *(f'-{x}' for x in root.exclude)))}); "
                        f"its {len(known)} indexed files are removed",
                    )
                )
            # Removals first: a note renamed (or moved) keeps its declared ID, which the
            # old path would otherwise still hold when the new path is indexed.
            for gone in sorted(set(known) - seen):
                self._remove(root, gone, tally)
            done = self._index_files(root, files, known, tally, progress, done, total,
                                     cold=not known)
        return self._finish(started, t0, tally)

    def run_paths(
        self,
        root: SourceRoot,
        relpaths: Iterable[str],
        progress: Progress | None = None,
        *,
        allow_mass_delete: bool = False,
    ) -> Run:
        """Index the given files of one registered root, and only them: a file that is
        gone (or is now excluded, ignored or not a regular file) is removed with
        everything indexed from it; the others are indexed as a full run would (the
        same change detection, so an unchanged file costs one ``stat``).

        Args:
            root: a registered root.
            relpaths: paths relative to the root (POSIX), e.g. from a file watcher.
            progress: ``progress(done, total, relpath)`` after each file.

        Raises:
            MassDelete: see :meth:`run`.
        """
        started, t0, tally = _now_iso(), time.perf_counter(), _Tally()
        folder = Path(root.path)
        if not folder.is_dir():
            tally.failures.append(Failure(root.path, "source root is not a folder or is missing"))
            tally.failed += 1
            return self._finish(started, t0, tally)
        if (bad := glob_failure(root)) is not None:
            tally.failures.append(bad)
            tally.failed += 1
            return self._finish(started, t0, tally)
        wanted = sorted(dict.fromkeys(relpaths))
        # only what these files need: their states, the count, the index.md files
        # (bundle detection) — cheap on a large root
        known = self.store.file_states(root.id, wanted)
        count = self.store.file_count(root.id)
        files: list[SourceFile] = []
        gone: list[str] = []
        for rel in wanted:
            sf = source_file(folder, rel, include=root.include, exclude=root.exclude,
                             skip_templates=self.limits.skip_templates)
            if sf is not None and _is_note(rel):
                files.append(sf)
            elif rel in known:
                gone.append(rel)
        check_mass_delete(
            root.path, count, len(gone), self.limits.mass_delete_share,
            allow_mass_delete,
        )
        self._check_settings(tally)
        self._begin(started)
        for rel in gone:
            self._remove(root, rel, tally)
        indexes = set(self.store.file_paths(root.id, named="index.md"))
        relnames = (indexes - set(gone)) | {f.relpath for f in files}
        self._bundles[root.id] = okf.find_bundles(folder, sorted(relnames))
        self._index_files(root, files, known, tally, progress, 0, len(files))
        return self._finish(started, t0, tally)

    def _check_settings(self, tally: _Tally) -> None:
        """Settings that change parse results (e.g. Org tag inheritance) changed since
        the last run: every file is parsed again, even those whose bytes did not."""
        last = self.store.last_run()
        self._force = last is not None and last.config_hash != self.config_hash
        self._racy_since = _epoch(last.started) - RACY_SECONDS if last else 0.0
        if last is not None and last.finished is None:
            # the last run was killed or failed part way: what it committed may not
            # have been linked yet, so links are resolved again and the graph updated
            self.relinked = True
        if self._force:
            tally.warnings.append(
                Diagnostic(
                    "",
                    "settings changed since the last run: parsing every file again",
                    severity="info",
                )
            )

    def _failure(self, f: Failure) -> Failure:
        """``f`` with its reason scrubbed (see ``scrub``)."""
        reason = self.scrub(f.reason)
        return f if reason == f.reason else dataclasses.replace(f, reason=reason)

    def _begin(self, started: str) -> None:
        """Record the run as started (``finished`` empty): a run killed before its end
        stays visible as one that did not finish."""
        with self.store.transaction():
            self.store.save_run(
                Run(id=self.run_id, started=started, finished=None, config_hash=self.config_hash)
            )
        self.started = started

    def _remove(self, root: SourceRoot, relpath: str, tally: _Tally) -> None:
        with self.store.transaction():
            self.store.remove_file(root.id, relpath)
        tally.removed += 1

    def _index_files(
        self,
        root: SourceRoot,
        files: list[SourceFile],
        known: dict[str, FileState],
        tally: _Tally,
        progress: Progress | None,
        done: int,
        total: int,
        *,
        cold: bool = False,
    ) -> int:
        """Index ``files``: those whose (size, mtime) did not change are not even read;
        the rest are read and parsed (in worker processes when there are many) and
        stored in order, in batches of one transaction each (a commit per file costs
        more than parsing a small note), each file a savepoint inside it; ``cold``: the
        root's first run, in larger batches (:data:`COLD_COMMIT_SECONDS`)."""
        most, wait = (COLD_BATCH, COLD_COMMIT_SECONDS) if cold else (BATCH, COMMIT_SECONDS)
        first = done  # files of the run's earlier roots: stored and committed
        jobs: list[Job] = []
        for sf in files:
            state = known.get(sf.relpath)
            if (
                not self._force
                and state is not None
                and (state.size, state.mtime) == (sf.size, sf.mtime)
                and sf.mtime < self._racy_since
            ):
                tally.seen += 1
                if state.status == "failed":  # still failing: say so in every run
                    tally.failed += 1
                    tally.failures.append(
                        Failure(sf.relpath, f"{state.reason} (unchanged since it failed)")
                    )
                elif state.status == "partial":  # indexed in part: say so in every run
                    tally.unchanged += 1
                    tally.warnings.append(
                        Diagnostic(sf.relpath, f"partly indexed: {state.reason} (unchanged)")
                    )
                else:
                    tally.unchanged += 1
                done += 1
                if progress:
                    progress(done, total, sf.relpath)
                continue
            ok_hash = state.hash if state and state.status == "ok" and not self._force else None
            bundle = bundle_of(sf.relpath, self._bundles.get(root.id, []))
            jobs.append(
                Job(
                    sf,
                    ok_hash,
                    bundle,
                    self.parse_options,
                    max_bytes=self.limits.max_bytes,
                    seconds=self.limits.file_seconds,
                )
            )
        batch = Batch(self.store)
        with self.store.bulk_writes():  # keyword rows go in per batch, not per file
            try:
                for item in self.preparer.map(jobs, total=len(jobs)):
                    if item is None:  # the next file is not ready: commit what waits
                        if batch.age() > wait:
                            batch.commit()
                        continue
                    if batch.count and _heavy(item):  # commit the light ones before it
                        batch.commit()
                    batch.open()
                    tally.seen += 1
                    self._index_file(root, item, known.get(item.file.relpath), tally)
                    batch.count += 1
                    if batch.count >= most:
                        batch.commit()
                    done += 1
                    if progress:
                        progress(done, total, item.file.relpath)
            except BaseException as exc:
                batch.abort()
                if isinstance(exc, KeyboardInterrupt) and not isinstance(exc, IndexInterrupted):
                    try:
                        held = self.store.file_states(root.id)  # after the rollback
                    except Exception:  # the index cannot say: the bare interrupt
                        raise exc from None
                    kept = first + sum(sf.relpath in held for sf in files)
                    raise IndexInterrupted(kept, total) from exc
                raise
            batch.commit()
        return done

    def _finish(self, started: str, t0: float, tally: _Tally) -> Run:
        """Resolve links if anything changed, and record the run."""
        self.preparer.close()
        if tally.added or tally.changed or tally.removed or self.relinked:
            # only the links that could resolve differently because of what changed
            changed, removed = self.store.edges.changed_documents()
            with self.store.bulk_writes(), self.store.transaction():
                resolve_links(self.store, changed, removed)
        run = tally.record(
            id=self.run_id,
            started=started,
            finished=_now_iso(),
            config_hash=self.config_hash,
            failures=tuple(self._failure(f) for f in tally.failures),
            warnings=tuple(
                dataclasses.replace(w, message=self.scrub(w.message)) for w in tally.warnings
            ),
            seconds=round(time.perf_counter() - t0, 4),
        )
        with self.store.transaction():
            self.store.save_run(run)
        return run

    def _index_file(
        self, root: SourceRoot, item: Prepared, state: FileState | None, tally: _Tally
    ) -> None:
        """Store what :func:`cairn.ingest.prepare.prepare` found for one file."""
        item = dataclasses.replace(
            item,
            failure=self._failure(item.failure) if item.failure is not None else None,
            failures=tuple(self._failure(f) for f in item.failures),
        )
        sf, digest = item.file, item.digest
        if item.outcome in ("vanished", "read-failed"):
            assert item.failure is not None
            if item.outcome == "vanished":
                tally.skipped += 1
                tally.warnings.append(Diagnostic(sf.relpath, item.failure.reason, severity="info"))
                return
            tally.failed += 1
            tally.failures.append(item.failure)
            with self.store.transaction():
                self.store.record_failure(root.id, sf.relpath, sf.size, sf.mtime, "", item.failure)
            return
        if item.outcome == "unchanged":
            with self.store.transaction():
                self.store.touch_file(root.id, sf.relpath, sf.size, sf.mtime)
            tally.unchanged += 1
            return
        if item.outcome == "unknown":
            tally.skipped += 1
            tally.warnings.append(
                Diagnostic(
                    sf.relpath,
                    "content not recognised as a supported format; skipped",
                    severity="info",
                )
            )
            return
        fmt = formats.by_name(item.fmt)
        assert fmt is not None
        if item.outcome == "export":
            store_export(
                self.store, root, sf, state, digest, fmt, tally,
                max_entry=self.limits.max_bytes, redact=self.redact, scrub=self._failure,
            )
            return
        docs, failures = [self.redact(d) for d in item.docs], list(item.failures)
        tally.failures.extend(failures)
        if not docs and failures:
            tally.failed += 1
            with self.store.transaction():
                self.store.record_failure(
                    root.id, sf.relpath, sf.size, sf.mtime, digest, failures[0]
                )
            return
        try:
            with self.store.transaction():
                final = ids.assign_ids(self.store, root, docs, sf, digest)
                self.store.replace_file(
                    root.id,
                    sf.relpath,
                    size=sf.size,
                    mtime=sf.mtime,
                    hash_=digest,
                    format_=fmt.name,
                    documents=final,
                    failure=failures[0] if failures else None,
                )
        except StoreUnwritable:
            raise  # a full disk or a read-only index: the run stops at its last commit
        except Exception as exc:  # a store-level fault for this file only
            failure = self._failure(
                Failure(sf.relpath, f"could not store: {type(exc).__name__}: {exc}")
            )
            tally.failures.append(failure)
            tally.failed += 1
            with self.store.transaction():
                self.store.record_failure(root.id, sf.relpath, sf.size, sf.mtime, digest, failure)
            return
        for d in final:
            tally.warnings.extend(d.warnings)
        if failures:
            tally.failed += 1
        elif state is None:
            tally.added += 1
        else:
            tally.changed += 1


def _heavy(item: Prepared) -> bool:
    """Whether storing this file may take a while (a big file or many units)."""
    return item.file.size > 1_000_000 or sum(len(d.units) for d in item.docs) > 2000
