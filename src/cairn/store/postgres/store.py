"""The PostgreSQL backend of the store protocol (``[store] backend = "postgres"``)."""

from __future__ import annotations

from cairn.store.postgres.base import PostgresTableCopy
from cairn.store.postgres.search import PostgresSearchMixin
from cairn.store.postgres.vectors import PostgresVectorsMixin
from cairn.store.postgres.writes import PostgresWritesMixin
from cairn.store.sql.carried import CarriedMixin
from cairn.store.sql.edges import EdgesMixin
from cairn.store.sql.enrich import EnrichMixin
from cairn.store.sql.facets import BrowseMixin, FacetsMixin
from cairn.store.sql.memory import AccessLogMixin
from cairn.store.sql.reads import ReadsMixin
from cairn.store.sql.reports import ReportsMixin


class PostgresStore(
    PostgresSearchMixin, PostgresWritesMixin, ReadsMixin, PostgresVectorsMixin, EdgesMixin,
    FacetsMixin, BrowseMixin, ReportsMixin, AccessLogMixin, EnrichMixin, CarriedMixin,
    PostgresTableCopy,
):
    """A :class:`cairn.store.Store` in a PostgreSQL database: the same role modules as
    the SQLite store, their SQL rendered by :mod:`cairn.store.postgres.dialect`, with
    its own full-text search (:mod:`cairn.store.postgres.search`).

    Args:
        url: ``postgresql://user:password@host:port/dbname`` (libpq syntax).
        wait: seconds a writer waits for another one before it is refused.
        pool_size: most connections open at once (threads beyond it wait for one).

    Raises:
        StoreError: the server cannot be reached, or the database is not a cairn index
            or is newer than this cairn.
    """

    concurrent_reads = True  # the server runs the keyword and semantic lists side by side
