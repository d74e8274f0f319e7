"""Keyword search of the PostgreSQL store: a parsed query as a ``tsquery``, ranked with
``ts_rank_cd`` over the weighted ``tsvector`` of ``units_fts``.

The column weights of ``[search] weights`` (title, outline path, tags, body) map onto
PostgreSQL's four weight classes A–D, scaled so the largest is 1. User text never becomes
``tsquery`` syntax: every term is handed to ``phraseto_tsquery`` as a bound parameter
(a term of several tokens is a phrase, as in SQLite), and the pieces are combined with
``||`` (any positive term), ``&& !!`` (no negative term). CJK bigrams are a phrase under
the ``simple`` configuration, matched against the same vector (their column is folded
into it with weight D).

Ranking is BM25 computed in SQL (k1 = 1.2, b = 0.75): each query lexeme's inverse
document frequency from the GIN index, its term frequency in a unit weighted by the
column it occurs in (BM25F-style: title, outline path, tags and body weights), and the
unit's length in lexemes against the mean. Differences from SQLite's FTS5, by design of
the engines: English stop words are not indexed (a query made only of them matches
nothing), a unit's length counts distinct lexemes, and FTS5 scores each column
separately — rankings agree on what matches, and mostly on the order.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from cairn.errors import QueryError
from cairn.model import Filter, Term, TextQuery
from cairn.store.sqlite.fts import SearchMixin


def _term_sql(t: Term) -> tuple[str, list[str]]:
    parts: list[str] = []
    args: list[str] = []
    if t.tokens and t.cjk:
        for tok in t.tokens:
            parts.append("phraseto_tsquery('english', ?)")
            args.append(tok)
    elif t.tokens:
        parts.append("phraseto_tsquery('english', ?)")
        args.append(" ".join(t.tokens))
    if t.cjk:
        parts.append("phraseto_tsquery('simple', ?)")
        args.append(" ".join(t.cjk))
    return "(" + " && ".join(parts) + ")", args


def ts_query(query: TextQuery) -> tuple[str | None, str | None, list[str], list[str]]:
    """The positive and negative ``tsquery`` SQL expressions of a query, with their
    parameters: ``(positive, negative, positive args, negative args)``; an expression
    is ``None`` when there is no such term."""
    pos_sql, pos_args, neg_sql, neg_args = [], [], [], []
    for t in query.positive:
        if t.tokens or t.cjk:
            s, a = _term_sql(t)
            pos_sql.append(s)
            pos_args += a
    for t in query.negative:
        if t.tokens or t.cjk:
            s, a = _term_sql(t)
            neg_sql.append(s)
            neg_args += a
    pos = "(" + " || ".join(pos_sql) + ")" if pos_sql else None
    neg = "(" + " || ".join(neg_sql) + ")" if neg_sql else None
    return pos, neg, pos_args, neg_args


class PostgresSearchMixin(SearchMixin):
    """``tsvector`` search with the shared filters."""

    def _one_filter(self, f: Filter, *, first_unit: bool = False) -> tuple[str, list[Any]]:
        """The shared filters, with ``+word`` (a must-match term) as a ``tsquery``.

        Raises:
            QueryError: a date filter (``scheduled:``, ``deadline:`` …): its matching
                function runs in SQLite only for now.
        """
        from cairn.store.sqlite.datefn import TS_FIELDS

        if f.field == "match":
            t = Term(tuple(f.value.split()), tuple((f.key or "").split()))
            if not (t.tokens or t.cjk):
                return ("true", [])
            sql, args = _term_sql(t)
            return (f"u.rowid IN (SELECT rowid FROM units_fts WHERE doc @@ {sql})", list(args))
        if f.field in TS_FIELDS:
            raise QueryError(f"{f.field}: date filters are not available on the PostgreSQL "
                             "backend yet (they are on SQLite)")
        return super()._one_filter(f, first_unit=first_unit)

    def search_text(
        self,
        query: TextQuery,
        *,
        limit: int,
        weights: Mapping[str, float],
        include_alternates: bool = False,
        whole_documents: bool = True,
    ) -> list[tuple[str, float]]:
        """Rank units for a parsed query; ``(unit id, score)`` best first (see
        :meth:`cairn.store.base.Store.search_text`). The score is ``ts_rank_cd``.

        Raises:
            QueryError: ``limit`` is below 1. StoreError: the backend failed.
        """
        if limit < 1:
            raise QueryError(f"limit must be at least 1, not {limit}")
        pos, neg, pos_args, neg_args = ts_query(query)
        where, args = self._filter_sql(query.filters,
                                       first_unit=pos is None and whole_documents)
        if not include_alternates:
            where.append("u.alternate = 0")
        if neg is not None:
            where.append(f"NOT (f.doc @@ {neg})")
            args = [*args, *neg_args]
        joins = ("FROM units u JOIN documents d ON d.id = u.document_id "
                 "JOIN units_fts f ON f.rowid = u.rowid")
        if pos is None:
            sql = (f"SELECT u.id, 0.0 {joins}"
                   + (" WHERE " + " AND ".join(where) if where else "")
                   + " ORDER BY d.path, u.ordinal LIMIT ?")
            params: list[Any] = [*args, limit]
        else:
            wa, wb, wc, wd = (float(weights.get(k, 1.0))
                              for k in ("title", "outline_path", "tags", "body"))
            wc = max(wc, float(weights.get("meta", wc)))  # tags and meta share class C
            n_docs, avgdl = self._corpus_stats()
            lexemes = self._lexemes(query)
            sql = (
                "WITH terms AS (SELECT lex, ln(1 + (? - df + 0.5) / (df + 0.5)) AS idf FROM "
                "(SELECT lex, (SELECT count(*) FROM units_fts WHERE doc @@ "
                "plainto_tsquery('simple', lex)) AS df FROM unnest(?::text[]) lex) t), "
                f"cand AS (SELECT f.rowid, f.doc FROM units_fts f WHERE f.doc @@ {pos}), "
                "scored AS (SELECT c.rowid, sum(t.idf * x.tfw * 2.2 / (x.tfw + 1.2 * "
                "(0.25 + 0.75 * length(c.doc) / ?))) AS score FROM cand c "
                "CROSS JOIN LATERAL (SELECT e.lexeme, (SELECT sum(CASE w WHEN 'A' THEN ? "
                "WHEN 'B' THEN ? WHEN 'C' THEN ? ELSE ? END) FROM unnest(e.weights) w) "
                "AS tfw FROM unnest(c.doc) e) x JOIN terms t ON t.lex = x.lexeme "
                "GROUP BY c.rowid) "
                f"SELECT u.id, s.score AS score {joins} JOIN scored s ON s.rowid = u.rowid"
                + (" WHERE " + " AND ".join(where) if where else "")
                + " ORDER BY score DESC, u.rowid LIMIT ?")
            params = [n_docs, lexemes, *pos_args, max(avgdl, 1e-9), wa, wb, wc, wd,
                      *args, limit]
        return [(str(r[0]), float(r[1])) for r in self.db.execute(sql, params)]

    def _corpus_stats(self) -> tuple[int, float]:
        """(units in the FTS table, mean lexemes per unit), cached for 30 s (BM25's N
        and average document length change slowly)."""
        now = time.monotonic()
        cached: tuple[float, int, float] | None = getattr(self, "_bm25_stats", None)
        if cached is not None and now - cached[0] < 30:
            return cached[1], cached[2]
        row = self.db.execute(
            "SELECT count(*), coalesce(avg(length(doc)), 0) FROM units_fts").fetchone()
        n, avgdl = int(row[0]), float(row[1])
        self._bm25_stats = (now, n, avgdl)
        return n, avgdl

    def _lexemes(self, query: TextQuery) -> list[str]:
        """The normalised lexemes of the query's positive terms (English stemming for
        words, ``simple`` for CJK bigrams), as the server makes them."""
        texts = [" ".join(t.tokens) for t in query.positive if t.tokens]
        cjk = [" ".join(t.cjk) for t in query.positive if t.cjk]
        row = self.db.execute(
            "SELECT ARRAY(SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('english', ?) "
            "|| to_tsvector('simple', ?))))", (" ".join(texts), " ".join(cjk))).fetchone()
        return [str(x) for x in row[0]]

    def text_query_syntax(self, query: TextQuery) -> str | None:
        """The ``tsquery`` the server builds for ``query`` (for explanations); ``None``
        for a filter-only query."""
        pos, neg, pos_args, neg_args = ts_query(query)
        if pos is None:
            return None
        expr = pos if neg is None else f"({pos} && !!{neg})"
        row = self.db.execute(f"SELECT ({expr})::text", [*pos_args, *neg_args]).fetchone()
        return str(row[0])

    def _write_fts(
        self, rows: Sequence[Sequence[Any]], units: Sequence[tuple[str, str]] | None = None
    ) -> None:
        """Index units: ``(rowid, title, outline_path, tags, body, cjk, meta)`` rows into
        the plain ``units_fts`` table (the server computes the weighted vector)."""
        self.db.executemany(
            "INSERT INTO units_fts(rowid, title, outline_path, tags, body, cjk, meta) "
            "VALUES (?,?,?,?,?,?,?)",
            [tuple(r) for r in rows],
        )

    def _delete_fts(self, document_id: str) -> None:
        """Unindex a document's units."""
        self.db.execute(
            "DELETE FROM units_fts WHERE rowid IN (SELECT rowid FROM units WHERE document_id=?)",
            (document_id,),
        )

    def integrity_check(self) -> list[str]:
        """Problems found by cairn's consistency checks ([] = fine), one sentence each."""
        problems: list[str] = []
        n_units = self.db.execute("SELECT count(*) FROM units").fetchone()[0]
        n_fts = self.db.execute("SELECT count(*) FROM units_fts").fetchone()[0]
        if n_units != n_fts:
            problems.append(f"units ({n_units}) and FTS rows ({n_fts}) differ")
        orphans = self.db.execute(
            "SELECT count(*) FROM units_fts WHERE rowid NOT IN (SELECT rowid FROM units)"
        ).fetchone()[0]
        if orphans:
            problems.append(f"{orphans} FTS rows without a unit")
        return problems
