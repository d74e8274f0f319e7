"""The one exception hierarchy of cairn.

Exceptions are for callers that cannot go on (bad configuration, a broken store, a query
that cannot be run). Failures inside pipelines — one bad file among thousands — are
values (:class:`cairn.model.Failure`), recorded in the run, never raised.
"""

from __future__ import annotations


class CairnError(Exception):
    """Base class of every error cairn raises on purpose."""


class ConfigError(CairnError):
    """Configuration (``cairn.toml``, ``CAIRN_*`` variables, ``types.yaml``) is invalid."""


class ParseError(CairnError):
    """A file could not be parsed.

    Attributes:
        path: the file's path as given (relative or absolute), or ``""``.
        line: 1-based line of the fault, or ``None`` when unknown.
    """

    def __init__(self, message: str, *, path: str = "", line: int | None = None) -> None:
        where = path + (f":{line}" if line is not None else "")
        super().__init__(f"{where}: {message}" if where else message)
        self.reason = message
        self.path = path
        self.line = line


class StoreError(CairnError):
    """The index could not be opened, migrated, read or written."""


class StoreUnwritable(StoreError):
    """The index cannot be written at all right now (the disk is full, the file or its
    folder is read-only): a run stops at its last commit instead of failing file after
    file."""


class QueryError(CairnError):
    """A query or lookup cannot be answered (e.g. an unknown unit id)."""


class NotFound(QueryError):
    """A document, unit or path asked for is not in the index."""


class ProviderUnavailable(CairnError):
    """An optional provider (embedding model, LLM, extra) is not installed or not reachable."""


class ChildUnavailable(StoreError):
    """A server's child process (the one running its index runs, its watcher) died, is
    being restarted or was stopped; the message says which and why."""


class ServerStopping(ChildUnavailable):
    """The server is shutting down: the index run asked for was stopped or not started."""


class IndexInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped an index run while it stored files: ``kept`` of the run's
    ``total`` files are indexed as they are now (unchanged, or stored in a committed
    transaction); the rest wait for the next run."""

    def __init__(self, kept: int, total: int) -> None:
        super().__init__(f"{kept} of {total} files kept")
        self.kept, self.total = kept, total
