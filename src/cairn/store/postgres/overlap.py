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

On a large index a query of long lists overlaps in few units, so this reads a small
part of what the whole-list read does (``bench/scale.py``; the figures are in
docs/benchmarks-earlier.md).
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

COMMON = 4.0
"""A word whose list is longer than this many times all the others' together is read
only at its head (see :func:`top_k_overlap`)."""

MAX_CANDIDATES = 2_000
"""The most units whose common word's share is computed from their vectors; more (a
common word weighing too much) and the common word's list is read too. The statement
counts the candidates first and reads no vector when they are too many (each costs a
random read of ``units_fts``, wasted when the statement then gives up)."""

_M = "m AS MATERIALIZED (SELECT rowid FROM units_fts WHERE doc @@ ?::tsquery)"
_MS = """ms AS (SELECT p.rowid, sum(q.idf * p.imp) AS score
       FROM unnest(?::int[], ?::float8[]) AS q(lex, idf)
       JOIN fts_postings p ON p.lex = q.lex
       WHERE p.rowid IN (SELECT rowid FROM m) GROUP BY p.rowid
       ORDER BY score DESC, p.rowid LIMIT ?)"""
_MS_COMMON = """m AS (SELECT p.rowid, sum(q.idf * p.imp) AS score
       FROM unnest(?::int[], ?::float8[]) AS q(lex, idf)
       JOIN fts_postings p ON p.lex = q.lex GROUP BY p.rowid),
thr AS (SELECT score FROM m ORDER BY score DESC LIMIT 1 OFFSET ?),
cand AS (SELECT rowid, score FROM m WHERE score >= coalesce((SELECT score FROM thr),
         '-Infinity'::float8) - ? * (SELECT max(imp) FROM fts_postings WHERE lex = ?)
         ORDER BY score DESC LIMIT ?),
ms AS (SELECT c.rowid, c.score + coalesce((SELECT ? * {imp} FROM unnest(f.doc) e
              WHERE e.lexeme = ?), 0) AS score
       FROM cand c JOIN units_fts f ON f.rowid = c.rowid CROSS JOIN fts_params prm
       WHERE (SELECT count(*) FROM cand) <= ?
       ORDER BY score DESC, c.rowid LIMIT ?)"""
_HS = """hs AS (SELECT q.k, h.rowid, q.idf * h.imp AS score
       FROM unnest(?::int[], ?::float8[]) WITH ORDINALITY AS q(lex, idf, k)
       CROSS JOIN LATERAL (SELECT p.rowid, p.imp FROM fts_postings p WHERE p.lex = q.lex
                           ORDER BY p.imp DESC, p.rowid DESC LIMIT ?) h)"""
_OUT = """SELECT 0, ms.rowid, u.id, ms.score, {ok}, true
FROM ms JOIN units u ON u.rowid = ms.rowid
UNION ALL
SELECT hs.k, hs.rowid, u.id, hs.score, {ok}, hs.rowid IN (SELECT rowid FROM m)
FROM hs JOIN units u ON u.rowid = hs.rowid"""
_COUNT = "UNION ALL SELECT -1, count(*), '', 0, false, false FROM cand"


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
                  limit: int, *, alternates: bool, dfs: Sequence[int] = ()
                  ) -> list[tuple[str, float]] | None:
    """The best ``limit`` units ``(unit id, score)`` for the words of ``texts``
    (lexemes with postings: their ``fts_lex`` ``ids`` and BM25 ``idf``, one entry each,
    and their document frequencies ``dfs`` if known), best first, ties by rowid;
    ``None`` when it cannot prove the answer exact (the caller reads every list).
    ``alternates`` keeps alternate units (otherwise ``units.alternate = 0`` is
    required).

    With a word whose list is over :data:`COMMON` times all the others (``note`` in a
    vault whose every heading says so), the overlap is not looked for: every unit in
    the other words' lists is scored from their postings ``P`` (the units outside them
    hold the common word alone, and the head of its list has their best); a unit's
    score is ``P + c`` with ``0 ≤ c ≤ C = idf · best impact`` of the common word, so
    the best ``n`` are among the units with ``P`` at least the ``n``-th best ``P``
    minus ``C``, and only those get ``c`` (from the unit's vector, computed as the
    stored impact is: :func:`cairn.store.postgres.steps.impact_sql`).

    Raises:
        ValueError: fewer than two lexemes, or the sequences differ in length.
    """
    if not len(ids) == len(texts) == len(idf) or len(ids) < 2 or (dfs and len(dfs) != len(ids)):
        raise ValueError("top_k_overlap needs two lexemes or more, each with an id and idf")
    ok = "true" if alternates else "u.alternate = 0"
    common = _common(dfs)
    n = 2 * limit + 10
    for _ in range(2):
        if common is None:
            sql = f"WITH {_M}, {_MS}, {_HS} {_OUT.format(ok=ok)}"
            args: list[Any] = [ts_literal(texts), list(ids), list(idf), n, list(ids),
                               list(idf), n]
            lists = len(ids)
        else:
            from cairn.store.postgres.steps import impact_sql

            rest = [i for i in range(len(ids)) if i != common]
            sql = (f"WITH {_MS_COMMON.format(imp=impact_sql('e', 'f.doc', 'prm'))}, "
                   f"{_HS} {_OUT.format(ok=ok)} {_COUNT}")
            args = [[ids[i] for i in rest], [idf[i] for i in rest], n - 1, idf[common],
                    ids[common], MAX_CANDIDATES + 1, idf[common], texts[common],
                    MAX_CANDIDATES, n,
                    [ids[common]], [idf[common]], n]
            lists = 1
        rows = db.execute(sql, args).fetchall()
        if any(int(r[0]) == -1 and int(r[1]) > MAX_CANDIDATES for r in rows):
            common = None  # the common word weighs too much: read its list too
            continue
        out = _settle([r for r in rows if int(r[0]) >= 0], lists, n, limit)
        if out is not None:
            return out
        n *= 8
    return None


def _common(dfs: Sequence[int]) -> int | None:
    """The index of a word whose list is over :data:`COMMON` times all the others'
    together, if there is one."""
    if not dfs:
        return None
    top = max(range(len(dfs)), key=lambda i: dfs[i])
    return top if dfs[top] > COMMON * (sum(dfs) - dfs[top]) else None


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
