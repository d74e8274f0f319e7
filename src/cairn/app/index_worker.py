"""A server's index runs in a child process of its own (``python -m
cairn.app.index_worker``), so that the run never holds the server's GIL while requests
wait for it.

On a small machine an index run on a thread of the server made every request wait: the
run's Python work (parsing, link resolution, the graph step, SQLite row building) and
the readers' share one interpreter lock, whatever the thread's CPU priority says. In a
process of its own, at a lower CPU priority (``os.nice``), the run takes only the CPU
the requests leave; readers see its commits through SQLite (WAL) and reload only what
changed (the dense matrix is patched, the graph and the waiting count follow the
store's change token).

The child lives as long as its server (it keeps the embedding model loaded between
runs): :class:`IndexWorker` starts it on the first run and stops it on ``close``; a
child whose parent went away sees the end of its input and exits. Requests and answers
are pickles with an 8-byte length, on the child's standard input and on a copy of its
standard output (its own ``print``s go to standard error). The channel is private to
the two processes, so nothing a client sends is ever unpickled.
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import subprocess
import sys
import threading
import traceback
from contextlib import suppress
from types import MappingProxyType
from typing import IO, TYPE_CHECKING, Any

from cairn.errors import CairnError, ChildUnavailable, StoreError
from cairn.ingest.background import INDEX_NICE

if TYPE_CHECKING:
    from cairn.config import Config
    from cairn.model import Run

__all__ = ["INDEX_NICE", "IndexWorker", "channel", "portable", "receive", "send", "start_child"]

_LEN = struct.Struct(">Q")


def _proxy(items: dict[str, Any]) -> MappingProxyType[str, Any]:
    return MappingProxyType(items)


def _dumps(value: object) -> bytes:
    """A pickle of ``value``; read-only tables (the frozen configuration's sections)
    travel as plain dicts and are read-only again on the other side."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {MappingProxyType: lambda m: (_proxy, (dict(m),))}
    pickler.dump(value)
    return buf.getvalue()


def send(out: IO[bytes], value: object) -> None:
    """Write one framed message (8-byte big-endian length, then the pickle)."""
    data = _dumps(value)
    out.write(_LEN.pack(len(data)) + data)
    out.flush()


def receive(inp: IO[bytes]) -> Any:
    """Read one framed message.

    Raises:
        EOFError: the other side closed the channel (or died).
    """
    head = inp.read(_LEN.size)
    if len(head) < _LEN.size:
        raise EOFError("the channel closed")
    (n,) = _LEN.unpack(head)
    data = inp.read(n)
    if len(data) < n:
        raise EOFError("the channel closed mid-message")
    return pickle.loads(data)


def portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives a pickle round trip, else a :class:`CairnError` (or
    :class:`StoreError`) with its message and type name."""
    try:
        back = pickle.loads(_dumps(exc))
    except Exception:
        kind = StoreError if isinstance(exc, StoreError) else CairnError
        return kind(f"{type(exc).__name__}: {exc}")
    return back if isinstance(back, BaseException) else CairnError(str(exc))


class IndexWorker:
    """The child process that runs a server's index runs (see the module doc).

    Args:
        config: the server's configuration (the child opens its own
            :class:`cairn.app.Cairn` from it: the same index, the same settings).
        nice: how many steps lower the child's CPU priority is (0–19).
    """

    def __init__(self, config: Config, *, nice: int) -> None:
        self.config, self.nice = config, nice
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()  # one run at a time
        self._state = threading.Lock()  # the child's start against close()
        self._closed = False

    def _start(self) -> subprocess.Popen[bytes]:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            return proc
        if proc is not None:  # it died between runs: a new one
            close_pipes(proc)
        with self._state:
            if self._closed:
                raise StoreError("the server is closing: no more index runs")
            proc = start_child("cairn.app.index_worker", (self.config, self.nice))
            self._proc = proc
        return proc

    def index(self) -> Run:
        """One :meth:`cairn.app.Cairn.index` of every registered root, in the child;
        waits for it (one run at a time).

        Returns:
            The run record.

        Raises:
            Whatever the run raised in the child (``IndexBusy``, ``MassDelete``,
            ``StoreError`` …; as a :class:`CairnError` with its message when the
            exception cannot travel), or :class:`ChildUnavailable` when the child
            died.
        """
        with self._lock:
            kind, value = self._run_once(retry=True)
        if kind == "error":
            raise value
        run: Run = value
        return run

    def _run_once(self, *, retry: bool) -> tuple[str, Any]:
        # A child kept from an earlier run may have died since (killed, out of
        # memory) without the death being visible yet: its run is tried once more
        # in a new child. A child started for this run that dies is reported.
        reused = self._proc is not None and self._proc.poll() is None
        proc: subprocess.Popen[bytes] | None = None
        try:
            proc = self._start()
            assert proc.stdin is not None and proc.stdout is not None
            send(proc.stdin, "index")
            kind, value = receive(proc.stdout)
        except (OSError, EOFError, ValueError) as exc:  # ValueError: close() closed a pipe
            code = None if proc is None else _reap(proc)
            if self._proc is proc:
                self._proc = None
            if retry and reused and not self._closed:
                return self._run_once(retry=False)
            raise ChildUnavailable(
                f"the index process ended unexpectedly (exit status {code}): {exc}"
            ) from None
        return kind, value

    def kill(self) -> None:
        """Stop the child now (the server is stopping): a run in progress rolls back
        and its caller gets :class:`StoreError`; no child is started again."""
        with self._state:
            self._closed = True
            proc = self._proc
        if proc is not None:
            with suppress(OSError):
                proc.kill()

    def close(self) -> None:
        """Stop the child (idempotent): its input closes and it exits (after the run
        it may be in; killed after 10 s: the run's open transaction rolls back). Does
        not wait for a run in progress to be handed back (its caller gets
        :class:`StoreError`)."""
        with self._state:
            self._closed = True
            proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait(timeout=10)
        finally:
            close_pipes(proc)


def start_child(module: str, first: object, *,
                pass_fds: tuple[int, ...] = ()) -> subprocess.Popen[bytes]:
    """Start ``python -m module`` as a server's child process and send it ``first``
    (its start-up message, one framed pickle: :func:`send`).

    The child's standard input and output are pipes to this process (the framed
    channel; the child moves its own ``print``s to standard error, see :func:`channel`);
    its standard error is this process's. Native libraries get one thread each
    (``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` unless set): the child shares the
    cores with the server's requests.

    Args:
        module: the child's module (it calls :func:`receive` first).
        first: the start-up message (a configuration and what else the child needs).
        pass_fds: file descriptors the child inherits (a listening socket).

    Raises:
        OSError: the process cannot be started.
    """
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    proc = subprocess.Popen([sys.executable, "-m", module], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=env, pass_fds=pass_fds)
    assert proc.stdin is not None
    with suppress(OSError):  # it died at once: its exit is reported where it is read
        send(proc.stdin, first)
    return proc


def channel() -> IO[bytes]:
    """In a child started by :func:`start_child`: the pipe to the server (a copy of
    standard output, which is pointed at standard error from now on, so that stray
    output never corrupts the channel)."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return out


def _reap(proc: subprocess.Popen[bytes]) -> int:
    """The exit status of a child that stopped answering (killed if it lives on)."""
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:  # alive but mute: no use any more
        proc.kill()
        code = proc.wait(timeout=30)
    close_pipes(proc)
    return code


def close_pipes(proc: subprocess.Popen[bytes]) -> None:
    """Close this process's ends of a child's standard input and output pipes."""
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with suppress(OSError):
                pipe.close()


def prepare_child(nice: int) -> None:
    """In a server's child process (index runs, ``serve --watch``): ``nice`` steps
    lower CPU priority (where the system has ``os.nice``) and one thread per local
    embedding model, so that the server keeps the cores for its requests."""
    if nice > 0 and hasattr(os, "nice"):  # not on Windows
        with suppress(OSError):  # a lower priority is a wish, not a need
            os.nice(nice)
    from cairn.embed.registry import set_default_threads

    set_default_threads(1)


def start_in_child() -> tuple[IO[bytes], IO[bytes], Config] | None:
    """In a server's child process that :func:`start_child` started with
    ``(config, nice)``: take the channel to the server (:func:`channel`), read that
    start-up message and lower the priority (:func:`prepare_child`).

    Returns:
        ``(out, inp, config)``: the channel, standard input and the configuration;
        ``None`` when the input ended before the message came (the server is gone).
    """
    out = channel()
    inp = sys.stdin.buffer
    try:
        config, nice = receive(inp)
    except EOFError:
        return None
    prepare_child(nice)
    return out, inp, config


def main() -> int:
    """The child: read the configuration, then answer ``"index"`` requests until the
    input ends. Each answer is ``("ok", run)`` or ``("error", exception)``."""
    started = start_in_child()
    if started is None:
        return 0
    out, inp, config = started
    from cairn.app import Cairn

    with Cairn(config) as cairn:
        while True:
            try:
                request = receive(inp)
            except EOFError:
                return 0
            answer(out, request, cairn)


def answer(out: IO[bytes], request: object, cairn: Any) -> None:
    """Run one request from the parent process and send its answer on ``out``: for
    ``"index"``, ``("ok", run)`` or ``("error", exception)`` (made picklable by
    :func:`portable`); anything else is answered ``("error", CairnError)``. A defect's
    traceback goes to stderr, the parent's log. A parent gone meanwhile is ignored (the
    next read sees the end of the input)."""
    if request != "index":
        reply: tuple[str, object] = ("error", CairnError(f"unknown request {request!r}"))
    else:
        try:
            reply = ("ok", cairn.index())
        except Exception as exc:  # handed to the parent, raised there
            if not isinstance(exc, CairnError):  # a defect: its traceback to the log
                traceback.print_exc(file=sys.stderr)
            reply = ("error", portable(exc))
    with suppress(OSError, ValueError):
        send(out, reply)


if __name__ == "__main__":  # the module's own names, not __main__'s, go into pickles
    from cairn.app.index_worker import main as _main

    sys.exit(_main())
