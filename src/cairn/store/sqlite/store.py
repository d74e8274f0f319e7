"""The embedded store: one SQLite file (WAL) with FTS5.

Tables: ``roots`` (source roots), ``files`` (every file seen, for change detection, with
its status), ``documents``, ``units``, ``unit_tags`` (own and inherited tags, lower-cased,
for ``tag:`` filters), ``links``, ``attachments`` (non-note files, for link resolution),
``runs``, and the FTS5 table ``units_fts`` whose rowid is ``units.rowid``: an
external-content table over the view ``units_fts_source`` (a unit's title and body from
``units``, and from ``units_fts_text`` only the indexed text that differs), so no text
is stored twice.

FTS5 uses ``porter unicode61 remove_diacritics 2`` over the columns title, outline_path,
tags, body, plus a ``cjk`` column of overlapping CJK character bigrams so that Chinese
and Japanese words (which have no spaces) are found. The store knows nothing of Org or
Markdown: it stores model values and answers queries built by ``cairn.search``.

The tables and their SQL are shared with the PostgreSQL store (:mod:`cairn.store.sql`);
this package holds what is SQLite's: the connection (``base``, ``connect``) and FTS5
(``fts``, ``match``). Schema changes are migrations
(:data:`cairn.store.sql.migrations.MIGRATIONS`); ``PRAGMA user_version`` holds the
version.
"""

from __future__ import annotations

from cairn.model import FileState
from cairn.store.sql.carried import CarriedMixin
from cairn.store.sql.edges import EdgesMixin
from cairn.store.sql.enrich import EnrichMixin
from cairn.store.sql.facets import BrowseMixin, FacetsMixin
from cairn.store.sql.memory import AccessLogMixin
from cairn.store.sql.migrations import MIGRATIONS, SCHEMA_VERSION
from cairn.store.sql.reads import ReadsMixin
from cairn.store.sql.reports import ReportsMixin
from cairn.store.sql.vectors import VectorsMixin
from cairn.store.sql.writes import WritesMixin
from cairn.store.sqlite.base import SQLiteTableCopy, guard_errors
from cairn.store.sqlite.fts import SearchMixin

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "FileState", "SQLiteStore"]


@guard_errors
class SQLiteStore(WritesMixin, ReadsMixin, SearchMixin, VectorsMixin, EdgesMixin,
                  FacetsMixin, BrowseMixin, ReportsMixin, AccessLogMixin, EnrichMixin,
                  CarriedMixin, SQLiteTableCopy):
    """The default :class:`cairn.store.Store`: one SQLite file.

    Args:
        path: the database file (created with its folder if missing), or ``":memory:"``.

    Raises:
        StoreError: the file cannot be opened, is not a cairn database, or is newer
            than this version of cairn.
    """

    concurrent_reads = False  # one process: the lists are searched one after the other
