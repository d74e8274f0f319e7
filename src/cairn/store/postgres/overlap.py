"""Exact top-k BM25 for a query of several words, overlap first.

A unit matching a query of plain words ``w1 … wn`` (each one lexeme, any of them
enough) either holds two or more of the words or exactly one. The first kind — the
*overlap*, usually a few hundred to a few thousand units even when each word is in a
hundred thousand — is found by the GIN index of ``units_fts.doc`` (``(w1 & w2) |
(w1 & w3) | …``) and scored exactly: Σ idf · stored impact over the query's postings,
joined against that set by a hash (no aggregate over every matching unit, which is
what makes the whole-list read slow at a million chunks). A unit of the second kind
scores ``idf_i · impact`` of its one word, so the best of them are at the head of that
word's impact-ordered posting list. The answer is the best ``limit`` of the overlap's
best ``n`` and the lists' first ``n`` postings (``n = 2·limit + 10``), and it is exact
when nothing unread can reach it:

- the overlap was read whole, or its ``n``-th unit comes after the ``limit``-th answer
  (score, then rowid ascending, as every path orders);
- each list was read whole, or its last score read is below the ``limit``-th answer's
  score (strictly: unread postings of an equal score may have lower rowids).

Otherwise ``n`` grows eightfold once, then it gives up (``None``: the caller reads
everything). Scores are summed as the whole-list read sums them
(:meth:`cairn.store.postgres.search.PostgresSearchMixin._sum_impacts`), so it returns the
same units with the same scores; it needs the live column weights to be the frozen ones
(the stored impacts are then the terms of the score).

Measured on a 1,399,410-unit index (``bench/scale.py --chunks 1000000``), the query
``trial gene turtur`` (84k, 84k and 30k postings, 12k units in the overlap): 64–83 ms
against 940–1,030 ms for the whole-list read (the figures of the whole benchmark are in
the README's scale section).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

MAX_TERMS = 6
"""The most lexemes searched overlap first: the pairs grow as n², and a long query (a
question, an abstract) overlaps in most of its matches, so the whole-list read is as
quick."""

_SQL = """
WITH m AS MATERIALIZED (SELECT rowid FROM units_fts WHERE doc @@ ?::tsquery),
ms AS (SELECT p.rowid, sum(q.idf * p.imp) AS score
       FROM unnest(?::int[], ?::float8[]) AS q(lex, idf)
       JOIN fts_postings p ON p.lex = q.lex
       WHERE p.rowid IN (SELECT rowid FROM m) GROUP BY p.rowid
       ORDER BY score DESC, p.rowid LIMIT ?),
hs AS (SELECT q.k, h.rowid, q.idf * h.imp AS score
       FROM unnest(?::int[], ?::float8[]) WITH ORDINALITY AS q(lex, idf, k)
       CROSS JOIN LATERAL (SELECT p.rowid, p.imp FROM fts_postings p WHERE p.lex = q.lex
                           ORDER BY p.imp DESC, p.rowid DESC LIMIT ?) h)
SELECT 0, ms.rowid, u.id, ms.score, {ok}, true
FROM ms JOIN units u ON u.rowid = ms.rowid
UNION ALL
SELECT hs.k, hs.rowid, u.id, hs.score, {ok}, hs.rowid IN (SELECT rowid FROM m)
FROM hs JOIN units u ON u.rowid = hs.rowid
"""


def ts_literal(lexemes: Sequence[str]) -> str:
    """The ``tsquery`` text matching a unit with two or more of ``lexemes``:
    ``('a' & 'b') | ('a' & 'c') | …``, each lexeme quoted with its quotes and
    backslashes doubled (PostgreSQL manual §8.11.2), so no lexeme is read as syntax.

    Raises:
        ValueError: fewer than two lexemes.
    """
    if len(lexemes) < 2:
        raise ValueError("an overlap needs two lexemes or more")

    def lit(x: str) -> str:
        return "'" + x.replace("\\", "\\\\").replace("'", "''") + "'"

    return " | ".join(f"({lit(a)} & {lit(b)})" for a, b in itertools.combinations(lexemes, 2))


def top_k_overlap(db: Any, ids: Sequence[int], texts: Sequence[str], idf: Sequence[float],
                  limit: int, *, alternates: bool) -> list[tuple[str, float]] | None:
    """The best ``limit`` units ``(unit id, score)`` for the words of ``texts``
    (lexemes with postings: their ``fts_lex`` ``ids`` and BM25 ``idf``, one entry each),
    best first, ties by rowid; ``None`` when it cannot prove the answer exact (the
    caller reads every list). ``alternates`` keeps alternate units (otherwise
    ``units.alternate = 0`` is required).

    Raises:
        ValueError: fewer than two lexemes, or the three sequences differ in length.
    """
    if not len(ids) == len(texts) == len(idf) or len(ids) < 2:
        raise ValueError("top_k_overlap needs two lexemes or more, each with an id and idf")
    sql = _SQL.format(ok="true" if alternates else "u.alternate = 0")
    tsq = ts_literal(texts)
    n = 2 * limit + 10
    for _ in range(2):
        rows = db.execute(sql, [tsq, list(ids), list(idf), n, list(ids), list(idf), n]).fetchall()
        out = _settle(rows, len(ids), n, limit)
        if out is not None:
            return out
        n *= 8
    return None


def _settle(rows: Sequence[Sequence[Any]], n_lists: int, n: int, limit: int
            ) -> list[tuple[str, float]] | None:
    """The answer from one read — rows ``(list: 0 overlap, k ≥ 1 the k-th word's head;
    rowid, unit id, score, passes, in the overlap)`` — or ``None`` when an unread unit
    could still enter it (see the module doc)."""
    cands: dict[int, tuple[float, str]] = {}
    count = [0] * (n_lists + 1)
    last = [math.inf] * (n_lists + 1)
    last_key = (-math.inf, 0)  # the overlap's last row read, as (−score, rowid)
    for k, rowid, uid, score, ok, in_m in rows:
        k, rowid, score = int(k), int(rowid), float(score)
        count[k] += 1
        last[k] = min(last[k], score)
        if k == 0:
            last_key = max(last_key, (-score, rowid))
        if ok and (k == 0 or not in_m):
            cands[rowid] = (score, str(uid))
    top = sorted(cands.items(), key=lambda x: (-x[1][0], x[0]))[:limit]
    full = len(top) == limit
    kth_key = (-top[-1][1][0], top[-1][0]) if full else (math.inf, 0)
    if count[0] == n and not (full and kth_key <= last_key):
        return None
    for k in range(1, n_lists + 1):
        if count[k] == n and not (full and top[-1][1][0] > last[k]):
            return None
    return [(uid, score) for _, (score, uid) in top]
