"""Facet counts of the shared tables: how many of a set of units have each format, tag,
TODO keyword, note type and root (the search page's facets); documents listed by
format (its conversations page)."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from cairn.errors import QueryError, StoreError
from cairn.store.sql.base import SQLBase
from cairn.store.sql.reads import _DOC_SELECT, _document

if TYPE_CHECKING:
    from cairn.model import StoredDocument

_BATCH = 500
_SQL = {
    "format": "SELECT d.format, count(*) FROM units u JOIN documents d ON d.id = u.document_id "
    "WHERE u.id IN ({q}) GROUP BY d.format",
    "tag": "SELECT t.tag, count(DISTINCT u.rowid) FROM units u JOIN unit_tags t "
    "ON t.unit_rowid = u.rowid WHERE u.id IN ({q}) GROUP BY t.tag",
    "todo": "SELECT u.todo, count(*) FROM units u WHERE u.id IN ({q}) AND u.todo IS NOT NULL "
    "GROUP BY u.todo",
    "type": "SELECT d.type, count(*) FROM units u JOIN documents d ON d.id = u.document_id "
    "WHERE u.id IN ({q}) AND d.type IS NOT NULL AND d.type != '' GROUP BY d.type",
    "root": "SELECT r.path, count(*) FROM units u JOIN documents d ON d.id = u.document_id "
    "JOIN roots r ON r.id = d.root_id WHERE u.id IN ({q}) GROUP BY r.path",
}
_FIELDS = tuple(_SQL)
"""Every facet field, in the order of :data:`cairn.model.FACET_FIELDS` (not imported:
a keyword search loads no facet types)."""


class FacetsMixin(SQLBase):
    """Counts of facet values over given units."""

    def facet_counts(
        self, unit_ids: Sequence[str], fields: Sequence[str] = _FIELDS
    ) -> dict[str, dict[str, int]]:
        """How many of ``unit_ids`` (unknown ids ignored, each id counted once) have each
        value of each field.

        Args:
            unit_ids: the units to count (a query's candidates).
            fields: some of ``format``, ``tag``, ``todo``, ``type``, ``root``.

        Returns:
            field → value → count (fields without values map to ``{}``); a tag as
            stored (lower-cased, own and inherited), a root as its path.

        Raises:
            QueryError: an unknown field. StoreError: the backend failed.
        """
        bad = [f for f in fields if f not in _SQL]
        if bad:
            raise QueryError(f"unknown facet field {bad[0]!r}; facets: {', '.join(_SQL)}")
        ids = list(dict.fromkeys(unit_ids))
        out: dict[str, Counter[str]] = {f: Counter() for f in fields}
        try:
            for i in range(0, len(ids), _BATCH):
                part = ids[i : i + _BATCH]
                q = ",".join("?" * len(part))
                for f in fields:
                    for value, n in self.db.execute(_SQL[f].format(q=q), part):
                        if value is not None:
                            out[f][str(value)] += int(n)
        except sqlite3.Error as exc:
            raise StoreError(f"facet counts failed: {exc}") from exc
        return {f: dict(c) for f, c in out.items()}


class BrowseMixin(SQLBase):
    """Documents listed by format (the web UI's conversations page)."""

    def documents_by_format(
        self, formats: Sequence[str], *, limit: int = 200, offset: int = 0
    ) -> list[StoredDocument]:
        """Documents of the given formats (e.g. chat providers ``claude``, ``chatgpt``),
        newest first (``created``, then ``modified``, then path and id).

        Raises:
            QueryError: ``limit`` below 1 or ``offset`` below 0. StoreError: backend.
        """
        if limit < 1 or offset < 0:
            raise QueryError(f"limit must be at least 1 and offset 0 or more, not "
                             f"{limit} and {offset}")
        if not formats:
            return []
        q = ",".join("?" * len(formats))
        rows = self.db.execute(
            f"{_DOC_SELECT} WHERE d.format IN ({q}) ORDER BY coalesce(d.created, d.modified) "
            "DESC, d.path, d.id LIMIT ? OFFSET ?", [*formats, limit, offset]).fetchall()
        return [_document(r) for r in rows]
