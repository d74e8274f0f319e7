"""The storage backends, chosen by the scheme of an index's location.

A location is a URL (``postgresql://user@host/db``, ``sqlite:///abs/index.db``) or a
plain file path (SQLite). Each :class:`Backend` names the URL schemes it answers and
opens a location as a :class:`cairn.store.Store`; :func:`open_location` picks one from
:data:`BACKENDS`, so adding a backend is one :func:`register` call and no caller holds
an ``if`` over backend names. A backend's package is imported only when a location of
its scheme is opened (psycopg is optional; SQLite's import is kept off the path of
commands that never open an index).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cairn.config.locations import BACKEND_SCHEMES, FILE_BACKEND, redact_password, url_scheme
from cairn.errors import ProviderUnavailable, StoreError
from cairn.store.base import Store

__all__ = ["BACKENDS", "Backend", "backend_for", "location_of", "open_location", "register"]


@dataclass(frozen=True)
class Backend:
    """One storage backend.

    Attributes:
        name: its name (``[store] backend``): ``"sqlite"``, ``"postgres"``.
        schemes: the URL schemes it opens, lower-case (``"postgresql"``).
        open: opens a location of one of those schemes (the whole URL as a string; the
            file-path backend also gets a :class:`~pathlib.Path`) as a store, creating
            and migrating the index as needed; raises
            :class:`cairn.errors.StoreError` when it cannot.
    """

    name: str
    schemes: tuple[str, ...]
    open: Callable[[str | Path], Store]


def _open_sqlite(location: str | Path) -> Store:
    """A SQLite index at a path (a :class:`~pathlib.Path` or a string without a
    scheme), or at a ``sqlite:`` URL's path (``sqlite:///abs/x.db``,
    ``sqlite:rel/x.db``, ``sqlite::memory:``)."""
    from cairn.store.sqlite import SQLiteStore

    if isinstance(location, str) and location[:7].lower() == "sqlite:":
        path = location[7:]
        if path.startswith("//"):  # sqlite://<host>/<path>: only an empty host is local
            host, _, rest = path[2:].partition("/")
            if host not in ("", "localhost"):
                raise StoreError(f"{location}: a SQLite index is a local file; write "
                                 "sqlite:///absolute/path or sqlite:relative/path")
            path = "/" + rest
        if not path:
            raise StoreError(f"{location}: no index file named after 'sqlite:'")
        location = path
    return SQLiteStore(location)


def _open_postgres(url: str | Path) -> Store:
    """A PostgreSQL index at a ``postgresql://`` URL.

    Raises:
        cairn.errors.ProviderUnavailable: psycopg is not installed.
    """
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise ProviderUnavailable(
            "the PostgreSQL backend needs psycopg: pip install 'cairn[postgres]'"
        ) from exc
    from cairn.store.postgres import PostgresStore

    return PostgresStore(str(url))


BACKENDS: dict[str, Backend] = {}
"""The registered backends by name, in registration order."""


def register(backend: Backend) -> None:
    """Add ``backend`` (or replace the one of the same name).

    Raises:
        ValueError: another backend already opens one of its schemes.
    """
    for other in BACKENDS.values():
        taken = set(other.schemes) & set(backend.schemes)
        if other.name != backend.name and taken:
            raise ValueError(f"backend {backend.name!r}: scheme {sorted(taken)[0]!r} is "
                             f"opened by {other.name!r} already")
    BACKENDS[backend.name] = backend


register(Backend("sqlite", BACKEND_SCHEMES["sqlite"], _open_sqlite))
register(Backend("postgres", BACKEND_SCHEMES["postgres"], _open_postgres))


def backend_for(location: str | Path) -> Backend:
    """The backend that opens ``location``: by its URL scheme, SQLite for a path (a
    :class:`~pathlib.Path` is always a path, even with a ``:`` in a file name).

    Raises:
        cairn.errors.StoreError: the location has a URL scheme no backend opens.
    """
    text = str(location)
    scheme = None if isinstance(location, Path) else url_scheme(text)
    if scheme is None:
        return BACKENDS[FILE_BACKEND]  # a path (a one-letter scheme is a Windows drive)
    for backend in BACKENDS.values():
        if scheme in backend.schemes:
            return backend
    if text[len(scheme) + 1:len(scheme) + 3] != "//":
        return BACKENDS[FILE_BACKEND]  # 'notes:2024.db' is a file name, not a URL
    known = ", ".join(f"{s}:" for b in BACKENDS.values() for s in b.schemes)
    raise StoreError(f"{redact_password(text)}: no storage backend opens {scheme}: URLs "
                     f"(known: {known} or a file path)")


def location_of(text: str) -> str | Path:
    """What a user typed as an index's location, as :func:`open_location` takes it: a URL
    (``scheme:`` of a registered backend, or any ``scheme://``) stays a string, so an
    unknown scheme is refused by name; anything else is a file path, ``~`` expanded."""
    scheme = url_scheme(text)
    if scheme is not None and (
        any(scheme in b.schemes for b in BACKENDS.values())
        or text[len(scheme) + 1:len(scheme) + 3] == "//"
    ):
        return text
    return Path(text).expanduser()


def open_location(location: str | Path) -> Store:
    """Open (creating and migrating as needed) the index at ``location`` with the
    backend :func:`backend_for` picks.

    Raises:
        cairn.errors.StoreError: no backend opens it, or the backend cannot open it.
        cairn.errors.ProviderUnavailable: the backend's driver is not installed.
    """
    return backend_for(location).open(location)
