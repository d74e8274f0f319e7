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

Ranking is BM25 (k1 = 1.2, b = 0.75): each query lexeme's inverse document frequency
comes from its number of units (``fts_lex.df``), its term frequency in a unit is
weighted by the column it occurs in (BM25F-style: title, outline path, tags and body
weights), and the unit's length in lexemes is set against the mean — the mean of the
last rebuild of the postings (``fts_params``), computed again whenever the live mean
(``fts_stats``) has drifted from it by more than 5 %.
A query of two to six plain words with the frozen weights and no filter is answered
overlap first (:mod:`cairn.store.postgres.overlap`: the units holding two or more of the
words, found by the GIN index and scored from their postings, with the heads of the
words' lists); a query naming units with ``id:`` scores those units. Otherwise the
best ``limit`` units are found by exact top-k over impact-ordered postings
(:mod:`cairn.store.postgres.topk`, kept by triggers: see
:data:`cairn.store.postgres.steps.PG_STEPS`), which reads each lexeme's postings best
first and stops early; candidates are scored from their ``tsvector`` (with the live
weights), so the scores are those of reading everything. Every matching
unit is scored in one statement instead (the planner applying a selective filter first)
when top-k gives up: a filter passing under 2 % of the first candidates, more than
400,000 postings read, a column weight raised above a frozen weight of 0, or a
``limit`` above 10,000. Phrases, CJK bigrams, groups and ``-word`` are checked with the
``tsquery`` (GIN) on the candidates.
Words are split and folded as FTS5's ``unicode61`` does and stop words are kept
(:mod:`cairn.store.postgres.words`). Differences from SQLite's FTS5, by design of the
engines: stemming is Snowball's English rather than Porter's, a unit's length counts
distinct lexemes, and FTS5 scores each column separately — rankings agree on what matches, and
mostly on the order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from cairn.errors import QueryError
from cairn.model import Filter, Term, TextQuery
from cairn.store.postgres.words import FTS_CONFIG
from cairn.store.sql.search import ROUNDS_ORDER, SearchBase


def _group_sql(t: Term) -> tuple[str, list[str]]:
    """A group as a ``tsquery`` expression: alternatives ``||``, each its positive
    terms ``&&`` and ``&& !!`` its negated ones (as :mod:`cairn.store.sqlite.match`)."""
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
            parts.append(f"phraseto_tsquery('{FTS_CONFIG}', cairn_words(?))")
            args.append(tok)
    elif t.tokens:
        parts.append(f"phraseto_tsquery('{FTS_CONFIG}', cairn_words(?))")
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


TOPK_TERMS = 4
"""The most lexemes searched by top-k: a longer query (a question, an abstract) has so
many lists that summing them whole is quicker."""

TOPK_SERVER = True
"""Whether top-k runs as one server function (:mod:`cairn.store.postgres.topk_sql`, one
round trip per query) rather than as the client loop of :mod:`cairn.store.postgres.topk`
(the same rounds, two to four round trips a block); both give the same result, and
``bench/scale.py --measure URL --topk python`` measures the client loop."""

TOPK_LIMIT = 10_000
"""The largest ``limit`` searched by top-k; above it (every match wanted, as for the
units a ``-word`` excludes from semantic search) every matching unit is scored."""


class PostgresSearchMixin(SearchBase):
    """``tsvector`` search with the shared filters."""

    def headings_titled(self, term: Term, limit: int) -> list[tuple[str, str]]:
        """``(unit id, title)`` of up to ``limit`` headings whose title holds ``term``:
        the keyword search with only the title weighing."""
        if not term.searchable or limit < 1:
            return []
        weights = {"title": 1.0, "outline_path": 0.0, "tags": 0.0, "body": 0.0, "meta": 0.0}
        found = [u for u, s in self.search_text(TextQuery((term,)), limit=limit,
                                                weights=weights) if s > 0]
        if not found:
            return []
        q = ",".join("?" * len(found))
        rows = dict(self.db.execute(
            f"SELECT id, title FROM units WHERE kind = 'heading' AND id IN ({q})", found))
        return [(u, str(rows[u])) for u in found if rows.get(u)]

    def _one_filter(
        self, f: Filter, *, first_unit: bool = False, few: bool = False
    ) -> tuple[str, list[Any]]:
        """The shared filters, with ``+word`` (a must-match term) as a ``tsquery``
        and the date filters as :meth:`_date_filter`."""
        from cairn.store.sql.datefn import TS_FIELDS

        if f.field == "match":
            t = f.term or Term(tuple(f.value.split()), tuple((f.key or "").split()))
            if not t.searchable:
                return ("true", [])
            sql, args = _term_sql(t)
            return (f"u.rowid IN (SELECT rowid FROM units_fts WHERE doc @@ {sql})", list(args))
        if f.field in TS_FIELDS:
            return self._date_filter(f)
        return super()._one_filter(f, first_unit=first_unit, few=few)

    def _date_filter(self, f: Filter) -> tuple[str, list[Any]]:
        """A date filter (``scheduled:``, ``deadline:``, ``closed:``, ``ts:``,
        ``ts-inactive:``) as the set of units it matches: SQLite's own matching function
        (:func:`cairn.store.sql.datefn.ts_match`: repeaters, warning delays, ranges)
        run over the units holding a timestamp of that kind, which the server picks
        out first (few units have timestamps), so both backends match the same."""
        from cairn.store.sql.datefn import ts_match

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
        if not query.alternates:
            where.append("u.alternate = 0")
        if neg is not None:
            where.append(f"NOT (f.doc @@ {neg})")
            args = [*args, *neg_args]
        joins = ("FROM units u JOIN documents d ON d.id = u.document_id "
                 "JOIN units_fts f ON f.rowid = u.rowid")
        if pos is None:
            sql = (f"SELECT u.id, 0.0 {joins}"
                   + (" WHERE " + " AND ".join(where) if where else "")
                   + f" ORDER BY {ROUNDS_ORDER} LIMIT ?")
            params: list[Any] = [*args, limit]
        else:
            return self._bm25(query, pos, pos_args, where, args, limit, weights)
        return [(str(r[0]), float(r[1])) for r in self.db.execute(sql, params)]

    def _bm25(self, query: TextQuery, pos: str, pos_args: list[str], where: list[str],
              args: list[Any], limit: int, weights: Mapping[str, float]
              ) -> list[tuple[str, float]]:
        """BM25 over the impact-ordered postings of the query's lexemes (see the module
        doc): exact top-k (:func:`cairn.store.postgres.topk.top_k`), or, when that gives
        up, one statement scoring every matching unit from its vector (the planner
        applies a selective filter first)."""
        from cairn.store.postgres import overlap
        from cairn.store.postgres.topk import Terms, bound_factor, exact_score_sql, top_k
        from cairn.store.postgres.topk_sql import top_k_server

        wa, wb, wc, wd = (float(weights.get(k, 1.0))
                          for k in ("title", "outline_path", "tags", "body"))
        wc = max(wc, float(weights.get("meta", wc)))  # tags and meta share class C
        n_docs, avgdl, frozen, frozen_avgdl = self._corpus_stats()
        lexemes, ids, dfs, simple = self._lexemes(query)
        if not lexemes:
            return []
        idf = [math.log(1 + (n_docs - df + 0.5) / (df + 0.5)) for df in dfs]
        # the mean length is the frozen one (fts_params: within 5 % of the live one,
        # see cairn.store.postgres.steps.DRIFT), so the stored impacts are exact
        avgdl = frozen_avgdl if frozen_avgdl > 0 else avgdl
        score_args: list[Any] = [max(avgdl, 1e-9), wa, wb, wc, wd, lexemes, idf]
        cond = list(where)
        cond_args = list(args)
        if not simple:
            cond.insert(0, f"f.doc @@ {pos}")
            cond_args = [*pos_args, *cond_args]
        check = " AND ".join(cond) if cond else "true"
        posted = [(i, t, x) for i, t, x, df in zip(ids, lexemes, idf, dfs, strict=True)
                  if i is not None and df > 0]
        live = (wa, wb, wc, wd)
        if not posted:
            return []
        # an id: filter names a document's units: score those (the planner starts there)
        listed = any(f.field == "id" and not f.negate for f in query.filters)
        if listed:
            pass
        elif (simple and live == frozen and limit <= TOPK_LIMIT
                and 2 <= len(posted) <= overlap.MAX_TERMS
                and all(c == "u.alternate = 0" for c in cond)):
            out = overlap.top_k_overlap(
                self.db, [int(i) for i, _, _ in posted], [t for _, t, _ in posted],
                [x for _, _, x in posted], limit, alternates=not cond,
                dfs=[df for i, df in zip(ids, dfs, strict=True) if i is not None and df > 0])
            if out is not None:
                return out
        elif limit <= TOPK_LIMIT and len(posted) <= TOPK_TERMS:
            r = bound_factor(live, frozen, avgdl, avgdl)
            terms = Terms(tuple(int(i) for i, _, _ in posted),
                          tuple(t for _, t, _ in posted), tuple(x for _, _, x in posted))
            filtered = any(c != "u.alternate = 0" for c in cond)
            run = top_k_server if TOPK_SERVER else top_k
            out = run(self.db, terms, limit, r, score_args, check, cond_args,
                      filtered=filtered)
            if out is not None:
                return out
        if live == frozen and not listed:  # the stored impacts are the scores' terms: sum them
            return self._sum_impacts([int(i) for i, _, _ in posted], [x for _, _, x in posted],
                                     cond, cond_args, limit)
        sql = (f"SELECT u.id, {exact_score_sql()} AS score FROM units u "
               "JOIN documents d ON d.id = u.document_id JOIN units_fts f ON f.rowid = u.rowid "
               f"WHERE {check}" + ("" if not simple else f" AND f.doc @@ {pos}")
               + " ORDER BY score DESC, u.rowid LIMIT ?")
        params = [*score_args, *cond_args, *(pos_args if simple else []), limit]
        return [(str(r[0]), float(r[1])) for r in self.db.execute(sql, params)]

    def _sum_impacts(self, ids: list[int], idf: list[float], cond: list[str],
                     cond_args: list[Any], limit: int) -> list[tuple[str, float]]:
        """Every matching unit's score as Σ idf · stored impact over the postings of the
        query's lexemes (exact when the weights are the frozen ones), best ``limit``
        meeting ``cond``; without filters the best ``2·limit + 50`` are taken before
        units are joined (a full pass runs when too few of them pass)."""
        head = ("WITH scored AS (SELECT p.rowid, sum(q.idf * p.imp) AS score FROM "
                "unnest(?::int[], ?::float8[]) AS q(lex, idf) JOIN fts_postings p "
                "ON p.lex = q.lex WHERE p.lex = ANY(?::int[]) GROUP BY p.rowid")
        joins = "FROM units u"
        if any("d." in c for c in cond):
            joins += " JOIN documents d ON d.id = u.document_id"
        if any("f." in c for c in cond):
            joins += " JOIN units_fts f ON f.rowid = u.rowid"
        tail = (f") SELECT u.id, s.score {joins} JOIN scored s ON s.rowid = u.rowid"
                + (" WHERE " + " AND ".join(cond) if cond else "")
                + " ORDER BY s.score DESC, u.rowid LIMIT ?")
        if all(c == "u.alternate = 0" for c in cond):
            sql = head + " ORDER BY score DESC, p.rowid LIMIT ?" + tail
            rows = self.db.execute(sql, [ids, idf, ids, 2 * limit + 50, *cond_args, limit])
            out = [(str(r[0]), float(r[1])) for r in rows]
            if len(out) == limit:
                return out
        rows = self.db.execute(head + tail, [ids, idf, ids, *cond_args, limit])
        return [(str(r[0]), float(r[1])) for r in rows]

    def _corpus_stats(self) -> tuple[int, float, tuple[float, float, float, float], float]:
        """(units in the FTS table, mean lexemes per unit, the frozen column weights of
        the stored impacts, the frozen mean length): BM25's N and average document
        length, kept exact on every write by triggers (``fts_stats``), and
        ``fts_params``."""
        row = self.db.execute(
            "SELECT s.units, s.lexemes, p.wa, p.wb, p.wc, p.wd, p.avgdl "
            "FROM fts_stats s, fts_params p").fetchone()
        if not row:
            return 0, 0.0, (1.0, 1.0, 1.0, 1.0), 0.0
        n, total = int(row[0]), int(row[1])
        frozen = (float(row[2]), float(row[3]), float(row[4]), float(row[5]))
        return n, (total / n if n else 0.0), frozen, float(row[6])

    def _lexemes(self, query: TextQuery
                 ) -> tuple[list[str], list[int | None], list[int], bool]:
        """The normalised lexemes of the query's positive terms (English stemming for
        words, ``simple`` for CJK bigrams), as the server makes them, with their ids
        and document frequencies in ``fts_lex`` (``None`` and 0 for a lexeme no unit
        has), and whether every positive term is one word of at most one lexeme (then a
        unit matches exactly when it has a posting of one of them)."""
        leaves = [leaf for t in query.positive for leaf in t.leaves()]
        texts = [" ".join(t.tokens) for t in leaves if t.tokens]
        cjk = [" ".join(t.cjk) for t in leaves if t.cjk]
        words = [t.tokens[0] for t in query.positive if len(t.tokens) == 1 and not t.cjk]
        row = self.db.execute(
            f"WITH q AS (SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('{FTS_CONFIG}', "
            "cairn_words(?)) "
            "|| to_tsvector('simple', ?))) AS lex) "
            "SELECT ARRAY(SELECT q.lex FROM q ORDER BY q.lex), "
            "ARRAY(SELECT x.id FROM q LEFT JOIN fts_lex x ON x.lex = q.lex ORDER BY q.lex), "
            "ARRAY(SELECT coalesce(x.df, 0) FROM q LEFT JOIN fts_lex x ON x.lex = q.lex "
            "ORDER BY q.lex), "
            "(SELECT count(*) FROM unnest(?::text[]) w "
            f"WHERE length(to_tsvector('{FTS_CONFIG}', cairn_words(w))) > 1)",
            (" ".join(texts), " ".join(cjk), words)).fetchone()
        lexemes = [str(x) for x in row[0]]
        ids = [None if x is None else int(x) for x in row[1]]
        dfs = [int(x) for x in row[2]]
        simple = len(words) == len([t for t in query.positive if t.searchable]) and not row[3]
        return lexemes, ids, dfs, simple

    def siblings_many(
        self, units: Sequence[tuple[str, str | None, str]]
    ) -> dict[str, list[str]]:
        """:meth:`siblings` of many ``(document id, parent id, unit id)`` in one
        statement: ``unit id -> titles`` (at most 12 each, in order)."""
        if not units:
            return {}
        out: dict[str, list[str]] = {uid: [] for _, _, uid in units}
        rows = self.db.execute(
            "SELECT q.uid, s.title FROM unnest(?::text[], ?::text[], ?::text[]) "
            "AS q(doc, parent, uid) CROSS JOIN LATERAL (SELECT u.title FROM units u "
            "WHERE u.document_id = q.doc AND u.parent_id IS NOT DISTINCT FROM q.parent "
            "AND u.id <> q.uid AND u.kind = 'heading' ORDER BY u.ordinal LIMIT 12) s",
            ([d for d, _, _ in units], [p for _, p, _ in units], [u for _, _, u in units]))
        for uid, title in rows:
            out[str(uid)].append(title)
        return out

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

    def _delete_fts(self, document_id: str, kinds: Sequence[str] = ()) -> None:
        """Unindex a document's units, or only those of ``kinds``."""
        only = f" AND kind IN ({','.join('?' * len(kinds))})" if kinds else ""
        self.db.execute(
            "DELETE FROM units_fts WHERE rowid IN "
            f"(SELECT rowid FROM units WHERE document_id=?{only})",
            (document_id, *kinds),
        )

    def integrity_check(self) -> list[str]:
        """Problems found by cairn's consistency checks ([] = fine), one sentence each."""
        return self._keyword_row_problems("units_fts")

    def repair(self) -> list[str]:
        """See :meth:`cairn.store.base.Store.repair`: keyword rows whose unit is gone are
        deleted (a unit without its row is written again by re-indexing its file)."""
        stray = "FROM units_fts WHERE rowid NOT IN (SELECT rowid FROM units)"
        with self.transaction():  # counted apart: a pipelined statement has no rowcount
            n = int(self.db.execute(f"SELECT count(*) {stray}").fetchone()[0])
            if n:
                self.db.execute(f"DELETE {stray}")
        return [f"removed {n} FTS rows without a unit"] if n > 0 else []
