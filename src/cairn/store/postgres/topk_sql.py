"""Exact top-k BM25 in one server function: :func:`cairn.store.postgres.topk.top_k`'s
threshold algorithm as PL/pgSQL (``cairn_top_k``), so a query is one round trip.

The Python loop holds the interpreter lock while it keeps its candidates and makes two
to four round trips per block; with several clients in one process they queue for the
lock and for the server in turn, so under load it answers slower than the whole-list
read. Here the server runs the same rounds — a block of
each lexeme's postings best impact first (growing ×4), the best ``2·limit + 10``
candidates by upper bound scored exactly, candidates below the k-th best closed, the
stop rule — over arrays in the function's own memory, and returns the result.

The check (filters, phrases, ``-word``, alternates) is sent as SQL text with its
arguments bound into it by the client (``psycopg``'s client-side binding, which quotes
each value), since a function cannot take a variable parameter list.

The same constants (:data:`cairn.store.postgres.topk.MAX_POSTINGS` etc.) are passed on
every call, so a test switching top-k off switches this one off too.
"""

from __future__ import annotations

import math
from typing import Any

from cairn.store.postgres import topk

_SCORE = topk.exact_score_sql()
for _i in range(1, 8):
    _SCORE = _SCORE.replace("?", f"${_i}", 1)

MAX_TERMS = 8
"""The most lexemes the function takes (``search.TOPK_TERMS`` is 4); more: it gives up."""

_REST = "(" + " + ".join(
    f"CASE WHEN o.mask & {1 << i} = 0 THEN coalesce(rest[{i + 1}], 0) ELSE 0 END"
    for i in range(MAX_TERMS)) + ")"
"""Σ idf·θ over the lists a candidate was not read in (its bits in ``o.mask``), in list
order as the client loop adds them, without a subquery per candidate."""

FUNCTION = r"""
CREATE OR REPLACE FUNCTION cairn_top_k(
    t_lex int[], t_idf float8[], lim int, r float8,
    s_avgdl float8, s_wa float8, s_wb float8, s_wc float8, s_wd float8,
    s_lexemes text[], s_idf float8[], joins text, chk text, filtered boolean,
    max_postings bigint, min_pass float8, max_scored int, few_read bigint, first_block int)
RETURNS TABLE (uid text, score float8, rowid bigint)
LANGUAGE plpgsql STABLE AS $fn$
DECLARE
    n int := cardinality(t_lex);
    theta float8[];
    cur_imp real[];
    cur_row bigint[];
    done boolean[];
    -- candidates: rowid, Σ idf·impact over the lists read in, those lists (bits), open
    c_row bigint[] := '{}';
    c_part float8[] := '{}';
    c_mask int[] := '{}';
    c_open boolean[] := '{}';
    -- the best exact scores so far, best first (ties by rowid)
    b_row bigint[] := '{}';
    b_id text[] := '{}';
    b_score float8[] := '{}';
    tried bigint := 0;
    passed bigint := 0;
    nread bigint := 0;
    first_read bigint := -1;
    blk int;
    step int := 2 * lim + 10;
    first boolean := true;
    live int[];
    got int[];
    k int;
    rest float8[];
    unseen float8;
    kth float8;
    pick bigint[];
    n_cont int;
    room int;
    score_sql text;
    g_row bigint[];
    g_id text[];
    g_score float8[];
    bk int[];
    bimp real[];
    brow bigint[];
    l_imp real;
    l_row bigint;
    l_n int;
BEGIN
    IF n = 0 OR n > %(max_terms)s OR r = 'Infinity'::float8 OR r <> r THEN
        RETURN QUERY SELECT NULL::text, -1::float8, NULL::bigint; RETURN;
    END IF;
    theta := array_fill('Infinity'::float8, ARRAY[n]);
    cur_imp := array_fill('Infinity'::real, ARRAY[n]);
    cur_row := array_fill(9223372036854775807::bigint, ARRAY[n]);
    done := array_fill(false, ARRAY[n]);
    blk := greatest(first_block, step);
    score_sql := 'SELECT coalesce(array_agg(u.rowid), ''{}''), coalesce(array_agg(u.id), '
        || '''{}''), coalesce(array_agg(' || %(score)s || '), ''{}'') FROM ' || joins
        || ' WHERE u.rowid = ANY($8) AND ' || chk;
    LOOP
        IF nread > max_postings THEN
            RETURN QUERY SELECT NULL::text, -1::float8, NULL::bigint; RETURN;
        END IF;
        SELECT array_agg(i) INTO live FROM generate_series(1, n) i WHERE NOT done[i];
        -- one block of each live lexeme's postings, best impact first
        SELECT coalesce(array_agg(c.k), '{}'), coalesce(array_agg(p.imp), '{}'),
               coalesce(array_agg(p.rowid), '{}')
        INTO bk, bimp, brow FROM unnest(live) AS c(k) CROSS JOIN LATERAL (
            SELECT f.imp, f.rowid FROM fts_postings f WHERE f.lex = t_lex[c.k]
            AND (f.imp, f.rowid) < (cur_imp[c.k], cur_row[c.k])
            ORDER BY f.imp DESC, f.rowid DESC LIMIT blk) p;
        got := array_fill(0, ARRAY[n]);
        FOR k, l_imp, l_row, l_n IN
            SELECT DISTINCT ON (b.k) b.k, b.imp, b.rowid, count(*) OVER (PARTITION BY b.k)
            FROM unnest(bk, bimp, brow) AS b(k, imp, rowid) ORDER BY b.k, b.imp, b.rowid LOOP
            cur_imp[k] := l_imp;
            cur_row[k] := l_row;
            got[k] := l_n;
        END LOOP;
        nread := nread + cardinality(brow);
        IF first_read < 0 THEN first_read := nread; END IF;
        FOREACH k IN ARRAY live LOOP
            theta[k] := CASE WHEN got[k] = blk THEN cur_imp[k] ELSE 0 END;
            done[k] := got[k] < blk;
        END LOOP;
        -- merge the block into the candidates (a closed one stays closed)
        SELECT coalesce(array_agg(m.rowid), '{}'), coalesce(array_agg(m.part), '{}'),
               coalesce(array_agg(m.mask), '{}'), coalesce(array_agg(m.open), '{}')
        INTO c_row, c_part, c_mask, c_open FROM (
            SELECT x.rowid, sum(x.part) AS part, bit_or(x.mask) AS mask,
                   bool_and(x.open) AS open FROM (
                SELECT * FROM unnest(c_row, c_part, c_mask, c_open)
                    AS o(rowid, part, mask, open)
                UNION ALL
                SELECT b.rowid, t_idf[b.k] * b.imp, 1 << (b.k - 1), true
                FROM unnest(bk, bimp, brow) AS b(k, imp, rowid)) x GROUP BY x.rowid) m;
        SELECT array_agg(t_idf[i] * theta[i] ORDER BY i) INTO rest FROM generate_series(1, n) i;
        unseen := r * (SELECT sum(x) FROM unnest(rest) x);
        -- the best few open candidates by upper bound are scored exactly
        SELECT coalesce(array_agg(o.rowid), '{}') INTO pick FROM (
            SELECT o.rowid FROM unnest(c_row, c_part, c_mask, c_open) AS o(rowid, part, mask, open)
            WHERE o.open ORDER BY r * (o.part + %(rest)s) DESC
            LIMIT step) o;
        IF cardinality(pick) > 0 THEN
            EXECUTE score_sql INTO g_row, g_id, g_score
                USING s_avgdl, s_wa, s_wb, s_wc, s_wd, s_lexemes, s_idf, pick;
            tried := tried + cardinality(pick);
            passed := passed + cardinality(g_row);
            SELECT array_agg(o.open AND NOT o.rowid = ANY(pick) ORDER BY ord) INTO c_open
            FROM unnest(c_row, c_open) WITH ORDINALITY AS o(rowid, open, ord);
            SELECT coalesce(array_agg(s.rowid ORDER BY s.score DESC, s.rowid), '{}'),
                   coalesce(array_agg(s.id ORDER BY s.score DESC, s.rowid), '{}'),
                   coalesce(array_agg(s.score ORDER BY s.score DESC, s.rowid), '{}')
            INTO b_row, b_id, b_score FROM (
                SELECT * FROM (SELECT * FROM unnest(b_row, b_id, b_score) AS x(rowid, id, score)
                               UNION ALL
                               SELECT * FROM unnest(g_row, g_id, g_score)) y
                ORDER BY y.score DESC, y.rowid LIMIT lim) s;
        END IF;
        IF first AND filtered AND tried > 0 AND passed < min_pass * tried AND passed < lim THEN
            RETURN QUERY SELECT NULL::text, -1::float8, NULL::bigint; RETURN;
        END IF;
        first := false;
        kth := CASE WHEN cardinality(b_score) >= lim THEN b_score[lim]
                    ELSE '-Infinity'::float8 END;
        -- close for good the open candidates whose bound is below the k-th best
        SELECT array_agg(o.open AND r * (o.part + %(rest)s) >= kth
                   ORDER BY ord)
        INTO c_open FROM unnest(c_row, c_part, c_mask, c_open) WITH ORDINALITY
            AS o(rowid, part, mask, open, ord);
        SELECT count(*) INTO n_cont FROM unnest(c_open) o WHERE o;
        room := CASE WHEN nread < few_read THEN step ELSE max_scored END;
        IF (SELECT bool_and(d) FROM unnest(done) d) OR (kth > unseen AND n_cont <= room) THEN
            SELECT coalesce(array_agg(o.rowid), '{}') INTO pick
            FROM unnest(c_row, c_open) AS o(rowid, open) WHERE o.open;
            IF cardinality(pick) > 0 THEN
                EXECUTE score_sql INTO g_row, g_id, g_score
                    USING s_avgdl, s_wa, s_wb, s_wc, s_wd, s_lexemes, s_idf, pick;
                SELECT coalesce(array_agg(s.rowid ORDER BY s.score DESC, s.rowid), '{}'),
                       coalesce(array_agg(s.id ORDER BY s.score DESC, s.rowid), '{}'),
                       coalesce(array_agg(s.score ORDER BY s.score DESC, s.rowid), '{}')
                INTO b_row, b_id, b_score FROM (
                    SELECT * FROM (SELECT * FROM unnest(b_row, b_id, b_score)
                                       AS x(rowid, id, score)
                                   UNION ALL
                                   SELECT * FROM unnest(g_row, g_id, g_score)) y
                    ORDER BY y.score DESC, y.rowid LIMIT lim) s;
            END IF;
            RETURN QUERY SELECT x.id, x.score, x.rowid FROM unnest(b_row, b_id, b_score)
                WITH ORDINALITY AS x(rowid, id, score, ord) ORDER BY x.ord;
            RETURN QUERY SELECT NULL::text, nread::float8, first_read;
            RETURN;
        END IF;
        blk := blk * 4;
    END LOOP;
END $fn$
""".replace("%(score)s", "'" + _SCORE.replace("'", "''") + "'").replace(
    "%(rest)s", _REST).replace("%(max_terms)s", str(MAX_TERMS))
"""``cairn_top_k(...)``: rows ``(unit id, score, rowid)`` best first, then one row
``(NULL, postings read, postings of the first block)``; or one row ``(NULL, -1, NULL)``
when top-k gives up (the caller reads everything)."""


def top_k_server(db: Any, terms: topk.Terms, limit: int, r: float, score_args: list[Any],
                 check_sql: str, check_args: list[Any], *, filtered: bool
                 ) -> list[tuple[str, float]] | None:
    """:func:`cairn.store.postgres.topk.top_k` in one call of ``cairn_top_k`` (same
    arguments, same result). Records ``(postings read, of the first block)`` as
    ``db.topk_read``.

    Raises:
        StoreError: the server failed.
    """
    if not math.isfinite(r) or not terms.ids:
        return None
    from psycopg import ClientCursor

    from cairn.store.postgres.dialect import translate

    store = db._store
    check = translate(check_sql, store.primary_keys)
    if check_args:
        check = ClientCursor(db.raw).mogrify(check, tuple(check_args))
    else:
        check = check.replace("%%", "%")
    avgdl, wa, wb, wc, wd, lexemes, idf = score_args
    rows = db.raw.execute(
        "SELECT * FROM cairn_top_k(%s::int[], %s::float8[], %s::int, %s::float8, "
        "%s::float8, %s::float8, %s::float8, %s::float8, %s::float8, %s::text[], "
        "%s::float8[], %s::text, %s::text, %s::int <> 0, %s::bigint, %s::float8, %s::int, "
        "%s::bigint, %s::int)",
        (list(terms.ids), list(terms.idf), limit, r, float(avgdl), float(wa), float(wb),
         float(wc), float(wd), list(lexemes), [float(x) for x in idf],
         topk._joins(check_sql, True), check, filtered, topk.MAX_POSTINGS, topk.MIN_PASS,
         topk.MAX_SCORED, topk.FEW_READ, topk.FIRST_BLOCK)).fetchall()
    if rows and rows[-1][0] is None and float(rows[-1][1]) < 0:
        return None
    if rows and rows[-1][0] is None:
        db.topk_read = (int(rows[-1][1]), int(rows[-1][2]))
        rows = rows[:-1]
    return [(str(u), float(s)) for u, s, _ in rows]
