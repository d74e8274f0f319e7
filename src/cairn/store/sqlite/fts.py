"""Keyword search of the SQLite store: a parsed query as FTS5 MATCH, ranked by BM25,
over the shared filters and hit data (:mod:`cairn.store.sql.search`).

User text never reaches FTS5 unescaped: every token of a :class:`cairn.model.Term` is
a quoted string, so ``C++``, ``NEAR``, ``*`` or ``"unbalanced`` are plain words. A term
of several tokens (``BENCH-100821``, ``path/to/file.toml``, a quoted phrase) becomes an
FTS5 phrase; CJK bigrams are a phrase against the ``cjk`` column.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from cairn.errors import QueryError, StoreError
from cairn.model import Filter, Term, TextQuery
from cairn.store.sql.search import _BATCH, ROUNDS_ORDER, SearchBase
from cairn.store.sqlite.match import fts_match, neg_match, required_match, term_expr

__all__ = ["FILTER_FIRST", "FILTER_FIRST_MIN", "META_WEIGHT", "SearchMixin", "fts_match"]

META_WEIGHT = 2.0
"""The BM25 weight of the ``meta`` column when ``[search] weights`` does not set
``meta``."""
FILTER_FIRST = 4
"""A query with words and filters first ranks this many times the results wanted by
BM25 alone and filters those (:meth:`SearchMixin._top_then_filter`): a filter that
passes many units then costs a few joins instead of one per match."""
FILTER_FIRST_MIN = 128
"""... and at least this many rows."""
_ROWID_IN = re.compile(r"\+?u\.rowid IN \(")


def _weights(weights: Mapping[str, float]) -> list[float]:
    """The six BM25 column weights of ``units_fts`` from ``[search] weights`` (the
    ``cjk`` column weighs as ``body``)."""
    w = [weights.get(k, 1.0) for k in ("title", "outline_path", "tags", "body")]
    return [*w, weights.get("body", 1.0), weights.get("meta", META_WEIGHT)]


def _on_fts_row(where: Sequence[str]) -> list[str]:
    """Conditions naming units by rowid (``u.rowid IN (…)``) checked on the FTS row
    ``f`` instead, before its BM25 and the joins, and kept from FTS5's planner (unary
    ``+``): handed to FTS5 as a rowid constraint, the set is searched one rowid at a
    time, each a new MATCH counting every posting of the query's words again for BM25
    (the tagged units times the word's units)."""
    return [_ROWID_IN.sub("+f.rowid IN (", x) for x in where]


class SearchMixin(SearchBase):
    """BM25 over FTS5 with the shared filters; the FTS5 index's own rows and checks."""

    # --- the index's rows -------------------------------------------------------------
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
        if self._hold_keyword_rows(rows):
            return
        self.db.executemany(
            "INSERT INTO units_fts(rowid, title, outline_path, tags, body, cjk, meta) "
            "VALUES (?,?,?,?,?,?,?)",
            rows,
        )

    def _delete_fts(self, document_id: str, kinds: Sequence[str] = ()) -> None:
        """Unindex a document's units, or only those of ``kinds`` (FTS5 first: it reads
        their text through the view), then drop their text rows."""
        self._write_held()  # a held row must be in FTS5 to be deleted from it
        only = f" AND kind IN ({','.join('?' * len(kinds))})" if kinds else ""
        for table in ("units_fts", "units_fts_text"):
            self.db.execute(
                f"DELETE FROM {table} WHERE rowid IN "
                f"(SELECT rowid FROM units WHERE document_id=?{only})",
                (document_id, *kinds),
            )


    # --- search -----------------------------------------------------------------------
    def _match_filter(self, term: Term) -> tuple[str, list[Any]]:
        """``+word`` as an FTS5 MATCH over the units' keyword index."""
        # the unary + keeps the set from FTS5's planner: as a rowid constraint on the
        # outer MATCH, FTS5 ran that MATCH once per unit of the set, which for a common
        # word is quadratic; unplanned, the set is built once and probed
        return ("+u.rowid IN (SELECT rowid FROM units_fts WHERE units_fts MATCH ?)",
                [term_expr(term)])

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
        # id: filters with words: the units they name are read first (see _named_units)
        named = [f for f in query.filters if f.field == "id" and not f.negate] if match else []
        rest = [f for f in query.filters if f.field != "id" or f.negate] if named else query.filters
        # a filter-only query: a document-level property match is one hit per document
        where, args = self._filter_sql(rest, first_unit=match is None and whole_documents)
        if not query.alternates:
            where.append("u.alternate = 0")
        w = _weights(weights)
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
            # rule) is checked on the FTS row, before its BM25 and the joins; id:
            # bounds the rows FTS5 reads to its units' range (_named_units); other
            # filters (format:, kind:, path: …) most often pass many units: the best
            # rows first
            listed = [x for x in where if "u.rowid IN (" in x]
            if named:
                only = self._named_units(named)
                if only is None:
                    return []
                where, args = [*where, *only[0]], [*args, *only[1]]
            elif not listed:
                top = self._top_then_filter(match, w, where, args, limit)
                if top is not None:
                    return top
            where = _on_fts_row(where)
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

    def best_in_documents(
        self, query: TextQuery, documents: Sequence[str], *, per_document: int,
        weights: Mapping[str, float],
    ) -> dict[str, list[str]]:
        """See :meth:`cairn.store.keyword.KeywordIndex.best_in_documents`: one
        statement, the documents' matching units ranked as :meth:`search_text` ranks
        them (the same BM25) and numbered per document. Only the named documents' rows
        are scored and joined; FTS5 seeks to their rowids' range.

        Raises:
            StoreError: the backend failed.
        """
        docs = list(dict.fromkeys(documents))
        top: dict[str, list[str]] = {d: [] for d in docs}
        folded = required_match(query)
        match, query = folded if folded is not None else (fts_match(query), query)
        if not docs or per_document < 1 or match is None:
            return top
        named = [f for f in query.filters if f.field == "id" and not f.negate]
        only = self._named_units([*named, Filter("id", docs[0], any_of=tuple(docs[1:]))])
        if only is None:
            return top
        rest = [f for f in query.filters if f.field != "id" or f.negate]
        where, args = self._filter_sql(rest)
        if not query.alternates:
            where.append("u.alternate = 0")
        where = _on_fts_row([*where, *only[0]])
        sql = (
            "WITH hit AS MATERIALIZED (SELECT f.rowid AS r, u.id AS id, u.document_id AS doc,"
            " -bm25(units_fts, ?, ?, ?, ?, ?, ?) AS score FROM units_fts f"
            " JOIN units u ON u.rowid = f.rowid JOIN documents d ON d.id = u.document_id"
            " WHERE units_fts MATCH ?" + "".join(f" AND {x}" for x in where) + "),"
            # id:DOC names DOC's units and a unit whose id is DOC
            " named(k, id, score, r) AS (SELECT doc, id, score, r FROM hit"
            " WHERE doc IN (SELECT value FROM json_each(?)) UNION ALL"
            " SELECT id, id, score, r FROM hit WHERE id != doc"
            " AND id IN (SELECT value FROM json_each(?)))"
            " SELECT k, id FROM (SELECT k, id, row_number() OVER"
            " (PARTITION BY k ORDER BY score DESC, r) AS n FROM named)"
            " WHERE n <= ? ORDER BY k, n"
        )
        try:
            names = json.dumps(docs)
            rows = self.db.execute(sql, [*_weights(weights), match, *args, *only[1],
                                         names, names, per_document])
        except sqlite3.Error as exc:
            raise StoreError(f"search failed: {exc}") from exc
        for k, unit in rows:
            top[str(k)].append(str(unit))
        return top

    def _named_units(self, named: Sequence[Filter]) -> tuple[list[str], list[Any]] | None:
        """The units the ``id:`` filters ``named`` pass (each names units or documents;
        all of them must hold) as conditions on the FTS row and their arguments: the
        rowids' range, which FTS5 seeks to, and the rowids themselves, checked per row
        in that range; ``None`` when no unit passes.

        The rowids are read first through the indexes on ``id`` and ``document_id``:
        as a subquery the set would be handed to FTS5 one rowid at a time (each a new
        MATCH, counting the query's postings again for BM25) or, for several values,
        tested on every matching row once per value."""
        passed: set[int] | None = None
        for f in named:
            names = json.dumps(list(f.values))
            got = {int(r[0]) for r in self.db.execute(
                "SELECT rowid FROM units WHERE id IN (SELECT value FROM json_each(?1)) UNION "
                "SELECT rowid FROM units WHERE document_id IN (SELECT value FROM json_each(?1))",
                (names,))}
            passed = got if passed is None else passed & got
        if not passed:
            return None
        return (
            ["f.rowid BETWEEN ? AND ?", "+f.rowid IN (SELECT value FROM json_each(?))"],
            [min(passed), max(passed), json.dumps(sorted(passed))],
        )

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

    # --- words in titles, and the keyword index's checks -------------------------------
    def headings_titled(self, term: Term, limit: int) -> list[tuple[str, str]]:
        """``(unit id, title)`` of up to ``limit`` headings whose title holds ``term``
        (its words in order), in index order (unranked: ranking every match cost more
        than the rest of query understanding).

        Raises:
            StoreError: the backend failed.
        """
        if not term.searchable or limit < 1:
            return []
        rows = self.db.execute(
            "SELECT u.id, u.title FROM units u WHERE u.rowid IN (SELECT rowid FROM units_fts"
            " WHERE units_fts MATCH ? LIMIT ?) AND u.kind = 'heading' AND u.alternate = 0",
            ("{title} : " + term_expr(term), limit),
        )
        return [(str(r[0]), str(r[1])) for r in rows if r[1]]

    def integrity_check(self) -> list[str]:
        """Problems found by SQLite, FTS5 and cairn's own consistency checks ([] = fine),
        one sentence each."""
        problems: list[str] = []
        for (msg,) in self.db.execute("PRAGMA integrity_check"):
            if msg != "ok":
                problems.append(f"sqlite: {msg}")
        try:
            self.db.execute("INSERT INTO units_fts(units_fts) VALUES ('integrity-check')")
        except sqlite3.DatabaseError as exc:
            if "readonly" not in str(exc):  # the check is a write: not on read-only media
                problems.append(f"fts5: {exc}")
        return problems + self._keyword_row_problems("units_fts_text")

    def repair(self) -> list[str]:
        """See :meth:`cairn.store.base.Store.repair`: text rows of the keyword index
        whose unit is gone are deleted (their FTS5 rows went with the unit), then the
        FTS5 index is rebuilt from ``units`` if its count or its own check still fails."""
        done: list[str] = []
        with self.transaction():
            cur = self.db.execute(
                "DELETE FROM units_fts_text WHERE rowid NOT IN (SELECT rowid FROM units)"
            )
            if cur.rowcount > 0:
                done.append(f"removed {cur.rowcount} FTS rows without a unit")
            n_units = self.db.execute("SELECT count(*) FROM units").fetchone()[0]
            n_fts = self.db.execute("SELECT count(*) FROM units_fts").fetchone()[0]
            try:
                self.db.execute("INSERT INTO units_fts(units_fts) VALUES ('integrity-check')")
                sound = n_units == n_fts
            except sqlite3.DatabaseError:
                sound = False
            if not sound:
                self.db.execute("INSERT INTO units_fts(units_fts) VALUES ('rebuild')")
                done.append("rebuilt the keyword index from the units")
        return done
