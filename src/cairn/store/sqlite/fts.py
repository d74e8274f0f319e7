"""Keyword search of the SQLite store: a parsed query as FTS5 MATCH, BM25 and filters
as SQL, and the typed hit data search builds results from.

User text never reaches FTS5 unescaped: every token of a :class:`cairn.model.Term` is
a quoted string, so ``C++``, ``NEAR``, ``*`` or ``"unbalanced`` are plain words. A term
of several tokens (``BENCH-100821``, ``path/to/file.toml``, a quoted phrase) becomes an
FTS5 phrase; CJK bigrams are a phrase against the ``cjk`` column.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cairn import model
from cairn.errors import QueryError, StoreError
from cairn.model import (
    PLANNING_ROLES,
    Filter,
    HitUnit,
    Term,
    TextQuery,
    Timestamp,
    UnitFacts,
)
from cairn.store.sqlite.filters import extra_filter
from cairn.store.sqlite.match import fts_match, neg_match, required_match, term_expr
from cairn.store.sqlite.schema import SQLiteBase

if TYPE_CHECKING:
    from cairn.model import ContextUnit

_WS = "char(32, 9, 10, 13)"
META_WEIGHT = 2.0
"""The BM25 weight of the ``meta`` column when ``[search] weights`` does not set
``meta``."""
ROUNDS_ORDER = (
    "row_number() OVER (PARTITION BY u.document_id ORDER BY u.kind = 'preamble', u.ordinal), "
    "d.path, u.document_id, u.ordinal"
)
"""The order of a filter-only query: in rounds, each document's first matching unit (in
path order), then each one's second, and so on, so a filter that matches many units of
one file still lists the other files on its first page. A document's preamble comes
after its other matching units: one holding only the title is not listed when another
unit of its document is (``cairn.search.rank.drop_shadowed``), and this keeps the first
``k`` results a prefix of the first ``k + n``."""


_BATCH = 500
FILTER_FIRST = 4
"""A query with words and filters first ranks this many times the results wanted by
BM25 alone and filters those (:meth:`SearchMixin._top_then_filter`): 'format:org babel
src block' took 7.4 ms joining its 3,800 matches, 3.3 ms this way."""
FILTER_FIRST_MIN = 128
"""... and at least this many rows."""


def _tags(own: str | None, inherited: str | None) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*json.loads(own or "[]"), *json.loads(inherited or "[]")]))


_FILTER_VALUES = {
    "format": "SELECT DISTINCT format FROM documents",
    "kind": "SELECT DISTINCT kind FROM units UNION "
    "SELECT DISTINCT json_extract(extra, '$.kind') FROM units WHERE kind = 'message'",
    "todo": "SELECT DISTINCT todo FROM units WHERE todo IS NOT NULL",
    "role": "SELECT DISTINCT role FROM units WHERE role IS NOT NULL",
}


class SearchMixin(SQLiteBase):
    """BM25 over FTS5 with filters; typed hit data."""

    # --- the index's rows -------------------------------------------------------------
    def _write_fts(
        self, rows: Sequence[Sequence[Any]], units: Sequence[tuple[str, str]] | None = None
    ) -> None:
        """Index units: each row is ``(rowid, title, outline_path, tags, body, cjk,
        meta)`` as FTS5 should see it; ``units`` gives each row's unit title and body as
        stored in ``units`` (``None``: read them).

        ``units_fts`` is an external-content table over the view ``units_fts_source``
        (schema migration 4): the text it indexed is kept once, in ``units`` where it is
        the same (most titles and bodies) and in ``units_fts_text`` where it differs
        (``NULL``: as in ``units``), so a row can be deleted again (FTS5 reads the old
        text back through the view) and ``integrity-check`` compares like with like.
        """
        if not rows:
            return
        if units is None:
            have: dict[int, tuple[str, str]] = {}
            ids = [int(r[0]) for r in rows]
            for i in range(0, len(ids), _BATCH):
                part = ids[i : i + _BATCH]
                q = ",".join("?" * len(part))
                have.update((int(r[0]), (r[1], r[2])) for r in self.db.execute(
                    f"SELECT rowid, title, body FROM units WHERE rowid IN ({q})", part))
            units = [have.get(int(r[0]), ("", "")) for r in rows]
        self.db.executemany(
            "INSERT INTO units_fts_text(rowid, title, outline_path, tags, body, cjk, meta) "
            "VALUES (?,?,?,?,?,?,?)",
            [
                (r[0], None if r[1] == ut else r[1], r[2] or None, r[3] or None,
                 None if r[4] == ub else r[4], r[5] or None, r[6] or None)
                for r, (ut, ub) in zip(rows, units, strict=True)
            ],
        )
        self.db.executemany(
            "INSERT INTO units_fts(rowid, title, outline_path, tags, body, cjk, meta) "
            "VALUES (?,?,?,?,?,?,?)",
            rows,
        )

    def _delete_fts(self, document_id: str, kinds: Sequence[str] = ()) -> None:
        """Unindex a document's units, or only those of ``kinds`` (FTS5 first: it reads
        their text through the view), then drop their text rows."""
        only = f" AND kind IN ({','.join('?' * len(kinds))})" if kinds else ""
        for table in ("units_fts", "units_fts_text"):
            self.db.execute(
                f"DELETE FROM {table} WHERE rowid IN "
                f"(SELECT rowid FROM units WHERE document_id=?{only})",
                (document_id, *kinds),
            )

    # --- search -----------------------------------------------------------------------
    def _filter_sql(
        self, filters: Sequence[Filter], *, first_unit: bool = False
    ) -> tuple[list[str], list[Any]]:
        where: list[str] = []
        args: list[Any] = []
        for f in filters:
            first = first_unit and not f.negate
            sql, a = self._one_filter(f, first_unit=first)
            if f.any_of:  # a list of values: any of them
                alts = [self._one_filter(replace(f, value=x, any_of=()), first_unit=first)
                        for x in f.any_of]
                sql = "(" + " OR ".join([sql, *(s for s, _ in alts)]) + ")"
                a = [*a, *(x for _, xs in alts for x in xs)]
            # a negated filter keeps units that have no value at all (NULL is not a match)
            where.append(f"NOT coalesce(({sql}), false)" if f.negate else sql)
            args.extend(a)
        return where, args

    def _one_filter(self, f: Filter, *, first_unit: bool = False) -> tuple[str, list[Any]]:
        v = f.value
        more = extra_filter(f)
        if more is not None:
            return more
        if f.field == "match":  # +word: the unit contains the word (phrase, group)
            t = f.term or Term(tuple(v.split()), tuple((f.key or "").split()))
            if not t.searchable:
                return ("1", [])
            # the unary + keeps the set from FTS5's planner: as a rowid constraint on
            # the outer MATCH, FTS5 ran that MATCH once per unit of the set, which for
            # a common word is quadratic; unplanned, the set is built once and probed
            return (
                "+u.rowid IN (SELECT rowid FROM units_fts WHERE units_fts MATCH ?)",
                [term_expr(t)],
            )
        if f.field == "tag":
            # Org allows '#' in a tag (``:#7:``): tag:#7 is that tag, and also the
            # Obsidian tag 7 written #7 (stored without its '#')
            low = v.casefold()
            bare = low.lstrip("#") or low
            # the tagged units listed once (a few thousand tag rows), not a look-up per
            # unit: a filter-only tag:daily went from 24 to 0.5 ms on the shared corpus
            return (
                "u.rowid IN (SELECT t.unit_rowid FROM unit_tags t WHERE t.tag IN (?, ?) "
                "OR t.tag LIKE ? ESCAPE '\\' OR t.tag LIKE ? ESCAPE '\\')",
                [low, bare, _like_escape(low) + "/%", _like_escape(bare) + "/%"],
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
            # a frontmatter value written as a wikilink ("[[Books]]") matches its name;
            # with ``first_unit`` a match by the document's metadata alone is one hit
            # (the document's first unit), not every section of the note
            key = f.key or ""
            link = f"[[{v}]]"
            doc_level = (
                "EXISTS (SELECT 1 FROM json_each(d.metadata) m WHERE m.key = ? COLLATE NOCASE"
                " AND (? = '' OR CAST(m.value AS TEXT) IN (? COLLATE NOCASE, ? COLLATE NOCASE)"
                " OR (m.type = 'array' AND EXISTS (SELECT 1 FROM json_each(m.value) e"
                " WHERE CAST(e.value AS TEXT) IN (? COLLATE NOCASE, ? COLLATE NOCASE)))))"
            )
            if first_unit:
                doc_level = (
                    f"({doc_level} AND u.ordinal = (SELECT min(o.ordinal) FROM units o"
                    " WHERE o.document_id = u.document_id AND o.alternate = 0))"
                )
            return (
                "(EXISTS (SELECT 1 FROM json_each(u.properties) p WHERE p.key = ? COLLATE NOCASE"
                " AND (? = '' OR p.value = ? COLLATE NOCASE))"
                " OR EXISTS (SELECT 1 FROM json_each(u.extra, '$.inherited_properties') p"
                " WHERE p.key = ? COLLATE NOCASE AND (? = '' OR p.value = ? COLLATE NOCASE))"
                f" OR {doc_level})",
                [key, v, v, key, v, v, key, v, v, link, v, link],
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
        if f.field == "id":  # the unit, or its document's units, found by index
            return ("u.rowid IN (SELECT rowid FROM units WHERE id = ? OR document_id = ?)",
                    [v, v])
        raise QueryError(f"unknown filter field {f.field!r}")

    def search_text(
        self,
        query: TextQuery,
        *,
        limit: int,
        weights: Mapping[str, float],
        whole_documents: bool = True,
    ) -> list[tuple[str, float]]:
        """Rank units for a parsed query; ``(unit id, score)`` best first.

        Args:
            query: terms (any positive one must match, negative ones exclude) and
                filters; no positive term makes a filter-only query (score 0, listed
                in rounds: see :data:`ROUNDS_ORDER`); units off a conversation's
                canonical branch only with its ``alternates``.
            limit: maximum results (live units only; filters applied before it).
            weights: BM25 column weights ``title``, ``outline_path``, ``tags``, ``body``
                and ``meta`` (default :data:`META_WEIGHT`).
            whole_documents: in a filter-only query, a ``prop:`` match by the
                document's metadata alone is one hit (its first unit); ``False``: every
                unit of such a document (what a filter used as a mask needs).

        The score is ``-bm25(...)`` (higher is better).

        Raises:
            QueryError: ``limit`` is below 1. StoreError: the backend failed.
        """
        if limit < 1:
            raise QueryError(f"limit must be at least 1, not {limit}")
        match: str | None
        folded = required_match(query)
        if folded is not None:
            match, query = folded
        else:
            match = fts_match(query)
        # a filter-only query: a document-level property match is one hit per document
        where, args = self._filter_sql(query.filters, first_unit=match is None and whole_documents)
        if not query.alternates:
            where.append("u.alternate = 0")
        w = [weights.get(k, 1.0) for k in ("title", "outline_path", "tags", "body")]
        w.append(weights.get("body", 1.0))
        w.append(weights.get("meta", META_WEIGHT))
        if match is None:
            neg = neg_match(query)
            if neg is not None:
                where.append("u.rowid NOT IN (SELECT rowid FROM units_fts WHERE units_fts MATCH ?)")
                args.append(neg)
            sql = (
                "SELECT u.id, 0.0 FROM units u JOIN documents d ON d.id = u.document_id"
                + (" WHERE " + " AND ".join(where) if where else "")
                + f" ORDER BY {ROUNDS_ORDER} LIMIT ?"
            )
            params: list[Any] = [*args, limit]
        elif not query.filters:
            return self._top_by_rank(match, w, limit, query.alternates)
        else:
            # a filter naming its units by rowid (id:, tag:, +word: few units, as a
            # rule) is checked on the FTS row, before its BM25 and the joins: ranking a
            # document's units for id:DOC (a title-only preamble's document,
            # Ranker._settle_preambles) took 9.3 ms, now 1.3; other filters (format:,
            # kind:, path: …) most often pass many units: the best rows first
            listed = [x for x in where if "u.rowid IN (" in x]
            if not listed:
                top = self._top_then_filter(match, w, where, args, limit)
                if top is not None:
                    return top
            where = [x.replace("u.rowid IN (", "f.rowid IN (") for x in where]
            extra = (" AND " + " AND ".join(where)) if where else ""
            sql = (
                "SELECT u.id, -bm25(units_fts, ?, ?, ?, ?, ?, ?) AS score FROM units_fts f "
                "JOIN units u ON u.rowid = f.rowid JOIN documents d ON d.id = u.document_id "
                f"WHERE units_fts MATCH ?{extra} ORDER BY score DESC, u.rowid LIMIT ?"
            )
            params = [*w, match, *args, limit]
        try:
            return [(str(r[0]), float(r[1])) for r in self.db.execute(sql, params)]
        except sqlite3.Error as exc:
            raise StoreError(f"search failed: {exc}") from exc

    def text_query_syntax(self, query: TextQuery) -> str | None:
        """The backend's rendering of ``query`` (here the FTS5 MATCH expression), for
        explanations; ``None`` for a filter-only query."""
        return fts_match(query)

    def _top_by_rank(
        self, match: str, weights: list[float], limit: int, include_alternates: bool
    ) -> list[tuple[str, float]]:
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
                if not rows:
                    return []
                q = ",".join("?" * len(rows))
                ids = {
                    int(r[0]): (str(r[1]), bool(r[2]))
                    for r in self.db.execute(
                        f"SELECT rowid, id, alternate FROM units WHERE rowid IN ({q})",
                        [r for r, _ in rows],
                    )
                }
            except sqlite3.Error as exc:
                raise StoreError(f"search failed: {exc}") from exc
            kept = [
                (ids[r][0], s)
                for r, s in rows
                if r in ids and (include_alternates or not ids[r][1])
            ]
            if len(kept) >= limit or len(rows) < want:
                return kept[:limit]
            want *= 4

    def _top_then_filter(
        self, match: str, weights: list[float], where: list[str], args: list[Any], limit: int
    ) -> list[tuple[str, float]] | None:
        """A query with words and filters that many units pass: FTS5's own top
        :data:`FILTER_FIRST` ``× limit`` by ``rank`` (no join per matching row), then the
        filters (``where``, ``args``: SQL over ``units u`` and ``documents d``) on those
        rows. The same hits, scores and order as the join ranking every match (the top
        ``limit`` that pass among the best rows are the top ``limit`` that pass), or
        ``None`` when fewer than ``limit`` of them passed and more rows match (a
        selective filter: then the join)."""
        rank = "bm25(" + ", ".join(repr(float(x)) for x in weights) + ")"
        want = max(FILTER_FIRST * limit, FILTER_FIRST_MIN)
        try:
            rows = [(int(r[0]), -float(r[1])) for r in self.db.execute(
                "SELECT rowid, rank FROM units_fts WHERE units_fts MATCH ? "
                "AND rank MATCH ? ORDER BY rank, rowid LIMIT ?", (match, rank, want))]
            passed: dict[int, str] = {}
            for i in range(0, len(rows), _BATCH):
                part = [r for r, _ in rows[i : i + _BATCH]]
                q = ",".join("?" * len(part))
                passed.update((int(r[0]), str(r[1])) for r in self.db.execute(
                    "SELECT u.rowid, u.id FROM units u JOIN documents d ON d.id = u.document_id"
                    f" WHERE u.rowid IN ({q})" + "".join(f" AND {x}" for x in where),
                    [*part, *args]))
        except sqlite3.Error as exc:
            raise StoreError(f"search failed: {exc}") from exc
        kept = [(passed[r], s) for r, s in rows if r in passed]
        if len(kept) >= limit or len(rows) < want:
            return kept[:limit]
        return None

    def filter_units(self, unit_ids: Sequence[str], query: TextQuery) -> list[str]:
        """The given unit ids that exist and pass ``query``'s filters (and are on a
        canonical branch unless its ``alternates``), in the given order; its terms
        are not read."""
        if not unit_ids:
            return []
        where, args = self._filter_sql(query.filters)
        if not query.alternates:
            where.append("u.alternate = 0")
        ok: set[str] = set()
        ids = list(dict.fromkeys(unit_ids))
        for i in range(0, len(ids), _BATCH):
            part = ids[i : i + _BATCH]
            q = ",".join("?" * len(part))
            sql = (
                "SELECT u.id FROM units u JOIN documents d ON d.id = u.document_id "
                f"WHERE u.id IN ({q})" + "".join(f" AND {w}" for w in where)
            )
            ok.update(r[0] for r in self.db.execute(sql, [*part, *args]))
        return [u for u in unit_ids if u in ok]

    def filter_values(self, field: str) -> list[str]:
        """The values of a filter field present in the index, sorted (``format``,
        ``kind``, ``todo``, ``role``), for telling a user which ones exist.

        Raises:
            QueryError: the field has no finite set of values.
        """
        sql = _FILTER_VALUES.get(field)
        if sql is None:
            raise QueryError(f"filter {field}: has no list of values")
        return sorted({str(r[0]) for r in self.db.execute(sql) if r[0]})

    def unit_facts(self, unit_ids: Sequence[str]) -> dict[str, UnitFacts]:
        """``unit id -> UnitFacts`` for the given ids that exist (see the view)."""
        out: dict[str, UnitFacts] = {}
        ids = list(dict.fromkeys(unit_ids))
        for i in range(0, len(ids), _BATCH):
            part = ids[i : i + _BATCH]
            q = ",".join("?" * len(part))
            for r in self.db.execute(
                "SELECT u.id, u.document_id, u.kind = 'preamble' AND (trim(u.body, "
                + _WS
                + ") = ''"
                " OR trim(u.body, " + _WS + ") = trim(u.title, " + _WS + ")), "
                "COALESCE(json_extract(u.properties, '$.type'), d.type), u.time, d.modified, "
                "d.created, d.mtime FROM units u JOIN documents d ON d.id = u.document_id "
                f"WHERE u.id IN ({q})",
                part,
            ):
                out[r[0]] = UnitFacts(
                    r[0], r[1], bool(r[2]), r[3], r[4], r[5], r[6], float(r[7] or 0.0)
                )
        return out

    def hit_units(self, unit_ids: Sequence[str]) -> dict[str, HitUnit]:
        """``unit id -> HitUnit`` (the unit with its document's fields) for the given
        ids that exist."""
        out: dict[str, HitUnit] = {}
        ids = list(dict.fromkeys(unit_ids))
        for i in range(0, len(ids), _BATCH):
            part = ids[i : i + _BATCH]
            q = ",".join("?" * len(part))
            for r in self.db.execute(
                "SELECT u.id, u.document_id, u.ordinal, u.kind, u.title, u.outline_path, u.body, "
                "u.parent_id, u.line_start, u.line_end, u.tags, u.inherited_tags, u.todo, "
                "u.role, d.title, d.path, d.format, r.path, u.priority, u.timestamps, "
                "json_extract(u.extra, '$.blocks') "
                "FROM units u JOIN documents d ON d.id = u.document_id "
                f"JOIN roots r ON r.id = d.root_id WHERE u.id IN ({q})",
                part,
            ):
                out[r[0]] = HitUnit(
                    unit_id=r[0],
                    document_id=r[1],
                    ordinal=int(r[2]),
                    kind=r[3],
                    title=r[4] or "",
                    outline_path=tuple(json.loads(r[5] or "[]")),
                    body=r[6] or "",
                    parent_id=r[7],
                    line_start=int(r[8]),
                    line_end=int(r[9]),
                    tags=_tags(r[10], r[11]),
                    todo=r[12],
                    role=r[13],
                    doc_title=r[14] or "",
                    path=r[15],
                    format=r[16],
                    root_path=r[17],
                    priority=r[18],
                    planning=tuple(
                        Timestamp(**t)
                        for t in json.loads(r[19] or "[]")
                        if t.get("role") in PLANNING_ROLES
                    ),
                    blocks=model.BlockRef.all_of(json.loads(r[20])) if r[20] else (),
                )
        return out

    def siblings(self, document_id: str, parent_id: str | None, exclude: str) -> list[str]:
        """Titles of a unit's sibling headings (same parent), in order (at most 12)."""
        rows = self.db.execute(
            "SELECT title FROM units WHERE document_id=? AND parent_id IS ? AND id != ? "
            "AND kind='heading' ORDER BY ordinal LIMIT 12",
            (document_id, parent_id, exclude),
        ).fetchall()
        return [r[0] for r in rows]

    def siblings_many(
        self, units: Sequence[tuple[str, str | None, str]]
    ) -> dict[str, list[str]]:
        """:meth:`siblings` of many ``(document id, parent id, unit id)``:
        ``unit id -> titles`` (in process, one look-up each)."""
        return {uid: self.siblings(doc, parent, uid) for doc, parent, uid in units}

    def neighbours(self, document_id: str, ordinal: int, kind: str) -> list[ContextUnit]:
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
        return [
            model.ContextUnit(int(r[0]), r[1] or "", r[2] or "", r[3])
            for r in (*before, *after)
        ]


def _like_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
