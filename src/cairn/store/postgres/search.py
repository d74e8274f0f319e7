"""Keyword search of the PostgreSQL store: a parsed query as a ``tsquery``, ranked with
``ts_rank_cd`` over the weighted ``tsvector`` of ``units_fts``.

The column weights of ``[search] weights`` (title, outline path, tags, body) map onto
PostgreSQL's four weight classes A–D, scaled so the largest is 1. User text never becomes
``tsquery`` syntax: every term is handed to ``phraseto_tsquery`` as a bound parameter
(a term of several tokens is a phrase, as in SQLite), and the pieces are combined with
``||`` (any positive term), ``&& !!`` (no negative term); a group ``(a b OR -c d)``
is ``&&`` within an alternative and ``||`` between them. CJK bigrams are a phrase under
the ``simple`` configuration, matched against the same vector (their column is folded
into it with weight D).

Ranking is BM25 computed in SQL (k1 = 1.2, b = 0.75) over the server's inverted index
``fts_postings`` (one row per lexeme and unit: occurrences per weight class and the
unit's length, kept by triggers; see :data:`cairn.store.postgres.steps.PG_STEPS`): each
query lexeme's inverse document frequency is the number of its postings, its term
frequency in a unit is weighted by the column it occurs in (BM25F-style: title, outline
path, tags and body weights), and the unit's length in lexemes is set against the mean
(``fts_stats``). A query reads only its lexemes' postings (an index-only B-tree scan);
the ``tsquery`` itself (GIN) is checked only for phrases, CJK bigrams, groups and
``-word``.
Differences from SQLite's FTS5, by design of the engines: English stop words are not
indexed (a query made only of them matches nothing), a unit's length counts distinct
lexemes, and FTS5 scores each column separately — rankings agree on what matches, and
mostly on the order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cairn.errors import QueryError
from cairn.model import Filter, Term, TextQuery
from cairn.store.sqlite.fts import SearchMixin


def _group_sql(t: Term) -> tuple[str, list[str]]:
    """A group as a ``tsquery`` expression: alternatives ``||``, each its positive
    terms ``&&`` and ``&& !!`` its negated ones (as :func:`cairn.store.sqlite.fts`)."""
    alts: list[str] = []
    args: list[str] = []
    for alt in t.group:
        pos = [_term_sql(x) for x in alt if not x.negate and x.searchable]
        neg = [_term_sql(x) for x in alt if x.negate and x.searchable]
        if not pos:
            continue
        expr = "(" + " && ".join(s for s, _ in pos) + ")"
        if neg:
            expr = f"({expr} && !!({' || '.join(s for s, _ in neg)}))"
        alts.append(expr)
        args += [a for _, xs in (*pos, *neg) for a in xs]
    return "(" + " || ".join(alts) + ")", args


def _term_sql(t: Term) -> tuple[str, list[str]]:
    if t.group:
        return _group_sql(t)
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
        if t.searchable:
            s, a = _term_sql(t)
            pos_sql.append(s)
            pos_args += a
    for t in query.negative:
        if t.searchable:
            s, a = _term_sql(t)
            neg_sql.append(s)
            neg_args += a
    pos = "(" + " || ".join(pos_sql) + ")" if pos_sql else None
    neg = "(" + " || ".join(neg_sql) + ")" if neg_sql else None
    return pos, neg, pos_args, neg_args


class PostgresSearchMixin(SearchMixin):
    """``tsvector`` search with the shared filters."""

    def _one_filter(self, f: Filter, *, first_unit: bool = False) -> tuple[str, list[Any]]:
        """The shared filters, with ``+word`` (a must-match term) as a ``tsquery``
        and the date filters as :meth:`_date_filter`."""
        from cairn.store.sqlite.datefn import TS_FIELDS

        if f.field == "match":
            t = f.term or Term(tuple(f.value.split()), tuple((f.key or "").split()))
            if not t.searchable:
                return ("true", [])
            sql, args = _term_sql(t)
            return (f"u.rowid IN (SELECT rowid FROM units_fts WHERE doc @@ {sql})", list(args))
        if f.field in TS_FIELDS:
            return self._date_filter(f)
        return super()._one_filter(f, first_unit=first_unit)

    def _date_filter(self, f: Filter) -> tuple[str, list[Any]]:
        """A date filter (``scheduled:``, ``deadline:``, ``closed:``, ``ts:``,
        ``ts-inactive:``) as the set of units it matches: SQLite's own matching function
        (:func:`cairn.store.sqlite.datefn.ts_match`: repeaters, warning delays, ranges)
        run over the units holding a timestamp of that kind, which the server picks
        out first (few units have timestamps), so both backends match the same."""
        from cairn.store.sqlite.datefn import ts_match

        role = f'"{f.field}"' if f.field in ("scheduled", "deadline", "closed") else "["
        rows = self.db.execute(
            "SELECT rowid, timestamps FROM units WHERE timestamps <> '[]' "
            "AND strpos(timestamps, ?) > 0", (role,))
        ids = [int(r[0]) for r in rows if ts_match(str(r[1]), f.field, f.value, f.key)]
        return ("u.rowid = ANY(?)", [ids])

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
        :meth:`cairn.store.base.Store.search_text`). The score is BM25 (:meth:`_bm25`).

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
            return self._bm25(query, pos, pos_args, where, args, limit, weights)
        return [(str(r[0]), float(r[1])) for r in self.db.execute(sql, params)]

    def _bm25(self, query: TextQuery, pos: str, pos_args: list[str], where: list[str],
              args: list[Any], limit: int, weights: Mapping[str, float]
              ) -> list[tuple[str, float]]:
        """BM25 over the postings of the query's lexemes (see the module doc).

        Scoring reads ``fts_postings`` only; the ``tsquery`` is checked against the
        unit's vector only when a term is a phrase (or CJK), so that the postings
        alone cannot tell whether it matches. Without filters the best
        ``2 * limit + 50`` scores are taken before units are joined (a second, full
        pass runs when too few of them are live canonical units)."""
        wa, wb, wc, wd = (float(weights.get(k, 1.0))
                          for k in ("title", "outline_path", "tags", "body"))
        wc = max(wc, float(weights.get("meta", wc)))  # tags and meta share class C
        n_docs, avgdl = self._corpus_stats()
        lexemes, simple = self._lexemes(query)
        if not lexemes:
            return []
        cond = list(where)
        cond_args = list(args)
        if not simple:
            cond.insert(0, f"f.doc @@ {pos}")
            cond_args = [*pos_args, *cond_args]
        joins = "FROM units u JOIN documents d ON d.id = u.document_id"
        if any("f.doc" in c for c in cond):
            joins += " JOIN units_fts f ON f.rowid = u.rowid"
        head = (
            "WITH p AS MATERIALIZED (SELECT lex, rowid, a * ? + b * ? + c * ? + d * ? AS tfw, "
            "dl FROM fts_postings WHERE lex = ANY(?)), "
            "t AS (SELECT lex, ln(1 + (? - count(*) + 0.5) / (count(*) + 0.5)) AS idf "
            "FROM p GROUP BY lex), "
            "scored AS (SELECT p.rowid, sum(t.idf * p.tfw * 2.2 / (p.tfw + 1.2 * "
            "(0.25 + 0.75 * p.dl / ?))) AS score FROM p JOIN t ON t.lex = p.lex "
            "GROUP BY p.rowid")
        head_args: list[Any] = [wa, wb, wc, wd, lexemes, n_docs, max(avgdl, 1e-9)]
        tail = (f") SELECT u.id, s.score AS score {joins} JOIN scored s ON s.rowid = u.rowid"
                + (" WHERE " + " AND ".join(cond) if cond else "")
                + " ORDER BY score DESC, u.rowid LIMIT ?")
        prune = all(c == "u.alternate = 0" for c in cond)
        if prune:
            sql = head + " ORDER BY score DESC, p.rowid LIMIT ?" + tail
            rows = self.db.execute(sql, [*head_args, 2 * limit + 50, *cond_args, limit])
            out = [(str(r[0]), float(r[1])) for r in rows]
            if len(out) == limit:
                return out
        rows = self.db.execute(head + tail, [*head_args, *cond_args, limit])
        return [(str(r[0]), float(r[1])) for r in rows]

    def _corpus_stats(self) -> tuple[int, float]:
        """(units in the FTS table, mean lexemes per unit): BM25's N and average
        document length, kept exact on every write by triggers (``fts_stats``)."""
        row = self.db.execute("SELECT units, lexemes FROM fts_stats").fetchone()
        n, total = (int(row[0]), int(row[1])) if row else (0, 0)
        return n, (total / n if n else 0.0)

    def _lexemes(self, query: TextQuery) -> tuple[list[str], bool]:
        """The normalised lexemes of the query's positive terms (English stemming for
        words, ``simple`` for CJK bigrams), as the server makes them, and whether every
        positive term is one word of at most one lexeme (then a unit matches exactly when it
        has a posting of one of them; a stop word matches nothing)."""
        leaves = [leaf for t in query.positive for leaf in t.leaves()]
        texts = [" ".join(t.tokens) for t in leaves if t.tokens]
        cjk = [" ".join(t.cjk) for t in leaves if t.cjk]
        words = [t.tokens[0] for t in query.positive if len(t.tokens) == 1 and not t.cjk]
        row = self.db.execute(
            "SELECT ARRAY(SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('english', ?) "
            "|| to_tsvector('simple', ?)))), (SELECT count(*) FROM unnest(?::text[]) w "
            "WHERE length(to_tsvector('english', w)) > 1)",
            (" ".join(texts), " ".join(cjk), words)).fetchone()
        lexemes = [str(x) for x in row[0]]
        simple = len(words) == len([t for t in query.positive if t.searchable]) and not row[1]
        return lexemes, simple

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
