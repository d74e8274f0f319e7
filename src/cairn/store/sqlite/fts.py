"""Keyword search of the SQLite store: FTS5 MATCH, BM25 and filters as SQL."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from cairn.errors import StoreError
from cairn.model import Filter
from cairn.store.sqlite.schema import SQLiteBase


class SearchMixin(SQLiteBase):
    """BM25 over FTS5 with filters; hit rows."""

    # --- search -----------------------------------------------------------------------
    def _filter_sql(self, filters: Sequence[Filter]) -> tuple[list[str], list[Any]]:
        where: list[str] = []
        args: list[Any] = []
        for f in filters:
            sql, a = self._one_filter(f)
            # a negated filter keeps units that have no value at all (NULL is not a match)
            where.append(f"NOT coalesce(({sql}), 0)" if f.negate else sql)
            args.extend(a)
        return where, args

    def _one_filter(self, f: Filter) -> tuple[str, list[Any]]:
        v = f.value
        if f.field == "tag":
            low = v.casefold().lstrip("#")
            return (
                "EXISTS (SELECT 1 FROM unit_tags t WHERE t.unit_rowid = u.rowid "
                "AND (t.tag = ? OR t.tag LIKE ? ESCAPE '\\'))",
                [low, _like_escape(low) + "/%"],
            )
        if f.field == "todo":
            # lower-case open/done/any name a state; anything else is a keyword, matched
            # exactly as Org does (keywords are case-sensitive: todo:DONE is the keyword)
            if v in ("open", "done"):
                return ("u.todo_state = ?", [v])
            if v in ("any", "*"):
                return ("u.todo IS NOT NULL", [])
            return ("u.todo = ?", [v])
        if f.field == "priority":
            return ("u.priority = ? COLLATE NOCASE", [v.lstrip("#")])
        if f.field == "type":
            return (
                "(d.type = ? COLLATE NOCASE OR json_extract(u.properties, '$.type') = ?)",
                [v, v],
            )
        if f.field == "format":
            return ("d.format = ? COLLATE NOCASE", [v])
        if f.field == "source":
            return (
                "(d.format = ? COLLATE NOCASE OR d.root_id IN (SELECT id FROM roots "
                "WHERE path = ? OR path LIKE ? ESCAPE '\\'))",
                [v, v, "%/" + _like_escape(v.rstrip("/"))],
            )
        if f.field == "path":
            if any(c in v for c in "*?["):
                return ("d.path GLOB ?", [v])
            return ("d.path LIKE ? ESCAPE '\\'", ["%" + _like_escape(v) + "%"])
        if f.field == "prop":
            # the unit's own properties, those it inherits (Org), and its document's
            # metadata (frontmatter); a list value matches when one element does
            key = f.key or ""
            return (
                "(EXISTS (SELECT 1 FROM json_each(u.properties) p WHERE p.key = ? COLLATE NOCASE"
                " AND (? = '' OR p.value = ? COLLATE NOCASE))"
                " OR EXISTS (SELECT 1 FROM json_each(u.extra, '$.inherited_properties') p"
                " WHERE p.key = ? COLLATE NOCASE AND (? = '' OR p.value = ? COLLATE NOCASE))"
                " OR EXISTS (SELECT 1 FROM json_each(d.metadata) m WHERE m.key = ? COLLATE NOCASE"
                " AND (? = '' OR CAST(m.value AS TEXT) = ? COLLATE NOCASE"
                " OR (m.type = 'array' AND EXISTS (SELECT 1 FROM json_each(m.value) e"
                " WHERE CAST(e.value AS TEXT) = ? COLLATE NOCASE)))))",
                [key, v, v, key, v, v, key, v, v, v],
            )
        if f.field == "role":
            return ("u.role = ? COLLATE NOCASE", [v])
        if f.field == "kind":  # a unit kind, or a chat message's kind (question, answer …)
            return (
                "(u.kind = ? COLLATE NOCASE OR json_extract(u.extra, '$.kind') = ?)",
                [v, v.casefold()],
            )
        if f.field in ("before", "after"):
            op = "<" if f.field == "before" else ">="
            stamp = (
                "COALESCE(u.time, d.modified, d.created, "
                "strftime('%Y-%m-%dT%H:%M:%SZ', d.mtime, 'unixepoch'))"
            )
            return (f"substr({stamp}, 1, {len(v)}) {op} ?", [v])
        if f.field == "id":
            return ("(u.id = ? OR d.id = ?)", [v, v])
        raise StoreError(f"unknown filter field {f.field!r}")

    def search_fts(
        self,
        match: str | None,
        filters: Sequence[Filter],
        *,
        limit: int,
        weights: Mapping[str, float],
        include_alternates: bool = False,
    ) -> list[tuple[int, float]]:
        """Run a BM25 query; returns ``(unit rowid, score)`` best first.

        Args:
            match: an FTS5 MATCH expression built by ``cairn.search.query`` (every
                user token quoted), or ``None`` for a filter-only query.
            filters: restrictions on units and documents.
            limit: maximum hits (live units only; filters applied before the limit).
            weights: BM25 column weights ``title``, ``outline_path``, ``tags``, ``body``.
            include_alternates: also return units off a conversation's canonical branch.

        The score is ``-bm25(...)`` (higher is better); filter-only queries score 0.
        """
        where, args = self._filter_sql(filters)
        if not include_alternates:
            where.append("u.alternate = 0")
        w = [weights.get(k, 1.0) for k in ("title", "outline_path", "tags", "body")]
        w.append(weights.get("body", 1.0))
        if match is None:
            sql = (
                "SELECT u.rowid, 0.0 FROM units u JOIN documents d ON d.id = u.document_id"
                + (" WHERE " + " AND ".join(where) if where else "")
                + " ORDER BY d.path, u.ordinal LIMIT ?"
            )
            params: list[Any] = [*args, limit]
        elif not filters:
            return self._top_by_rank(match, w, limit, include_alternates)
        else:
            extra = (" AND " + " AND ".join(where)) if where else ""
            sql = (
                "SELECT f.rowid, -bm25(units_fts, ?, ?, ?, ?, ?) AS score FROM units_fts f "
                "JOIN units u ON u.rowid = f.rowid JOIN documents d ON d.id = u.document_id "
                f"WHERE units_fts MATCH ?{extra} ORDER BY score DESC, u.rowid LIMIT ?"
            )
            params = [*w, match, *args, limit]
        try:
            return [(int(r[0]), float(r[1])) for r in self.db.execute(sql, params)]
        except sqlite3.OperationalError as exc:
            raise StoreError(f"search failed: {exc}") from exc

    def _top_by_rank(
        self, match: str, weights: list[float], limit: int, include_alternates: bool
    ) -> list[tuple[int, float]]:
        """A query without filters: FTS5's own top-N by ``rank`` (its sorter keeps only
        the best N, no join per matching row), then drop off-branch chat messages,
        asking for more when too many were dropped."""
        rank = "bm25(" + ", ".join(repr(float(x)) for x in weights) + ")"
        want = limit
        while True:
            try:
                rows = [
                    (int(r[0]), -float(r[1]))
                    for r in self.db.execute(
                        "SELECT rowid, rank FROM units_fts WHERE units_fts MATCH ? "
                        "AND rank MATCH ? ORDER BY rank, rowid LIMIT ?",
                        (match, rank, want),
                    )
                ]
            except sqlite3.OperationalError as exc:
                raise StoreError(f"search failed: {exc}") from exc
            if include_alternates or not rows:
                return rows[:limit]
            q = ",".join("?" * len(rows))
            alt = {
                int(r[0])
                for r in self.db.execute(
                    f"SELECT rowid FROM units WHERE alternate = 1 AND rowid IN ({q})",
                    [r for r, _ in rows],
                )
            }
            kept = [r for r in rows if r[0] not in alt]
            if len(kept) >= limit or len(rows) < want:
                return kept[:limit]
            want *= 4

    def filter_units(
        self, unit_ids: Sequence[str], filters: Sequence[Filter], *, include_alternates: bool
    ) -> list[str]:
        """The given unit ids that pass ``filters`` (and are on a canonical branch unless
        ``include_alternates``), in the given order."""
        if not unit_ids:
            return []
        where, args = self._filter_sql(filters)
        if not include_alternates:
            where.append("u.alternate = 0")
        q = ",".join("?" * len(unit_ids))
        sql = (
            "SELECT u.id FROM units u JOIN documents d ON d.id = u.document_id "
            f"WHERE u.id IN ({q})" + "".join(f" AND {w}" for w in where)
        )
        ok = {r[0] for r in self.db.execute(sql, [*unit_ids, *args])}
        return [u for u in unit_ids if u in ok]

    def unit_rows(self, rowids: Sequence[int]) -> dict[int, sqlite3.Row]:
        """Unit rows joined with their document and root, keyed by rowid."""
        if not rowids:
            return {}
        q = ",".join("?" * len(rowids))
        rows = self.db.execute(
            "SELECT u.rowid AS urowid, u.*, d.title AS doc_title, d.path AS path, "
            "d.format AS format, d.root_id AS root_id, r.path AS root_path, d.tags AS doc_tags "
            "FROM units u JOIN documents d ON d.id = u.document_id "
            f"JOIN roots r ON r.id = d.root_id WHERE u.rowid IN ({q})",
            list(rowids),
        ).fetchall()
        return {int(r["urowid"]): r for r in rows}

    def siblings(self, document_id: str, parent_id: str | None, exclude: str) -> list[str]:
        """Titles of a unit's sibling headings (same parent), in order."""
        rows = self.db.execute(
            "SELECT title FROM units WHERE document_id=? AND parent_id IS ? AND id != ? "
            "AND kind='heading' ORDER BY ordinal LIMIT 12",
            (document_id, parent_id, exclude),
        ).fetchall()
        return [r[0] for r in rows]

    def neighbours(self, document_id: str, ordinal: int, kind: str) -> list[sqlite3.Row]:
        """The units of the same kind just before and after ``ordinal`` (canonical
        branch only), in order: at most one each side."""
        before = self.db.execute(
            "SELECT ordinal, title, body, role FROM units WHERE document_id=? AND kind=? "
            "AND alternate=0 AND ordinal<? ORDER BY ordinal DESC LIMIT 1",
            (document_id, kind, ordinal),
        ).fetchall()
        after = self.db.execute(
            "SELECT ordinal, title, body, role FROM units WHERE document_id=? AND kind=? "
            "AND alternate=0 AND ordinal>? ORDER BY ordinal LIMIT 1",
            (document_id, kind, ordinal),
        ).fetchall()
        return [*before, *after]


def _like_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
