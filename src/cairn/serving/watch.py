"""Watch mode: keep the index equal to the files as they are edited.

File system events are hints only. Each debounced batch of changed paths is widened
(a folder that appeared or was renamed: every file in it; a path that is gone: every
indexed file under it), narrowed to what a full run would index or remove, and handed
to :meth:`cairn.app.Cairn.index_paths`, which re-stats and hashes each file — so the
index always ends equal to what ``cairn index`` would build. Files modified within
``recheck_seconds`` of being indexed are handed over once more after that time (an
edit in the same mtime tick is then seen: :data:`cairn.ingest.pipeline.RACY_SECONDS`).
A change to an attachment (an image, a PDF: link targets) or a ``types.yaml`` runs a
full index of its root instead.

The watcher holds the index's writer lock for as long as it runs; readers are never
blocked. An error after the first run (SQLite busy beyond its wait because another
program holds the database, a file vanishing mid-run, a full disk) does not end it:
it is reported as a :class:`WatchBatch` with ``error`` and the batch (or the catch-up
run) is tried again after :data:`RETRY_SECONDS`, its paths kept. Only a fatal
condition ends the watch (:func:`_fatal`: the index file deleted, an invalid
configuration, an index that cannot be written).

``watchfiles`` (an optional dependency: ``pip install cairn[watch]``) is imported only
here; ``poll = true`` polls the roots instead of using OS events (network
and FUSE file systems whose events are unreliable).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cairn.app import Cairn, refused_mass_delete
from cairn.errors import (
    CairnError,
    ConfigError,
    ProviderUnavailable,
    StoreError,
    StoreUnwritable,
)
from cairn.model import Run, SourceRoot

RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
"""Waits before a failed batch or catch-up run is tried again: the n-th failure in a
row waits the n-th figure, the last one after that."""


@dataclass(frozen=True, slots=True)
class WatchSettings:
    """The ``[watch]`` settings.

    Attributes:
        debounce_ms: events are gathered for this long (milliseconds) after the first
            one before a batch is indexed (a file saved twice in it is indexed once).
        poll: poll the roots instead of relying on OS events.
        poll_ms: the polling interval in milliseconds (with ``poll``).
        recheck_seconds: files modified this recently when indexed are checked again
            after this many seconds (mtime granularity).
    """

    debounce_ms: int = 200
    poll: bool = False
    poll_ms: int = 500
    recheck_seconds: float = 2.5

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any]) -> WatchSettings:
        """Read a ``[watch]`` table.

        Raises:
            ConfigError: a value of the wrong type or negative.
        """
        d = cls()
        try:
            poll = table.get("poll", d.poll)
            if not isinstance(poll, bool):
                raise TypeError("poll must be true or false")
            out = cls(
                debounce_ms=int(table.get("debounce_ms", d.debounce_ms)),
                poll=poll,
                poll_ms=int(table.get("poll_ms", d.poll_ms)),
                recheck_seconds=float(table.get("recheck_seconds", d.recheck_seconds)),
            )
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"[watch] has a value of the wrong type: {exc}") from exc
        if min(out.debounce_ms, out.poll_ms, out.recheck_seconds) < 0:
            raise ConfigError("[watch] values must be 0 or positive")
        return out


@dataclass(frozen=True, slots=True)
class WatchBatch:
    """What the watcher did with one batch of events.

    Attributes:
        run: the index run (``None`` when an error stopped it, see ``error``).
        paths: files handed over; ``full``: a full run of the roots was needed.
        error: why the batch was not indexed (e.g. the deletion guard), or ``""``.
        seconds: wall time of the batch; ``first_event``: ``time.time()`` of its
            earliest event (latency = indexed time − first_event).
        indexed_at: ``time.time()`` when the batch was committed.
        retry_in: seconds until the failed batch is tried again (its paths are
            kept); ``0.0``: not retried (done, or refused by the deletion guard).
    """

    run: Run | None
    paths: tuple[str, ...] = ()
    full: bool = False
    error: str = ""
    seconds: float = 0.0
    first_event: float = 0.0
    indexed_at: float = 0.0
    retry_in: float = 0.0


@dataclass
class _Pending:
    paths: set[str] = field(default_factory=set)
    since: float = 0.0


@dataclass
class _Backoff:
    """When a failed step may run again (:data:`RETRY_SECONDS`)."""

    failures: int = 0
    at: float = 0.0

    def due(self) -> bool:
        return time.monotonic() >= self.at

    def failed(self) -> float:
        """Count a failure; the seconds until the next try."""
        delay = RETRY_SECONDS[min(self.failures, len(RETRY_SECONDS) - 1)]
        self.failures += 1
        self.at = time.monotonic() + delay
        return delay

    def reset(self) -> None:
        self.failures, self.at = 0, 0.0


def watch(
    cairn: Cairn,
    paths: Sequence[str | os.PathLike[str]] | None = None,
    *,
    settings: WatchSettings | None = None,
    stop: threading.Event | None = None,
    on_batch: Callable[[WatchBatch], None] | None = None,
    on_ready: Callable[[Run], None] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    wait: float | None = 0.0,
    on_wait: Callable[[str], None] | None = None,
    embed: bool = True,
    allow_mass_delete: bool = False,
    between: Callable[[], None] | None = None,
) -> None:
    """Index the roots, then follow their changes until ``stop`` is set (or Ctrl-C).

    Args:
        cairn: the open knowledge base (it must stay open while watching).
        paths: folders to register and watch (default: every registered root).
        settings: ``[watch]`` settings (default: the configuration's).
        stop: set it to stop (from another thread); checked at least every 50 ms.
        on_batch: called after each batch with a :class:`WatchBatch`.
        on_ready: called with the catch-up run once the index is current.
        progress: ``progress(done, total, relpath)`` during the catch-up run.
        wait / on_wait: for the writer lock (see ``Cairn.runs.writing``).
        embed: embed new and changed notes (``False``: keyword search only).
        allow_mass_delete: let a batch remove more than ``[index] mass_delete_share``.
        between: called between batches (at least every 200 ms once the index is
            current), with the writer lock held: other work on the index the watcher
            runs for someone else (``serve --watch`` runs ``POST /v1/index`` there);
            an error it raises is reported through ``on_batch`` and not retried.

    Raises:
        ProviderUnavailable: ``watchfiles`` is not installed.
        cairn.store.lock.IndexBusy: another process is writing the index.
        CairnError: a path does not exist; the first run failed; later, a fatal
            error (:func:`_fatal`) — any other error is reported and tried again.
        KeyboardInterrupt: Ctrl-C (after the current batch was committed or undone;
            during an embedding step, after the embedder call in progress: the vectors
            made so far are kept and the rest are embedded by the next run).
    """
    try:
        import watchfiles
    except ImportError as exc:
        raise ProviderUnavailable(
            "cairn watch needs the watchfiles package: pip install 'cairn[watch]'"
        ) from exc
    cfg = settings or WatchSettings.from_mapping(cairn.config.watch)
    stop = stop or threading.Event()
    with cairn.runs.writing(wait, on_wait):
        ready = _stopped_if_interrupted(cairn.index(
            list(paths or []),
            progress=progress,
            embed=embed,
            allow_mass_delete=allow_mass_delete,
        ))
        roots = _watched_roots(cairn, paths)
        if not roots:
            raise CairnError(
                "no folder to watch: run `cairn watch FOLDER` (or `cairn index FOLDER` first)"
            )
        recheck: dict[str, float] = {}
        pending = _Pending()
        events = watchfiles.watch(
            *[r.path for r in roots],
            watch_filter=None,
            debounce=cfg.debounce_ms,
            step=50,
            stop_event=stop,
            rust_timeout=200,
            yield_on_timeout=True,
            force_polling=cfg.poll or None,
            poll_delay_ms=cfg.poll_ms,
            recursive=True,
            ignore_permission_denied=True,
        )
        caught_up = False
        backoff = _Backoff()

        def failed(what: str, exc: Exception, full: bool = False, since: float = 0.0) -> None:
            """Report ``exc`` (or raise it when fatal); the next try waits."""
            fatal = _fatal(cairn, exc)
            if fatal is not None:
                raise fatal from exc
            delay = backoff.failed()
            if on_batch is not None:
                on_batch(WatchBatch(None, (), full, f"{what} failed ({_cause(exc)}); "
                                    f"trying again in {delay:g} s", 0.0, since,
                                    time.time(), delay))

        for changes in events:
            if not caught_up:  # the OS watch is set up now: catch what changed meanwhile
                if not backoff.due():  # the run that succeeds re-reads these changes
                    continue
                try:
                    again = cairn.index(
                        list(paths or []), embed=embed, allow_mass_delete=allow_mass_delete
                    )
                except Exception as exc:
                    failed("the catch-up index run", exc, full=True)
                    continue
                _stopped_if_interrupted(again)
                caught_up = True
                backoff.reset()
                if on_ready is not None:
                    on_ready(again if again.added or again.changed or again.removed else ready)
                continue
            if between is not None:
                try:
                    between()
                except Exception as exc:  # the work is someone else's: report, go on
                    fatal = _fatal(cairn, exc)
                    if fatal is not None:
                        raise fatal from exc
                    if on_batch is not None:
                        on_batch(WatchBatch(None, (), False,
                                            f"work between batches failed ({_cause(exc)})"))
            now = time.time()
            if changes and not pending.paths:
                pending.since = now
            pending.paths.update(p for _change, p in changes)
            due = [p for p, at in recheck.items() if at <= now]
            for p in due:
                del recheck[p]
            if due and not pending.paths:
                pending.since = now
            pending.paths.update(due)
            if not pending.paths or not backoff.due():
                continue
            gone = _fatal(cairn, None)
            if gone is not None:
                raise gone
            try:
                batch = _index_batch(
                    cairn, roots, sorted(pending.paths), pending.since, embed,
                    allow_mass_delete,
                )
            except Exception as exc:  # pending is kept: the same paths, and more, later
                failed(f"indexing {len(pending.paths)} changed paths", exc,
                       since=pending.since)
                continue
            backoff.reset()
            pending = _Pending()
            if batch is None:
                continue
            if batch.run is not None and _interrupted(batch.run):
                if on_batch is not None:
                    on_batch(batch)
                raise KeyboardInterrupt
            for p in batch.paths:  # modified in the same tick as indexed: look again
                try:
                    if time.time() - os.lstat(p).st_mtime < cfg.recheck_seconds:
                        recheck[p] = time.time() + cfg.recheck_seconds
                except OSError:
                    pass
            if on_batch is not None:
                on_batch(batch)
            if stop.is_set():
                break


def _interrupted(run: Run) -> bool:
    """Whether Ctrl-C stopped ``run``'s embedding step (the step ends early and returns
    instead of raising, so the run is recorded: :func:`cairn.ingest.embedding.embed_pass`)."""
    return run.embedding is not None and run.embedding.interrupted


def _stopped_if_interrupted(run: Run) -> Run:
    """``run``, or ``KeyboardInterrupt`` when Ctrl-C stopped its embedding step: the
    watch ends there instead of embedding the rest in its next run."""
    if _interrupted(run):
        raise KeyboardInterrupt
    return run


def _cause(exc: BaseException) -> str:
    """``exc`` for a log line: its message, and its type when that is not cairn's."""
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, CairnError) else f"{type(exc).__name__}: {text}"


def _fatal(cairn: Cairn, exc: Exception | None) -> CairnError | None:
    """The error that ends the watch, or ``None`` when ``exc`` may pass (a busy or
    locked database, a file that vanished: tried again later).

    Fatal: an invalid configuration, a missing provider, an index that cannot be
    written (a full disk, a refused write, a read-only file or folder:
    :class:`StoreUnwritable`), and an SQLite index file that is gone (deleted or moved away: the
    watcher's connection would go on writing a file no one can open again) — checked
    before each batch too (``exc`` ``None``)."""
    if isinstance(exc, ConfigError | ProviderUnavailable | StoreUnwritable):
        return exc
    db = cairn.config.db_path
    if cairn.config.db_url is None and str(db) != ":memory:" and not db.exists():
        why = f" ({_cause(exc)})" if exc is not None else ""
        return StoreError(f"{db}: the index file is gone; watching stopped{why}")
    return None


def _watched_roots(
    cairn: Cairn, paths: Sequence[str | os.PathLike[str]] | None
) -> list[SourceRoot]:
    """The registered roots to watch: those given (after registering), else all."""
    roots = cairn.roots()
    if not paths:
        return [r for r in roots if Path(r.path).is_dir()]
    wanted = set()
    for p in paths:
        real = Path(p).expanduser().resolve()
        wanted.add(real if real.is_dir() else real.parent)
    return [r for r in roots if Path(r.path) in wanted and Path(r.path).is_dir()]


def _index_batch(
    cairn: Cairn,
    roots: Sequence[SourceRoot],
    changed: Iterable[str],
    since: float,
    embed: bool,
    allow_mass_delete: bool,
) -> WatchBatch | None:
    """Index one batch of changed paths (``None``: nothing in it concerns the index).

    Raises:
        Exception: whatever the run raised, except the deletion guard (reported in
            the batch's ``error``; the paths are not tried again).
    """
    t0 = time.perf_counter()
    try:
        done = cairn.runs.apply_changes(
            changed, roots=roots, embed=embed, allow_mass_delete=allow_mass_delete
        )
    except CairnError as exc:
        if not refused_mass_delete(exc):
            raise
        # the deletion guard decided, no accident: say so, keep watching, do not retry
        return WatchBatch(None, (), False, str(exc), time.perf_counter() - t0, since, time.time())
    if done is None:
        return None
    return WatchBatch(
        done.run, done.files, done.full, "", time.perf_counter() - t0, since, time.time()
    )
