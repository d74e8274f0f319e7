"""The one protocol cairn's server child processes speak (the index worker, the watch
child, the other processes of ``serve --workers N``).

* **Start**: :class:`Child` runs ``python -m <module>`` with this interpreter and
  :func:`child_env` (one native thread per library: the child shares the cores with the
  server's requests), standard input and output as a private pipe pair, standard error
  relayed line by line to this process's (so the server's log shows it) with its last
  :data:`TAIL_LINES` lines kept for error messages.
* **Messages**: framed pickles (an 8-byte big-endian length, then the pickle:
  :func:`send`, :func:`receive`). The channel is private to the two processes (nothing
  a client sends is ever unpickled) and carries what the server needs back exactly: a
  :class:`cairn.model.Run` and the exception types a run raises. The first message is
  the child's start-up message (its configuration …); the child answers it with the
  handshake ``("ready", pid)`` (:func:`start_in_child`), read before the first request.
  A request is answered ``("ok", value)`` or ``("error", exception)``
  (:func:`reply`, :meth:`Child.call`).
* **Stop**: closing the child's input is the request to stop (the child sees the end
  of its input, finishes what it is doing and exits); :meth:`Child.stop` waits a
  bounded time, then kills it. A child whose parent died sees the same end of input.
  Every wait here has a bound, and a child that dies is reported with its exit status
  and the tail of its standard error.
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
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from types import MappingProxyType
from typing import IO, Any

from cairn.errors import CairnError, ChildUnavailable, StoreError

__all__ = [
    "STOP_SECONDS", "Child", "child_env", "portable", "prepare_child", "python_argv",
    "receive", "reply", "send", "start_in_child",
]

STOP_SECONDS = 10.0
"""Seconds a child asked to stop has before it is killed (and again for the kill)."""
TAIL_LINES = 12
"""Lines of a child's standard error kept to name in the error when it dies."""
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
    """Write one framed message (8-byte big-endian length, then the pickle).

    Raises:
        OSError / ValueError: the pipe is broken or closed.
    """
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


def unpack(answer: object) -> Any:
    """The value of an answer ``("ok", value)``; raises the exception of
    ``("error", exc)``.

    Raises:
        The exception the other side handed back; :class:`CairnError` for an answer
        of another shape.
    """
    if isinstance(answer, tuple) and len(answer) == 2:
        kind, value = answer
        if kind == "ok":
            return value
        if kind == "error" and isinstance(value, BaseException):
            raise value
    raise CairnError(f"a child process answered {type(answer).__name__}, not a result")


def reply(out: IO[bytes], work: Callable[[], object]) -> None:
    """Answer one request on ``out``: ``("ok", work())`` or ``("error", exception)``
    (made picklable by :func:`portable`). A defect's traceback goes to standard error
    (the server's log); a peer gone meanwhile is ignored (the next read sees the end
    of the input)."""
    try:
        answer: tuple[str, object] = ("ok", work())
    except Exception as exc:  # handed to the other side, raised there
        if not isinstance(exc, CairnError):
            with suppress(OSError):
                traceback.print_exc(file=sys.stderr)
        answer = ("error", portable(exc))
    with suppress(OSError, ValueError):
        send(out, answer)


def child_env() -> dict[str, str]:
    """This process's environment for a child, with one thread per native library
    (``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` unless set)."""
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    return env


def python_argv(module: str, *args: str) -> list[str]:
    """The command line of ``python -m module args…`` with this interpreter."""
    return [sys.executable, "-m", module, *args]


class Child:
    """A ``python -m module`` child process on the framed pipe (see the module doc).

    Args:
        module: the child's module; its ``main`` calls :func:`start_in_child`.
        first: the start-up message (a configuration and what else the child needs).
        name: what the child is called in errors ("the index process").
        pass_fds: file descriptors the child inherits (a listening socket).
        relay: relay its standard error and keep the tail (``False``: it writes to this
            process's standard error itself, for a chatty child whose death is not an
            error to explain: a server process logging every request).

    Raises:
        OSError: the process cannot be started.
    """

    def __init__(self, module: str, first: object, *, name: str,
                 pass_fds: tuple[int, ...] = (), relay: bool = True) -> None:
        self.name = name
        self.proc = subprocess.Popen(
            python_argv(module), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if relay else None, env=child_env(), pass_fds=pass_fds)
        self._tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._ready = False
        self._relay = threading.Thread(target=self._relay_stderr, daemon=True,
                                       name=f"cairn-child-{self.proc.pid}-stderr")
        if relay:
            self._relay.start()
        assert self.proc.stdin is not None
        with suppress(OSError):  # it died at once: its exit is reported where it is read
            send(self.proc.stdin, first)

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self.proc.pid

    def poll(self) -> int | None:
        """The exit status, or ``None`` while the child runs."""
        return self.proc.poll()

    def _relay_stderr(self) -> None:
        """Copy the child's standard error to this process's, keeping the tail."""
        err = self.proc.stderr
        if err is None:
            return
        with suppress(OSError, ValueError):
            for raw in err:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self._tail.append(line)
                with suppress(OSError, ValueError):
                    sys.stderr.write(line + "\n")
                    sys.stderr.flush()

    def tail(self) -> str:
        """The last lines the child wrote on standard error, joined by `` | ``
        (``""``: none)."""
        if self._relay.ident is not None:  # a dead child's last lines are being copied
            self._relay.join(timeout=1.0)
        return " | ".join(line.strip() for line in self._tail if line.strip())

    def gone(self, doing: str, cause: object) -> ChildUnavailable:
        """The error for a child that stopped answering while ``doing``: its exit
        status (waited for a bounded time, killed when it lives on mute) and the tail
        of its standard error."""
        code = self.reap()
        said = self.tail()
        return ChildUnavailable(
            f"{self.name} ended unexpectedly {doing} (exit status {code}): {cause}"
            + (f"; it said: {said}" if said else ""))

    def _handshake(self) -> None:
        if self._ready:
            return
        assert self.proc.stdout is not None
        hello = receive(self.proc.stdout)
        if not (isinstance(hello, tuple) and hello[:1] == ("ready",)):
            raise EOFError(f"no handshake but {type(hello).__name__}")
        self._ready = True

    def call(self, request: object, *, doing: str = "during the request") -> Any:
        """Send ``request`` and wait for its answer (after the handshake).

        Returns:
            The answer's value (:func:`unpack`).

        Raises:
            What the child handed back; :class:`ChildUnavailable` when it died or
            closed its end (naming its exit status and last words).
        """
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self._handshake()
            send(self.proc.stdin, request)
            answer = receive(self.proc.stdout)
        except (OSError, EOFError, ValueError) as exc:  # ValueError: stop() closed a pipe
            raise self.gone(doing, exc) from None
        return unpack(answer)

    def requests(self) -> Any:
        """The child's next request (after the handshake): for a child that asks this
        process for work (``serve --workers``).

        Raises:
            EOFError: the child closed its end or died.
        """
        assert self.proc.stdout is not None
        try:
            self._handshake()
            return receive(self.proc.stdout)
        except (OSError, ValueError) as exc:
            raise EOFError(str(exc)) from None

    def reap(self, timeout: float = 30.0) -> int:
        """The exit status of a child that stopped answering (killed if it lives on
        ``timeout`` seconds), its pipes closed."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:  # alive but mute: no use any more
            self.proc.kill()
            code = self.proc.wait(timeout=timeout)
        self.close_pipes()
        return code

    def close_input(self) -> None:
        """Close the child's input: the request to stop (after what it is doing)."""
        if self.proc.stdin is not None:
            with suppress(OSError):
                self.proc.stdin.close()

    def kill(self) -> None:
        """Kill the child now."""
        with suppress(OSError):
            self.proc.kill()

    def stop(self, timeout: float = STOP_SECONDS) -> int:
        """Stop the child (idempotent): its input closes, it gets ``timeout`` seconds
        to exit, then it is killed.

        Returns:
            Its exit status.
        """
        self.close_input()
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(timeout=STOP_SECONDS)
        self.close_pipes()
        return code

    def close_pipes(self) -> None:
        """Close this process's ends of the child's pipes."""
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with suppress(OSError):
                    pipe.close()
        if self._relay.ident is not None:
            self._relay.join(timeout=1.0)


def channel() -> IO[bytes]:
    """In a child: the pipe to the parent (a copy of standard output, which is pointed
    at standard error from now on, so that stray output never corrupts the channel)."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return out


def prepare_child(nice: int) -> None:
    """In a server's child process: ``nice`` steps lower CPU priority (where the system
    has ``os.nice``) and one thread per local embedding model, so that the server keeps
    the cores for its requests."""
    if nice > 0 and hasattr(os, "nice"):  # not on Windows
        with suppress(OSError):  # a lower priority is a wish, not a need
            os.nice(nice)
    from cairn.app.serving import child_mode

    child_mode()


def start_in_child() -> tuple[IO[bytes], IO[bytes], Any] | None:
    """In a child a :class:`Child` started: take the channel (:func:`channel`), read
    the start-up message and answer the handshake ``("ready", pid)``.

    Returns:
        ``(out, inp, first)``: the channel, standard input and the start-up message;
        ``None`` when the input ended before the message came (the parent is gone).
    """
    out = channel()
    inp = sys.stdin.buffer
    try:
        first = receive(inp)
    except EOFError:
        return None
    with suppress(OSError, ValueError):  # a parent gone is seen at the next read
        send(out, ("ready", os.getpid()))
    return out, inp, first
