"""The per-file work of an index run that needs no store: read, hash, detect, parse.

:func:`prepare` turns one :class:`Job` into a :class:`Prepared` outcome; it is a plain
function of its arguments, so :func:`prepare_all` can run it in worker processes
(parsing is CPU-bound Python: on a machine with several cores a cold index parses
files side by side) while the indexer stores results in order in the main process.
Chat exports are only detected here; they are read as a stream by the indexer.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import signal
import sys
import threading
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Literal

from cairn import formats
from cairn.errors import ParseError
from cairn.ingest.guards import TimeUp, die_with_parent, limit_memory, time_limit
from cairn.ingest.stuck import STUCK_GRACE, AnswerClock, deadline, processes, wait_exits
from cairn.model import Diagnostic, Document, Failure
from cairn.sources import SourceFile, content_hash, decode, open_source, too_big

Outcome = Literal["unchanged", "read-failed", "vanished", "unknown", "export", "parsed"]

_NATIVE_THREADS = ("onnxruntime", "torch", "sentence_transformers")
"""Libraries that run thread pools of their own once loaded: a process holding one is
not forked (a worker could inherit a lock one of those threads held)."""

_LOADED_IN = os.getpid()
"""The process that imported this module: in a worker started by the ``forkserver``
(which preloads it), the forkserver, so a worker whose forkserver died before the
worker started exits at once."""

PARENT = "CAIRN_POOL_PARENT"
"""The environment variable telling the parse pool's ``forkserver`` which process
started it (see :mod:`cairn.ingest.forkserver_guard`)."""

PARALLEL_MIN_FILES = 64
"""Fewer files to parse than this are parsed in the main process (a pool costs more)."""


@dataclass(frozen=True, slots=True)
class Job:
    """One file to look at.

    Attributes:
        file: the file found by discovery.
        known_hash: the content hash the index holds for it when it was indexed
            without failure (``None``: parse whatever the hash).
        bundle: the OKF bundle folder holding it, or ``None``.
        options: per-format keyword options of text parsers.
        max_bytes: a larger file is reported without being read (``0``: no limit); a
            streamed export is not limited, but each of its conversations is.
        seconds: wall-clock seconds its parse may take (``0``: no limit; enforced with
            ``SIGALRM`` where the parse runs on a process's main thread).
    """

    file: SourceFile
    known_hash: str | None
    bundle: str | None
    options: Mapping[str, Mapping[str, object]]
    max_bytes: int = 0
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Prepared:
    """What :func:`prepare` found.

    ``outcome``: ``unchanged`` (same hash: only touch), ``read-failed`` / ``vanished``
    (``failure`` says why), ``unknown`` (not a supported format), ``export`` (a
    multi-document file for the streaming reader; ``fmt`` names it) or ``parsed``
    (``docs`` and the ``failures`` of a text parser; no docs and a failure: failed).
    """

    file: SourceFile
    outcome: Outcome
    digest: str = ""
    fmt: str = ""
    docs: tuple[Document, ...] = ()
    failures: tuple[Failure, ...] = ()
    failure: Failure | None = None


def prepare(job: Job) -> Prepared:
    """Read, hash, detect and parse one file. Never raises for the file's content."""
    sf = job.file
    read = _read(job)
    if isinstance(read, Failure):
        vanished = read.reason.startswith("file vanished")
        return Prepared(sf, "vanished" if vanished else "read-failed", failure=read)
    data, digest, fmt = read
    if job.known_hash is not None and job.known_hash == digest:
        return Prepared(sf, "unchanged", digest)
    if fmt is None:
        return Prepared(sf, "unknown", digest)
    if fmt.kind == "file":
        return Prepared(sf, "export", digest, fmt.name)
    try:
        with time_limit(job.seconds):
            docs, failures = parse_text(fmt, sf, data, job.bundle, job.options.get(fmt.name, {}))
    except TimeUp:
        docs, failures = [], [
            Failure(
                sf.relpath,
                f"parsing took longer than {job.seconds:g} s ([index] file_seconds); "
                "not indexed",
            )
        ]
    except MemoryError:
        docs, failures = [], [
            Failure(sf.relpath, "parsing needed more memory than allowed ([index] file_memory_mb)")
        ]
    return Prepared(sf, "parsed", digest, fmt.name, tuple(docs), tuple(failures))


HEAD_BYTES = 8192
"""Bytes a format is detected from."""


def _read(job: Job) -> tuple[bytes, str, formats.Format | None] | Failure:
    """(bytes, content hash, format) of a job's file, or why it cannot be read.

    The format is detected from the name and the first :data:`HEAD_BYTES`. An export read
    by a streaming file parser (a chat export of hundreds of MB) is hashed chunk by chunk
    and only its head is returned: its reader streams it again, so holding it whole here
    would cost as much memory as the file. For the same reason ``job.max_bytes`` limits
    the size of every other file, not an export's (its parser limits each conversation).
    """
    sf, limit = job.file, job.max_bytes
    fd = open_source(sf)
    if isinstance(fd, Failure):
        return fd
    try:
        with os.fdopen(fd, "rb", closefd=False) as fh:
            head = fh.read(HEAD_BYTES)
            fmt = formats.OKF if job.bundle is not None else formats.detect(sf.relpath, head)
            if fmt is not None and fmt.kind == "file":
                import hashlib

                hasher, size = hashlib.blake2b(head, digest_size=16), len(head)
                while chunk := fh.read(1 << 20):
                    hasher.update(chunk)
                    size += len(chunk)
                data, digest = head, hasher.hexdigest()
                limit = 0
            elif limit and (on_disk := os.fstat(fd).st_size) > limit:
                return Failure(sf.relpath, too_big(on_disk, limit))
            else:
                data = head + (fh.read(limit + 1 - len(head)) if limit else fh.read())
                size, digest = len(data), content_hash(data)
    except OSError as exc:
        return Failure(sf.relpath, f"cannot read: {exc.strerror}")
    finally:
        os.close(fd)
    if limit and size > limit:  # it grew while we read it
        return Failure(sf.relpath, too_big(size, limit))
    return data, digest, fmt


def parse_text(
    fmt: formats.Format,
    sf: SourceFile,
    data: bytes,
    bundle: str | None,
    opts: Mapping[str, object],
) -> tuple[list[Document], list[Failure]]:
    """Decode and parse a one-document file; a parser error becomes a failure."""
    try:
        try:
            decoded = decode(data)
        except ValueError as exc:
            return [], [Failure(sf.relpath, str(exc))]
        decode_warnings = tuple(Diagnostic(sf.relpath, w) for w in decoded.warnings)
        parser = fmt.text_parser()
        if bundle is not None:
            from cairn.ingest.bundles import rebase_bundle

            inner = sf.relpath[len(bundle) + 1 :] if bundle else sf.relpath
            doc = rebase_bundle(parser(decoded.text, inner, **opts), sf.relpath, bundle)
        else:
            doc = parser(decoded.text, sf.relpath, **opts)
        if decode_warnings:
            doc = dataclasses.replace(doc, warnings=(*decode_warnings, *doc.warnings))
        return [doc], []
    except (TimeUp, MemoryError):
        raise
    except ParseError as exc:
        return [], [Failure(sf.relpath, exc.reason, exc.line)]
    except RecursionError:
        return [], [Failure(sf.relpath, "parser error: nesting too deep")]
    except Exception as exc:  # a parser bug must not stop the run
        return [], [Failure(sf.relpath, f"parser error: {type(exc).__name__}: {exc}")]


def _worker_init(mb: int, parent: int | None) -> None:
    """Pool initializer: die with the process that started the pool (``parent``: a
    forked worker shares its open files, the writer lock's among them, and an orphan
    would keep the index locked after the parent was killed; ``None``: the worker's
    parent is the ``forkserver``, which exits with that process), and cap this worker's
    memory. Ctrl-C is the parent's to handle: a terminal sends SIGINT to the whole
    process group, and a worker that took it would print a ``KeyboardInterrupt``
    traceback of its own; the parent stops the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(_LOADED_IN if parent is None else parent)
    limit_memory(mb)


def default_workers() -> int:
    """Worker processes for parsing: the usable CPUs (``CAIRN_WORKERS`` overrides;
    ``1`` parses in the main process)."""
    env = os.environ.get("CAIRN_WORKERS", "")
    if env.isdigit() and int(env) >= 1:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class Preparer:
    """Runs :func:`prepare` over batches of jobs, in a process pool when it pays.

    The pool (forked workers, see :meth:`_start`) is started on the first batch large
    enough and kept until :meth:`close`.

    Args:
        workers: processes to use (``1``: always in this process).
        memory_mb: address-space limit of each worker process (``0``: none).
    """

    def __init__(self, workers: int | None = None, *, memory_mb: int = 0) -> None:
        self.workers = default_workers() if workers is None else max(1, workers)
        self.memory_mb = memory_mb
        self._pool: Executor | None = None
        self._broken = False

    def map(self, jobs: Sequence[Job], *, total: int) -> Iterator[Prepared | None]:
        """Outcomes of ``jobs`` in their order; ``total`` is how many files the whole run
        will parse (a pool is started only when that is worth it).

        ``None`` is yielded before an outcome that is not ready yet (a parse about to
        start in this process, or a worker still busy): the caller may commit what it
        has stored so far, so one slow file does not hold good notes back. A worker
        that dies ends the pool (the rest is parsed here). A worker that gives no answer
        for :func:`cairn.ingest.stuck.deadline` seconds (hung in native code, or
        stopped) is killed with its pool, the pool replaced, and its file's outcome is
        ``read-failed`` with a reason that says so; the other jobs go on.
        """
        if self.workers < 2 or total < PARALLEL_MIN_FILES or len(jobs) < 2 or self._broken:
            yield from _inline(jobs)
            return
        pool = self._start()
        if pool is None:
            yield from _inline(jobs)
            return
        window = self.workers * 8
        pending: deque[tuple[int, Future[Prepared]]] = deque()
        submitted = done = 0
        clock = AnswerClock()
        try:
            while done < len(jobs):
                while submitted < len(jobs) and len(pending) < window:
                    fut = pool.submit(prepare, jobs[submitted])
                    fut.add_done_callback(clock.answered)
                    pending.append((submitted, fut))
                    submitted += 1
                index, fut = pending[0]
                if not fut.done():
                    yield None
                    if not clock.wait(fut, deadline(jobs[index].seconds)):
                        pending.popleft()
                        done += 1
                        replaced = self._replace_stuck(pending, jobs, clock)
                        yield _stuck(jobs[index])
                        if replaced is None:
                            self._broken = True
                            yield from _inline(jobs[done:])
                            return
                        pool = replaced
                        continue
                pending.popleft()
                item = fut.result()
                done += 1
                yield item
        except Exception:  # a worker died (memory, a signal): finish here, no pool again
            for _, f in pending:
                f.cancel()
            self._broken = True
            self.close()
            yield from _inline(jobs[done:])
        except BaseException:  # Ctrl-C (or the run stopped): no waiting for parses
            self._stop_now()
            raise

    def _replace_stuck(self, pending: deque[tuple[int, Future[Prepared]]],
                       jobs: Sequence[Job], clock: AnswerClock) -> Executor | None:
        """Kill the pool one of whose workers gave no answer in time (which worker holds
        which job is not known: every worker is killed, a stopped one included), start
        a new one, and submit again the jobs of ``pending`` that have no outcome yet
        (outcomes already received are kept). ``None`` when no new pool starts."""
        self._kill_pool()
        pool = self._start()
        if pool is None:
            return None
        clock.restart()
        for i, (index, fut) in enumerate(pending):
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                continue
            fresh = pool.submit(prepare, jobs[index])
            fresh.add_done_callback(clock.answered)
            pending[i] = (index, fresh)
        return pool

    def _start(self) -> Executor | None:
        """A pool of worker processes, or ``None`` to parse in this process.

        Workers are forked (they inherit the loaded parsers and run only
        :func:`prepare`) from a process that runs no other thread. Forking a threaded
        process copies the locks its other threads hold, and a worker then waits for
        one for good: the watching child of ``serve --watch`` reads its requests on a
        thread, and every worker forked from it blocked on the standard input's lock
        in its first step. So a process with other threads (or with a native library's
        thread pool, invisible to ``threading``) starts its workers from the
        ``forkserver``: a fresh process with one thread, which exits with this one.
        ``forkserver`` (like ``spawn``) imports the main module once more, as
        ``__mp_main__``: a threaded process whose main script does not test
        ``__name__ == "__main__"`` (a library user's script) parses here instead.
        """
        if self._pool is None:
            methods = multiprocessing.get_all_start_methods()
            here = threading.current_thread()
            alone = here is threading.main_thread() and threading.active_count() == 1
            native = any(name in sys.modules for name in _NATIVE_THREADS)
            method = "fork" if alone and not native else "forkserver"
            if method not in methods or (method == "forkserver" and not _main_is_guarded()):
                return None
            for fmt in formats.FORMATS:  # load the parsers once, before forking
                with contextlib.suppress(ImportError):
                    fmt.text_parser() if fmt.kind == "text" else fmt.file_parser()
            with contextlib.suppress(ImportError):
                formats.OKF.text_parser()
            try:
                ctx = multiprocessing.get_context(method)
                if method == "forkserver":
                    ctx.set_forkserver_preload(
                        ["cairn.ingest.forkserver_guard", "__main__", __name__])
                    os.environ[PARENT] = str(os.getpid())  # the forkserver inherits it
                self._pool = ProcessPoolExecutor(
                    self.workers,
                    mp_context=ctx,
                    initializer=_worker_init,
                    initargs=(self.memory_mb, os.getpid() if method == "fork" else None),
                )
            except (OSError, ValueError):
                self._broken = True
                return None
        return self._pool

    def _stop_now(self) -> None:
        """Stop the pool without waiting for the parses in flight: the workers ignore
        Ctrl-C (see :func:`_worker_init`), so they are terminated."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        for proc in processes(pool):
            with contextlib.suppress(Exception):
                proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)

    def _kill_pool(self) -> None:
        """SIGKILL every worker of the pool (a stopped one too) and drop the pool."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        procs = processes(pool)
        for proc in procs:
            with contextlib.suppress(Exception):
                proc.kill()
        wait_exits(procs, STUCK_GRACE)
        pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        """Stop the pool, if one was started (idempotent). Idle workers exit at once;
        one that has not exited :data:`STUCK_GRACE` seconds later (stopped, or hung in
        native code) is killed, so closing never waits for good."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        procs = processes(pool)
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in wait_exits(procs, STUCK_GRACE):
            with contextlib.suppress(Exception):
                proc.kill()
        pool.shutdown(wait=True)


def _stuck(job: Job) -> Prepared:
    """The outcome of a file whose worker gave no answer in time."""
    return Prepared(job.file, "read-failed", failure=Failure(
        job.file.relpath,
        f"its parsing worker gave no answer within {deadline(job.seconds):g} s ([index] "
        "file_seconds plus a grace; hung in native code or stopped); the worker was "
        "killed and replaced; not indexed"))


def _main_is_guarded() -> bool:
    """Whether importing the main module again runs no work: it was run with ``-m``
    (cairn's child processes), is interactive, or its source tests ``__main__``."""
    main = sys.modules.get("__main__")
    if main is None or getattr(main, "__spec__", None) is not None:
        return True
    path = getattr(main, "__file__", None)
    if not path:
        return True
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return "__main__" in fh.read(1 << 20)
    except OSError:
        return False


def _inline(jobs: Sequence[Job]) -> Iterator[Prepared | None]:
    """Prepare in this process, a ``None`` before each parse (see :meth:`Preparer.map`)."""
    for job in jobs:
        yield None
        yield prepare(job)
