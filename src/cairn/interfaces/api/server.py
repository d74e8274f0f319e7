"""The HTTP server's processes: :func:`serve` runs the API with uvicorn, in one process
or (``--workers N``) in N on one socket; :func:`main` is another process of those N
(``python -m cairn.interfaces.api.server``), started and stopped by
:class:`cairn.serving.workers.Workers` (see there for how they share the socket, the
index runs and ``/metrics``).
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from cairn.errors import CairnError
from cairn.serving.child import start_in_child
from cairn.serving.workers import METRICS_DIR, FirstProcess, Workers, bind, eof_watch

if TYPE_CHECKING:
    from cairn.app import Cairn
    from cairn.config import Config
    from cairn.interfaces.api.security import Policy

MODULE = "cairn.interfaces.api.server"

def serve(cairn: Cairn, policy: Policy, *, host: str, port: int, workers: int = 1) -> None:
    """Serve the API on ``host:port`` with uvicorn until interrupted (blocks).

    Args:
        workers: server processes answering on the one socket (``> 1``: this one and
            ``workers - 1`` more, :mod:`cairn.serving.workers`; this one keeps the
            index runs).

    Raises:
        OSError: the address cannot be bound.
    """
    import uvicorn

    from cairn.interfaces.api.app import create_app
    from cairn.interfaces.api.limits import server_options
    from cairn.interfaces.api.observe import setup_logging

    setup_logging()
    options: dict[str, Any] = server_options()
    if workers <= 1:
        stopping(uvicorn.Config(create_app(cairn, policy), host=host, port=port, **options),
                 cairn).run()
        return
    import shutil
    import tempfile

    shared = tempfile.mkdtemp(prefix="cairn-metrics-")
    os.environ[METRICS_DIR] = shared  # before the first metric is made
    sock = bind(host, port)
    others: Workers | None = None
    try:
        app = create_app(cairn, policy)
        others = Workers(cairn, MODULE, (cairn.config, policy, sock.fileno(), shared),
                         sock, workers - 1)
        stopping(uvicorn.Config(app, **options), cairn).run(sockets=[sock])
    finally:
        if others is not None:
            others.close()
        sock.close()
        os.environ.pop(METRICS_DIR, None)
        shutil.rmtree(shared, ignore_errors=True)


def stopping(config: Any, cairn: Cairn) -> Any:
    """A ``uvicorn.Server`` for ``config`` that, on SIGTERM or the first Ctrl-C, also
    stops ``cairn``'s index runs (:meth:`cairn.app.Cairn.stop_index_runs`: the child
    running one is killed and its request answered 503 "server shutting down"), so
    that the server stops within seconds instead of waiting for the run."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            first = not self.should_exit
            super().handle_exit(sig, frame)
            if first:  # a signal handler must not wait: the children stop on a thread
                threading.Thread(target=cairn.background.stop, daemon=True,
                                 name="cairn-stop-index").start()

    return Server(config)


def main() -> int:
    """Another server process: read ``(config, policy, socket fd, metrics folder)``,
    then serve the API on the inherited socket until the pipe closes."""
    started = start_in_child()
    if started is None:
        return 0
    out, inp, (config, policy, fd, metrics_dir) = started
    config_: Config = config
    os.environ[METRICS_DIR] = metrics_dir
    import socket

    sock = socket.socket(fileno=fd)
    from cairn.app.serving import serve_mode

    serve_mode()  # before numpy loads: one BLAS thread; background reloads
    import uvicorn

    from cairn.app import Cairn
    from cairn.interfaces.api.app import create_app
    from cairn.interfaces.api.limits import server_options
    from cairn.interfaces.api.observe import setup_logging

    setup_logging()
    stop = threading.Event()
    with Cairn(config_) as cairn:
        cairn.background.hand_index_to(FirstProcess(inp, out, stop))
        with suppress(CairnError):  # warm: the model and the matrix, before any request
            cairn.search("warm up", mode="hybrid", limit=1)
        server = uvicorn.Server(uvicorn.Config(create_app(cairn, policy), **server_options()))

        def watch_parent() -> None:  # the pipe closes: the first process stops us
            with suppress(OSError, ValueError):
                stop.wait()
            server.should_exit = True

        threading.Thread(target=watch_parent, daemon=True).start()
        threading.Thread(target=eof_watch, args=(inp, stop), daemon=True).start()
        server.run(sockets=[sock])
    return 0


if __name__ == "__main__":  # the module's own names, not __main__'s, go into pickles
    from cairn.interfaces.api.server import main as _main

    sys.exit(_main())
