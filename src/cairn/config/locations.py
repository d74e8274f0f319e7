"""Where an index lives: a file path, or a URL whose scheme names the backend that opens it.

This is the one list of the storage backends' names and URL schemes. The configuration
reads ``--db``, ``CAIRN_DB_URL`` and ``[store] backend`` / ``url`` with it, and the
store's registry (:mod:`cairn.store.registry`) gives each name here its opener; the
list lives below both because the configuration may not import the store. A new
backend is a row in :data:`BACKEND_SCHEMES` and a ``register`` call in the registry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

BACKEND_SCHEMES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "sqlite": ("sqlite",),
    "postgres": ("postgresql", "postgres"),
})
"""Each backend's name (``[store] backend``) and the URL schemes it opens, lower-case,
the first one the scheme its URLs are written with."""

FILE_BACKEND = "sqlite"
"""The backend of a plain file path, and the default."""

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


def url_scheme(location: str) -> str | None:
    """The URL scheme of ``location``, lower-case; ``None`` for a plain path (no
    ``name:`` in front, or a one-letter one: a Windows drive)."""
    m = _SCHEME.match(location)
    if m is None or len(m.group(1)) == 1:
        return None
    return m.group(1).lower()


def backend_of_scheme(scheme: str) -> str | None:
    """The name of the backend that opens URLs of ``scheme`` (lower-case), or ``None``."""
    for name, schemes in BACKEND_SCHEMES.items():
        if scheme in schemes:
            return name
    return None


def server_backend(location: str) -> str | None:
    """The backend a database server's URL names (``"postgres"`` for
    ``postgresql://…``, and for ``postgresql:/…``, a URL that lost a slash);
    ``None`` for a file: a path, or a URL of :data:`FILE_BACKEND`."""
    scheme = url_scheme(location)
    name = None if scheme is None else backend_of_scheme(scheme)
    return None if name == FILE_BACKEND else name


def server_url_example(backend: str) -> str:
    """How a URL of ``backend`` is written, for messages
    (``postgresql://user@host/dbname``)."""
    return f"{BACKEND_SCHEMES[backend][0]}://user@host/dbname"


def redact_password(url: str) -> str:
    """``url`` without its password (``//user:***@host``), for messages and for the name
    an index is shown by."""
    return re.sub(r"(//[^:/@]+):[^@]*@", r"\1:***@", url)
