"""``cairn serve --watch`` follows the folders in a child process of its own
(``python -m cairn.interfaces.watch_child``), as ``POST /v1/index`` runs in one
(:mod:`cairn.app.index_worker`): an index batch on a thread of the server would hold
the server's interpreter lock while requests wait for it, whatever its CPU priority.

The child opens its own :class:`cairn.app.Cairn` from the server's configuration (the
same index, the same settings), lowers its CPU priority (``os.nice``), and runs
:func:`cairn.interfaces.watch.watch` until its standard input ends: the server closes
it to stop the child (after the batch in progress), and a server that dies closes it
too. The configuration travels as one framed pickle on that private pipe
(:func:`cairn.app.index_worker.send`); nothing a client sends is ever unpickled.
Readers in the server see each batch's commit through SQLite (WAL) and the store's
change token. The child reports on standard error, which it shares with the server:
``cairn: watching …`` once the index is current, one line per batch that failed, and
``cairn: watching stopped: …`` when it ends on an error.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from contextlib import suppress
from typing import TYPE_CHECKING

from cairn.app.index_worker import prepare_child, receive, send

if TYPE_CHECKING:
    from cairn.config import Config

READY = "cairn: watching the registered folders for changes"
"""The line the child prints on standard error once the index is current."""


class WatchChild:
    """The child process that follows a server's folders (see the module doc).

    Args:
        config: the server's configuration.
        nice: how many steps lower the child's CPU priority is (0–19).
    """

    def __init__(self, config: Config, *, nice: int) -> None:
        env = dict(os.environ)
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        env.setdefault("MKL_NUM_THREADS", "1")
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "cairn.interfaces.watch_child"],
            stdin=subprocess.PIPE, env=env,
        )
        assert self._proc.stdin is not None
        send(self._proc.stdin, (config, nice))

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._proc.pid

    def close(self, timeout: float = 30.0) -> None:
        """Stop the child (idempotent): its input closes and it exits after the batch
        it may be in; killed after ``timeout`` seconds (the batch's open transaction
        rolls back)."""
        proc = self._proc
        if proc.stdin is not None:
            with suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def main() -> int:
    """The child: read ``(config, nice)``, then watch until the input ends.

    Returns:
        0 when stopped by the server, 2 when the watch ended on an error (reported on
        standard error).
    """
    inp = sys.stdin.buffer
    try:
        config, nice = receive(inp)
    except EOFError:
        return 0
    prepare_child(nice)
    stop = threading.Event()

    def wait_for_eof() -> None:
        with suppress(OSError, ValueError):
            while inp.read(65536):
                pass
        stop.set()

    threading.Thread(target=wait_for_eof, name="cairn-watch-stop", daemon=True).start()
    from cairn.app import Cairn
    from cairn.errors import CairnError
    from cairn.interfaces import watch as watcher

    def say(line: str) -> None:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def on_batch(batch: watcher.WatchBatch) -> None:
        if batch.error:
            say(f"cairn: watch batch not indexed: {batch.error}")
        elif batch.run is not None:
            for f in batch.run.failures:
                where = f"{f.path}:{f.line}" if f.line else f.path
                say(f"cairn: watch: failed {where}: {f.reason}")

    try:
        with Cairn(config) as cairn:
            watcher.watch(cairn, stop=stop, on_batch=on_batch,
                          on_ready=lambda _run: say(READY))
    except CairnError as exc:
        say(f"cairn: watching stopped: {exc}")
        return 2
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group
        return 0
    return 0


if __name__ == "__main__":  # the module's own names, not __main__'s, go into pickles
    from cairn.interfaces.watch_child import main as _main

    sys.exit(_main())
