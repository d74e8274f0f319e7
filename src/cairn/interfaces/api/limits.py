"""What uvicorn is told so that slow or idle clients cannot keep others out.

uvicorn (0.55) times out idle keep-alive connections but not a connection that never
finishes sending its request headers: enough of them use up the process's file
descriptors, and every new client then waits. :func:`server_options` drops a
connection whose first request's headers have not arrived within
:data:`HEADER_SECONDS`, closes idle keep-alive connections after
:data:`KEEP_ALIVE_SECONDS`, and answers 503 beyond :func:`concurrency_limit` open
connections (below the descriptor limit, so that the server can still accept, answer
and close).
"""

from __future__ import annotations

import asyncio
from typing import Any

HEADER_SECONDS = 10.0
"""A connection whose request headers are not complete this long after it opened is
closed."""
KEEP_ALIVE_SECONDS = 5
"""An idle keep-alive connection is closed after this many seconds."""
SHUTDOWN_SECONDS = 10
"""On SIGTERM or Ctrl-C, requests still running this long are cancelled."""


def concurrency_limit() -> int:
    """Open connections served at once (more are answered 503): the soft limit of
    open files less room for the index, the model and the log (at least 16, at most
    4096)."""
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, ValueError, OSError):  # not on this platform
        return 1024
    if soft == resource.RLIM_INFINITY:
        return 4096
    return max(16, min(4096, soft - 64))


def _protocol() -> type[Any]:
    """uvicorn's HTTP protocol (httptools when installed, else h11) with the header
    deadline."""
    base: type[Any]
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        base = HttpToolsProtocol
    except ImportError:  # httptools is not installed
        from uvicorn.protocols.http.h11_impl import H11Protocol

        base = H11Protocol

    class HeaderDeadline(base):  # type: ignore[misc]
        """Closes the connection when its first request's headers are late."""

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self._header_timer = self.loop.call_later(HEADER_SECONDS, self._late)

        def connection_lost(self, exc: Exception | None) -> None:
            self._header_timer.cancel()
            super().connection_lost(exc)

        def _late(self) -> None:
            if self.cycle is None:  # no complete request yet
                self.transport.close()

    return HeaderDeadline


def server_options() -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.Config`` (with the application and address):
    quiet logs, no ``Server``/``Date`` headers, and the limits in the module doc."""
    return {"log_level": "warning", "access_log": False, "server_header": False,
            "date_header": False, "http": _protocol(),
            "timeout_keep_alive": KEEP_ALIVE_SECONDS,
            "limit_concurrency": concurrency_limit(),
            "timeout_graceful_shutdown": SHUTDOWN_SECONDS}
