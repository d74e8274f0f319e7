"""Exact top-k BM25 on PostgreSQL without reading whole posting lists.

``fts_postings`` holds, per (lexeme id, unit), the term's *impact* — BM25's saturated
term frequency computed with the frozen weights and mean unit length of ``fts_params``
(:func:`cairn.store.postgres.steps.impact_sql`) — under a B-tree on (lexeme, impact,
unit). :func:`top_k` reads each query lexeme's postings best impact first, in blocks
that grow fourfold (keyset pagination: one backward index range scan per lexeme and
block, all lexemes in one statement), and stops as soon as no unit it has not looked at
can reach the k-th best. It is Fagin's threshold algorithm over impact-ordered lists,
with random access (exact scores) for a few candidates per block:

- a unit read so far has an upper bound ``R · (Σ idf·impact over the lists it was read
  in + Σ idf·θ over the others)``, θ a lexeme's last impact read (0 once its list is
  exhausted); a unit read in no list is bounded by ``R · Σ idf·θ``;
- after each block the ``2·limit + 10`` best unscored candidates by bound are scored
  exactly from their ``tsvector`` (:func:`exact_score_sql`, the statement a full read
  uses too, with the check: filters, phrases, ``-word``, alternates), which gives the
  k-th best exact score; a candidate whose bound is below it is dropped for good
  (bounds only fall and the k-th best only rises as lists are read);
- it stops when the k-th best beats the unread bound and at most ``2·limit + 10``
  contenders are left (up to :data:`MAX_SCORED` after :data:`FEW_READ` postings, or all
  once every list is read), which are scored too: the result is the full read's;
- ``R ≥ 1`` makes the frozen impacts bounds of the live ones when the column weights
  differ from the frozen ones (:func:`bound_factor`): a term impact is increasing in the
  weighted term frequency ``t`` and ``f(ρ·t) ≤ ρ·f(t)`` for ρ ≥ 1. With the default
  weights it is 1.

It gives up (returns ``None``: the caller reads everything) when a column
weight is raised above a frozen weight of 0, when a weight is negative, after
:data:`MAX_POSTINGS` postings, or when a filter keeps under :data:`MIN_PASS` of the
first candidates (a selective filter is better applied first, which the full read's
planner does).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MAX_POSTINGS = 400_000
"""Postings read before top-k gives up for the full read (whose cost is about the same)."""

MIN_PASS = 0.02
"""The least share of the first round's candidates a filter may keep for top-k to go on."""

MAX_SCORED = 2_000
"""Candidates scored exactly at the end at most. Each costs a few random reads, so until
:data:`FEW_READ` postings are read only ``2·limit + 10`` are (more: the lists are read
further, which is cheaper)."""

FEW_READ = 20_000
"""Postings read before the end may score up to :data:`MAX_SCORED` candidates."""

FIRST_BLOCK = 64
"""Postings per lexeme of the first block (at least ``2·limit + 10``); ×4 per round."""

_BLOCK_SQL = (
    "SELECT c.k, p.imp, p.rowid FROM unnest(?::int[], ?::int[], ?::real[], ?::bigint[], "
    "?::int[]) AS c(k, lex, imp, rowid, n) CROSS JOIN LATERAL (SELECT imp, rowid "
    "FROM fts_postings WHERE lex = c.lex AND (imp, rowid) < (c.imp, c.rowid) "
    "ORDER BY imp DESC, rowid DESC LIMIT c.n) p")


def exact_score_sql() -> str:
    """The SQL of a unit's BM25 score from its vector ``f.doc``: Σ idf · tfw·(k1+1) /
    (tfw + k1·(1−b+b·dl/avgdl)), tfw the occurrences per weight class times the column
    weights, each term's impact rounded to ``real`` as the stored ones are (so both
    give the same score). Parameters, in order: avgdl, the weights of classes A, B, C, D, the query
    lexemes (``text[]``) and their idf (``float8[]``)."""
    counts = [f"coalesce(cardinality(array_positions(e.weights, '{w}')), 0) * ?::float8"
              for w in "ABCD"]
    return (
        "(SELECT coalesce(sum(t.idf * (t.w * 2.2 / (t.w + 1.2 * (0.25 + 0.75 * "
        "length(f.doc) / ?::float8)))::real), 0) FROM (SELECT q.idf, " + " + ".join(counts)
        + " AS w FROM unnest(f.doc) e JOIN unnest(?::text[], ?::float8[]) AS q(lex, idf) "
        "ON q.lex = e.lexeme) t)")


@dataclass(frozen=True)
class Terms:
    """The query's lexemes as the postings know them: ``ids`` (``fts_lex.id``),
    ``texts`` and ``idf`` (BM25's ln(1 + (N − df + 0.5)/(df + 0.5))), one entry each."""

    ids: tuple[int, ...]
    texts: tuple[str, ...]
    idf: tuple[float, ...]


def bound_factor(live: Sequence[float], frozen: Sequence[float], avgdl: float,
                 frozen_avgdl: float) -> float:
    """``R``: how much a live term impact may exceed its frozen one (see the module
    doc); ``inf`` when it is unbounded (a weight raised from 0, a negative weight)."""
    r = 1.0
    for w, w0 in zip(live, frozen, strict=True):
        if w < 0 or w0 < 0:
            return math.inf
        if w > w0:
            r = max(r, w / w0) if w0 > 0 else math.inf
    if frozen_avgdl > 0 and avgdl > frozen_avgdl:
        r *= avgdl / frozen_avgdl
    return r * (1 + 1e-6)  # impacts are stored as float4


def top_k(db: Any, terms: Terms, limit: int, r: float, score_args: list[Any],
          check_sql: str, check_args: list[Any], *, filtered: bool
          ) -> list[tuple[str, float]] | None:
    """The best ``limit`` units ``(unit id, score)``, best first (ties by rowid), or
    ``None`` when top-k gives up (see the module doc) and the caller must read all.

    ``r`` is :func:`bound_factor`; ``score_args`` are :func:`exact_score_sql`'s
    parameters; ``check_sql`` is the condition a candidate must meet (filters, phrases,
    ``-word``; over ``u``, ``d`` and ``f``) with its ``check_args``; ``filtered`` says
    it may drop more than alternates.
    """
    n_terms = len(terms.ids)
    if not math.isfinite(r) or n_terms == 0:
        return None
    theta = [math.inf] * n_terms  # last impact read per lexeme
    cursor: list[tuple[float, int]] = [(math.inf, 2**63 - 1)] * n_terms
    done = [False] * n_terms
    part: dict[int, float] = {}  # open candidates: Σ idf·impact over the lists read in
    seen: dict[int, int] = {}  # and which lists those are (bit k)
    closed: set[int] = set()  # scored, or bounded below the k-th best for good
    best: list[tuple[float, int, str]] = []  # exact (score, rowid, unit id), best first
    tried = passed = read = 0
    block = max(FIRST_BLOCK, 2 * limit + 10)
    step = 2 * limit + 10
    idf = terms.idf
    first = True

    def score(rowids: list[int]) -> None:
        nonlocal tried, passed, best
        got = _exact(db, rowids, score_args, check_sql, check_args)
        tried, passed = tried + len(rowids), passed + len(got)
        closed.update(rowids)
        for u in rowids:
            part.pop(u, None)
            seen.pop(u, None)
        best = sorted([*best, *got], key=lambda x: (-x[0], x[1]))[:limit]

    while True:
        if read > MAX_POSTINGS:
            return None
        live = [k for k in range(n_terms) if not done[k]]
        rows = db.execute(_BLOCK_SQL, (
            live, [terms.ids[k] for k in live], [cursor[k][0] for k in live],
            [cursor[k][1] for k in live], [block] * len(live))).fetchall()
        got = [0] * n_terms
        for k, imp, rowid in rows:
            got[k] += 1
            cursor[k] = (imp, rowid)
            if rowid not in closed:
                part[rowid] = part.get(rowid, 0.0) + idf[k] * imp
                seen[rowid] = seen.get(rowid, 0) | (1 << k)
        read += len(rows)
        for k in live:
            theta[k] = cursor[k][0] if got[k] == block else 0.0
            done[k] = got[k] < block
        rest = [idf[k] * theta[k] for k in range(n_terms)]
        unseen = r * sum(rest)
        bounds = {mask: sum(x for k, x in enumerate(rest) if not mask >> k & 1)
                  for mask in set(seen.values())}
        upper = {u: r * (p + bounds[seen[u]]) for u, p in part.items()}
        # the best few by upper bound are scored exactly (the k-th best rises fast)
        if upper:
            score(heapq.nlargest(step, upper, key=upper.__getitem__))
        if first and filtered and tried and passed < MIN_PASS * tried and passed < limit:
            return None
        first = False
        kth = best[limit - 1][0] if len(best) >= limit else -math.inf
        contenders = [u for u in part if upper[u] >= kth]
        room = step if read < FEW_READ else MAX_SCORED
        if all(done) or (kth > unseen and len(contenders) <= room):
            score(contenders)
            return [(uid, s) for s, _rowid, uid in best]
        for u in part.keys() - set(contenders):  # bounds only fall, the k-th best rises
            closed.add(u)
            del part[u], seen[u]
        block *= 4


def _exact(db: Any, rowids: list[int], score_args: list[Any], check_sql: str,
           check_args: list[Any]) -> list[tuple[float, int, str]]:
    """``(exact score, rowid, unit id)`` of those of ``rowids`` that meet the check."""
    sql = (f"SELECT u.rowid, u.id, {exact_score_sql()} FROM {_joins(check_sql, True)} "
           f"WHERE u.rowid = ANY(?) AND {check_sql}")
    best: list[tuple[float, int, str]] = []
    for i in range(0, len(rowids), 1000):
        rows = db.execute(sql, [*score_args, rowids[i:i + 1000], *check_args]).fetchall()
        best += [(float(x[2]), int(x[0]), str(x[1])) for x in rows]
    return best


def _joins(check_sql: str, vector: bool) -> str:
    """``units u``, with ``documents d`` when the check names it and ``units_fts f``
    when ``vector`` (each join is a random read per candidate)."""
    out = "units u"
    if "d." in check_sql:
        out += " JOIN documents d ON d.id = u.document_id"
    if vector:
        out += " JOIN units_fts f ON f.rowid = u.rowid"
    return out
