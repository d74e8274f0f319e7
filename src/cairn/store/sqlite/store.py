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

Schema changes are migrations: ``MIGRATIONS[i]`` brings a database from version ``i`` to
``i + 1``; ``PRAGMA user_version`` holds the version.
"""

from __future__ import annotations

from cairn.model import FileState
from cairn.store.sqlite.carried import CarriedMixin
from cairn.store.sqlite.edges import EdgesMixin
from cairn.store.sqlite.enrich import EnrichMixin
from cairn.store.sqlite.facets import BrowseMixin, FacetsMixin
from cairn.store.sqlite.fts import SearchMixin
from cairn.store.sqlite.memory import AccessLogMixin
from cairn.store.sqlite.reads import ReadsMixin
from cairn.store.sqlite.reports import ReportsMixin
from cairn.store.sqlite.schema import MIGRATIONS, SCHEMA_VERSION, TableCopyMixin, guard_errors
from cairn.store.sqlite.vectors import VectorsMixin
from cairn.store.sqlite.writes import WritesMixin

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "FileState", "SQLiteStore"]


@guard_errors
class SQLiteStore(WritesMixin, ReadsMixin, SearchMixin, VectorsMixin, EdgesMixin,
                  FacetsMixin, BrowseMixin, ReportsMixin, AccessLogMixin, EnrichMixin,
                  CarriedMixin, TableCopyMixin):
    """The default :class:`cairn.store.Store`: one SQLite file.

    Args:
        path: the database file (created with its folder if missing), or ``":memory:"``.

    Raises:
        StoreError: the file cannot be opened, is not a cairn database, or is newer
            than this version of cairn.
    """

    concurrent_reads = False  # one process: the lists are searched one after the other
