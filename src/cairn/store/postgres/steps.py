"""PostgreSQL's own tables beyond the shared schema: the ``postgres`` component.

The shared migrations (:data:`cairn.store.sql.migrations.MIGRATIONS`, rendered by
:mod:`cairn.store.postgres.dialect`) give both backends the same tables; what only
PostgreSQL has — BM25's inverted index and statistics, kept by triggers — is versioned
separately in ``components`` under :data:`PG_COMPONENT`, one step of :data:`PG_STEPS`
at a time, so it never moves the shared schema version. :data:`PG_SCHEMA` and
:data:`PG_REPLACES` are the statements PostgreSQL runs beside, or instead of, a shared
migration.
"""

from __future__ import annotations

from cairn.store.postgres.dialect import STRFTIME_DAY

PG_SCHEMA: tuple[str, ...] = (
    # units_fts (virtual in SQLite): a plain table, a generated tsvector, a GIN index
    """
    CREATE TABLE units_fts (
        rowid BIGINT PRIMARY KEY,
        title TEXT NOT NULL DEFAULT '',
        outline_path TEXT NOT NULL DEFAULT '',
        tags TEXT NOT NULL DEFAULT '',
        body TEXT NOT NULL DEFAULT '',
        cjk TEXT NOT NULL DEFAULT '',
        doc tsvector GENERATED ALWAYS AS (
            setweight(to_tsvector('english', title), 'A') ||
            setweight(to_tsvector('english', outline_path), 'B') ||
            setweight(to_tsvector('english', tags), 'C') ||
            setweight(to_tsvector('english', body), 'D') ||
            setweight(to_tsvector('simple', cjk), 'D')) STORED
    );
    CREATE INDEX units_fts_doc ON units_fts USING gin(doc)
    """,
)
"""PostgreSQL's own statements, run after the shared migration that they belong to."""

PG_REPLACES: dict[int, str] = {
    # 2 -> 3: the ``meta`` column (SQLite rebuilds its FTS5 table; here a column is
    # added and the weighted vector recomputed with meta in weight class C, beside tags)
    2: """
    ALTER TABLE units_fts ADD COLUMN meta TEXT COLLATE "C" NOT NULL DEFAULT '';
    DROP INDEX units_fts_doc;
    ALTER TABLE units_fts DROP COLUMN doc;
    ALTER TABLE units_fts ADD COLUMN doc tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', title), 'A') ||
        setweight(to_tsvector('english', outline_path), 'B') ||
        setweight(to_tsvector('english', tags), 'C') ||
        setweight(to_tsvector('english', meta), 'C') ||
        setweight(to_tsvector('english', body), 'D') ||
        setweight(to_tsvector('simple', cjk), 'D')) STORED;
    CREATE INDEX units_fts_doc ON units_fts USING gin(doc);
    UPDATE runs SET config_hash = '';
    UPDATE documents SET content_hash = ''
    """,
    # 4 -> 5: SQLite's FTS5 table stops duplicating the units' text (PostgreSQL's
    # keeps it: its vector is computed from it); unused indexes are dropped
    4: """
    DROP INDEX IF EXISTS units_parent;
    DROP INDEX IF EXISTS units_org_id;
    DROP INDEX IF EXISTS unit_tags_tag;
    DROP INDEX IF EXISTS links_resolved_unit;
    DROP INDEX IF EXISTS documents_declared
    """,
}
"""Migrations whose shared (SQLite) statements PostgreSQL replaces with its own."""

PG_COMPONENT = "postgres"
"""The name, in ``components``, of PostgreSQL's own tables (:data:`PG_STEPS`)."""

_CLASSES = ("coalesce(cardinality(array_positions(e.weights, 'A')), 0), "
            "coalesce(cardinality(array_positions(e.weights, 'B')), 0), "
            "coalesce(cardinality(array_positions(e.weights, 'C')), 0), "
            "coalesce(cardinality(array_positions(e.weights, 'D')), 0)")
_POSTINGS_OF = ("SELECT e.lexeme, n.rowid, " + _CLASSES + ", length(n.doc) "
                "FROM new_rows n CROSS JOIN LATERAL unnest(n.doc) e")
_UNPOST = ("DELETE FROM fts_postings p USING old_rows o CROSS JOIN LATERAL unnest(o.doc) e "
           "WHERE p.lex = e.lexeme AND p.rowid = o.rowid")
_STATS_DELTA = ("UPDATE fts_stats SET units = units + d.n, lexemes = lexemes + d.l FROM "
                "(SELECT sum(n)::bigint AS n, sum(l)::bigint AS l FROM ("
                "SELECT count(*) AS n, coalesce(sum(length(doc)), 0) AS l FROM {new} nn UNION ALL "
                "SELECT -count(*), -coalesce(sum(length(doc)), 0) FROM {old} oo) x) d "
                "WHERE d.n <> 0 OR d.l <> 0")
_NONE = "(SELECT doc FROM units_fts WHERE false)"

PG_STEPS: tuple[tuple[str, ...], ...] = (
    # 1: BM25's inverted index and corpus statistics, kept exact on every write by
    # statement triggers on units_fts (transition tables: one pass per statement).
    # fts_postings holds, per (lexeme, unit), the lexeme's occurrences in each weight
    # class (title A, outline path B, tags and metadata C, body D) and the unit's
    # length in lexemes: a query reads the postings of its lexemes from one B-tree
    # (an index-only scan) instead of unnesting every matching unit's tsvector.
    # fts_stats is one row (units, total lexemes): BM25's N and mean length.
    (
        "CREATE TABLE fts_stats (units BIGINT NOT NULL, lexemes BIGINT NOT NULL)",
        "INSERT INTO fts_stats SELECT count(*), coalesce(sum(length(doc)), 0) FROM units_fts",
        "CREATE TABLE fts_postings (lex TEXT COLLATE \"C\" NOT NULL, rowid BIGINT NOT NULL, "
        "a SMALLINT NOT NULL, b SMALLINT NOT NULL, c SMALLINT NOT NULL, d SMALLINT NOT NULL, "
        "dl INTEGER NOT NULL)",
        "INSERT INTO fts_postings " + _POSTINGS_OF.replace("new_rows n", "units_fts n"),
        "ALTER TABLE fts_postings ADD PRIMARY KEY (lex, rowid) INCLUDE (a, b, c, d, dl)",
        f"""CREATE OR REPLACE FUNCTION cairn_fts_ins() RETURNS trigger LANGUAGE plpgsql
        AS $$ BEGIN INSERT INTO fts_postings {_POSTINGS_OF};
        {_STATS_DELTA.format(new="new_rows", old=_NONE)}; RETURN NULL; END $$""",
        f"""CREATE OR REPLACE FUNCTION cairn_fts_del() RETURNS trigger LANGUAGE plpgsql
        AS $$ BEGIN {_UNPOST};
        {_STATS_DELTA.format(new=_NONE, old="old_rows")}; RETURN NULL; END $$""",
        f"""CREATE OR REPLACE FUNCTION cairn_fts_upd() RETURNS trigger LANGUAGE plpgsql
        AS $$ BEGIN {_UNPOST}; INSERT INTO fts_postings {_POSTINGS_OF};
        {_STATS_DELTA.format(new="new_rows", old="old_rows")}; RETURN NULL; END $$""",
        "CREATE TRIGGER fts_ins AFTER INSERT ON units_fts REFERENCING NEW TABLE AS "
        "new_rows FOR EACH STATEMENT EXECUTE FUNCTION cairn_fts_ins()",
        "CREATE TRIGGER fts_del AFTER DELETE ON units_fts REFERENCING OLD TABLE AS "
        "old_rows FOR EACH STATEMENT EXECUTE FUNCTION cairn_fts_del()",
        "CREATE TRIGGER fts_upd AFTER UPDATE ON units_fts REFERENCING OLD TABLE AS "
        "old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cairn_fts_upd()",
    ),
)
"""PostgreSQL's own tables, functions and triggers beyond the shared schema, one step
per version of the ``postgres`` component (each statement run whole, not split)."""

REBUILD_FROM = 10_000
"""Units waiting for their postings at a commit from which, when they outnumber the
units already posted (a first bulk load, ``cairn store copy``), the postings' B-tree
is dropped and built again from sorted rows instead of being updated entry by entry
(a session may set ``cairn.fts_rebuild_from`` to move the threshold)."""

_FLUSH_INSERT = ("INSERT INTO fts_postings SELECT e.lexeme, n.rowid, " + _CLASSES
                 + ", length(n.doc) FROM fts_pending q JOIN units_fts n ON n.rowid = q.rowid "
                 "CROSS JOIN LATERAL unnest(n.doc) e ORDER BY 1, 2")
_PK = "ALTER TABLE fts_postings ADD CONSTRAINT fts_postings_pkey PRIMARY KEY (lex, rowid) " \
      "INCLUDE (a, b, c, d, dl)"
_UNPOST_POSTED = (
    # the old rows' postings, for those already posted (a row still pending has none)
    "WITH gone AS (DELETE FROM fts_pending q USING old_rows o WHERE q.rowid = o.rowid "
    "RETURNING q.rowid), posted AS (SELECT o.rowid, o.doc FROM old_rows o "
    "WHERE o.rowid NOT IN (SELECT rowid FROM gone)), "
    "unpost AS (DELETE FROM fts_postings p USING posted o CROSS JOIN LATERAL unnest(o.doc) e "
    "WHERE p.lex = e.lexeme AND p.rowid = o.rowid) "
    "UPDATE fts_stats SET units = units - d.n, lexemes = lexemes - d.l FROM "
    "(SELECT count(*) AS n, coalesce(sum(length(doc)), 0) AS l FROM posted) d WHERE d.n <> 0")
_PENDING_OF_NEW = "INSERT INTO fts_pending SELECT rowid FROM new_rows ON CONFLICT DO NOTHING"

PG_STEPS += (
    # 2: postings are written at commit, not per statement. The statement triggers
    # only note new rows in fts_pending; a deferred constraint trigger on fts_pending
    # (fired at COMMIT, once per pending row: the first does the work, the others find
    # their row gone) inserts every pending unit's postings in one statement, sorted
    # by (lexeme, unit), so each B-tree leaf is touched once per transaction instead of
    # once per unit — per-unit insertion made the postings' random page writes (and
    # the full-page images in the WAL after each checkpoint) grow with the table and
    # halved indexing throughput at 20,000 notes. Readers see postings and units
    # commit together. A bulk load (REBUILD_FROM) rebuilds the index.
    (
        "CREATE TABLE fts_pending (rowid BIGINT PRIMARY KEY)",
        f"""CREATE OR REPLACE FUNCTION cairn_fts_ins() RETURNS trigger LANGUAGE plpgsql
        AS $$ BEGIN {_PENDING_OF_NEW}; RETURN NULL; END $$""",
        f"""CREATE OR REPLACE FUNCTION cairn_fts_del() RETURNS trigger LANGUAGE plpgsql
        AS $$ BEGIN {_UNPOST_POSTED}; RETURN NULL; END $$""",
        f"""CREATE OR REPLACE FUNCTION cairn_fts_upd() RETURNS trigger LANGUAGE plpgsql
        AS $$ BEGIN {_UNPOST_POSTED}; {_PENDING_OF_NEW}; RETURN NULL; END $$""",
        f"""CREATE OR REPLACE FUNCTION cairn_fts_flush() RETURNS trigger LANGUAGE plpgsql
        AS $$ DECLARE waiting BIGINT; posted BIGINT; BEGIN
        IF NOT EXISTS (SELECT 1 FROM fts_pending WHERE rowid = NEW.rowid) THEN
            RETURN NULL;  -- flushed by an earlier pending row's trigger
        END IF;
        SELECT count(*) INTO waiting FROM fts_pending;
        SELECT units INTO posted FROM fts_stats;
        UPDATE fts_stats SET units = units + d.n, lexemes = lexemes + d.l FROM
            (SELECT count(*) AS n, coalesce(sum(length(n.doc)), 0) AS l FROM fts_pending q
             JOIN units_fts n ON n.rowid = q.rowid) d WHERE d.n <> 0;
        IF waiting >= coalesce(nullif(current_setting('cairn.fts_rebuild_from', true), '')
                               ::bigint, {REBUILD_FROM}) AND waiting > posted THEN
            PERFORM set_config('maintenance_work_mem', '256MB', true);
            ALTER TABLE fts_postings DROP CONSTRAINT fts_postings_pkey;
            {_FLUSH_INSERT};
            {_PK};
        ELSE
            {_FLUSH_INSERT};
        END IF;
        DELETE FROM fts_pending;
        RETURN NULL; END $$""",
        "CREATE CONSTRAINT TRIGGER fts_flush AFTER INSERT ON fts_pending DEFERRABLE "
        "INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION cairn_fts_flush()",
    ),
)

PG_TABLES: tuple[str, ...] = ("fts_stats", "fts_postings", "fts_pending", "pg_vectors")
"""Tables derived on the server from the shared ones (never copied between stores)."""

FROZEN_WEIGHTS = (10.0, 4.0, 3.0, 1.0)
"""The column weights (title, outline path, tags and metadata, body: classes A–D) the
stored term impacts are computed with: ``[search] weights``' defaults. A search with
other weights stays exact (:mod:`cairn.store.postgres.topk` scales its bound)."""

DRIFT = 0.05
"""The relative change of the mean unit length since the impacts were computed beyond
which a commit computes them all again (a full rebuild of ``fts_postings``)."""


def _counts(e: str) -> tuple[str, str, str, str]:
    return tuple(  # type: ignore[return-value]
        f"coalesce(cardinality(array_positions({e}.weights, '{w}')), 0)" for w in "ABCD")


def impact_sql(e: str, doc: str, prm: str) -> str:
    """The SQL of one posting's term impact, ``real``: BM25's saturated term frequency
    ``tfw·(k1+1) / (tfw + k1·(1−b+b·dl/avgdl))`` (k1 = 1.2, b = 0.75) for the unnested
    tsvector entry ``e`` of the vector ``doc`` (dl = its distinct lexemes), with the
    weights and mean length of the parameters row ``prm`` (``fts_params``). The same
    text is used to write and to delete a posting, so both compute the same value."""
    a, b, c, d = _counts(e)
    tfw = f"({a} * {prm}.wa + {b} * {prm}.wb + {c} * {prm}.wc + {d} * {prm}.wd)"
    return (f"({tfw} * 2.2 / ({tfw} + 1.2 * (0.25 + 0.75 * length({doc}) / "
            f"{prm}.avgdl)))::real")


_IMP_NEW = impact_sql("e", "n.doc", "prm")
_IMP_OLD = impact_sql("e", "o.doc", "prm")
_NEW_LEXEMES = (
    "INSERT INTO fts_lex(lex, df) SELECT DISTINCT e.lexeme, 0 FROM {src} "
    "CROSS JOIN LATERAL unnest(n.doc) e "
    "WHERE NOT EXISTS (SELECT 1 FROM fts_lex x WHERE x.lex = e.lexeme)")
_POST = (
    "WITH ins AS (INSERT INTO fts_postings(lex, imp, rowid) SELECT x.id, " + _IMP_NEW
    + ", n.rowid FROM {src} CROSS JOIN LATERAL unnest(n.doc) e "
    "JOIN fts_lex x ON x.lex = e.lexeme CROSS JOIN fts_params prm ORDER BY 1, 2, 3 "
    "RETURNING lex) UPDATE fts_lex SET df = fts_lex.df + c.n FROM "
    "(SELECT lex, count(*) AS n FROM ins GROUP BY lex) c WHERE fts_lex.id = c.lex")
_PENDING_SRC = "fts_pending q JOIN units_fts n ON n.rowid = q.rowid"
_ALL_SRC = "units_fts n"
_PK3 = "ALTER TABLE fts_postings ADD CONSTRAINT fts_postings_pkey PRIMARY KEY (lex, imp, rowid)"
_LIVE_AVG = "(SELECT lexemes::float8 / nullif(units, 0) FROM fts_stats)"
_UNPOST3 = (
    # the old rows' postings, for those already posted (a row still pending has none);
    # a posting is found by (lexeme, impact, unit): its impact computed again
    "WITH gone AS (DELETE FROM fts_pending q USING old_rows o WHERE q.rowid = o.rowid "
    "RETURNING q.rowid), posted AS (SELECT o.rowid, o.doc FROM old_rows o "
    "WHERE o.rowid NOT IN (SELECT rowid FROM gone)), "
    "unpost AS (DELETE FROM fts_postings p USING posted o CROSS JOIN LATERAL unnest(o.doc) e "
    "JOIN fts_lex x ON x.lex = e.lexeme CROSS JOIN fts_params prm "
    "WHERE p.lex = x.id AND p.imp = " + _IMP_OLD + " AND p.rowid = o.rowid RETURNING p.lex), "
    "df AS (UPDATE fts_lex SET df = fts_lex.df - c.n FROM "
    "(SELECT lex, count(*) AS n FROM unpost GROUP BY lex) c WHERE fts_lex.id = c.lex) "
    "UPDATE fts_stats SET units = units - d.n, lexemes = lexemes - d.l FROM "
    "(SELECT count(*) AS n, coalesce(sum(length(doc)), 0) AS l FROM posted) d WHERE d.n <> 0")
_REPOST_ALL = (
    # every impact computed again with the mean length of now
    f"UPDATE fts_params SET avgdl = coalesce({_LIVE_AVG}, 1.0)",
    "TRUNCATE fts_postings",
    "UPDATE fts_lex SET df = 0 WHERE df <> 0",
    _NEW_LEXEMES.format(src=_ALL_SRC),
    _POST.format(src=_ALL_SRC),
    "DELETE FROM fts_lex WHERE df = 0",
)

PG_STEPS += (
    # 3: impact-ordered postings for exact top-k BM25 without reading whole posting
    # lists (cairn.store.postgres.topk). A posting is (lexeme id, term impact, unit):
    # the impact is BM25's saturated term frequency with the weights FROZEN_WEIGHTS and
    # the mean unit length of fts_params (frozen at the last rebuild, which runs again
    # when the mean drifts by more than DRIFT); the B-tree on (lexeme, impact, unit) is
    # read backwards, best impact first, in growing blocks. Lexemes are ids (fts_lex,
    # with their document frequency, so idf needs no count) and the occurrences per
    # column are not stored: a candidate's exact score comes from its tsvector.
    (
        "DROP TABLE fts_postings",
        "CREATE TABLE fts_lex (id INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
        "lex TEXT COLLATE \"C\" NOT NULL UNIQUE, df INTEGER NOT NULL)",
        "CREATE TABLE fts_params (wa FLOAT8 NOT NULL, wb FLOAT8 NOT NULL, "
        "wc FLOAT8 NOT NULL, wd FLOAT8 NOT NULL, avgdl FLOAT8 NOT NULL)",
        "INSERT INTO fts_params VALUES ({}, {}, {}, {}, 1.0)".format(*FROZEN_WEIGHTS),
        "CREATE TABLE fts_postings (lex INTEGER NOT NULL, imp REAL NOT NULL, "
        "rowid BIGINT NOT NULL)",
        *_REPOST_ALL,
        _PK3,
        f"""CREATE OR REPLACE FUNCTION cairn_fts_del() RETURNS trigger LANGUAGE plpgsql
        AS $$ BEGIN {_UNPOST3}; RETURN NULL; END $$""",
        f"""CREATE OR REPLACE FUNCTION cairn_fts_upd() RETURNS trigger LANGUAGE plpgsql
        AS $$ BEGIN {_UNPOST3}; {_PENDING_OF_NEW}; RETURN NULL; END $$""",
        f"""CREATE OR REPLACE FUNCTION cairn_fts_flush() RETURNS trigger LANGUAGE plpgsql
        AS $$ DECLARE waiting BIGINT; posted BIGINT; drift BOOLEAN; BEGIN
        IF NOT EXISTS (SELECT 1 FROM fts_pending WHERE rowid = NEW.rowid) THEN
            RETURN NULL;  -- flushed by an earlier pending row's trigger
        END IF;
        SELECT count(*) INTO waiting FROM fts_pending;
        SELECT units INTO posted FROM fts_stats;
        UPDATE fts_stats SET units = units + d.n, lexemes = lexemes + d.l FROM
            (SELECT count(*) AS n, coalesce(sum(length(n.doc)), 0) AS l FROM fts_pending q
             JOIN units_fts n ON n.rowid = q.rowid) d WHERE d.n <> 0;
        SELECT abs(coalesce({_LIVE_AVG}, 1.0) / p.avgdl - 1) > {DRIFT} INTO drift
            FROM fts_params p;
        IF waiting >= coalesce(nullif(current_setting('cairn.fts_rebuild_from', true), '')
                               ::bigint, {REBUILD_FROM}) AND waiting > posted OR drift THEN
            PERFORM set_config('maintenance_work_mem', '256MB', true);
            ALTER TABLE fts_postings DROP CONSTRAINT fts_postings_pkey;
            {'; '.join(_REPOST_ALL)};
            {_PK3};
        ELSE
            {_NEW_LEXEMES.format(src=_PENDING_SRC)};
            {_POST.format(src=_PENDING_SRC)};
        END IF;
        DELETE FROM fts_pending;
        RETURN NULL; END $$""",
    ),
)

PG_TABLES = (*PG_TABLES, "fts_lex", "fts_params")


def _step4() -> tuple[str, ...]:
    from cairn.store.postgres.topk_sql import FUNCTION

    return (FUNCTION,)


PG_STEPS += (
    # 4: exact top-k BM25 in one server function (cairn.store.postgres.topk_sql):
    # one round trip per query instead of two to four per block
    _step4(),
)

FEW_UNPOSTED = 2_000
"""Units deleted or updated in one statement below which their postings are deleted by
key lookups (the planner, not knowing a transition table's size, would read all of
``fts_postings`` through a hash join to delete a small note's few postings); from it
on, the whole-table hash join is the quicker."""


def _unpost_by_size(then: str) -> str:
    """A trigger body deleting the old rows' postings (:data:`_UNPOST3`) by key lookups
    when they are few, by the planner's choice otherwise, then running ``then``. The two
    statements are planned apart (PL/pgSQL caches each one's plan, made under the join
    settings of its branch); the settings are put back before ``then``."""
    return f"""DECLARE few BOOLEAN; hj TEXT := current_setting('enable_hashjoin');
        mj TEXT := current_setting('enable_mergejoin'); BEGIN
        few := (SELECT count(*) FROM old_rows) < {FEW_UNPOSTED};
        IF few THEN
            PERFORM set_config('enable_hashjoin', 'off', true);
            PERFORM set_config('enable_mergejoin', 'off', true);
            {_UNPOST3};
            PERFORM set_config('enable_hashjoin', hj, true);
            PERFORM set_config('enable_mergejoin', mj, true);
        ELSE
            {_UNPOST3};
        END IF;
        {then} RETURN NULL; END"""


def step5() -> tuple[str, ...]:
    """Step 5's statements: the delete and update triggers' functions by
    :func:`_unpost_by_size` (with :data:`FEW_UNPOSTED` as it is when called)."""
    return (
        f"""CREATE OR REPLACE FUNCTION cairn_fts_del() RETURNS trigger LANGUAGE plpgsql
        AS $$ {_unpost_by_size("")} $$""",
        f"""CREATE OR REPLACE FUNCTION cairn_fts_upd() RETURNS trigger LANGUAGE plpgsql
        AS $$ {_unpost_by_size(_PENDING_OF_NEW + ";")} $$""",
    )


PG_STEPS += (
    # 5: a few units' postings deleted by key lookups (see FEW_UNPOSTED)
    step5(),
)


def step6() -> tuple[str, ...]:
    """Step 6's statements: the configuration and ``cairn_words`` of
    :mod:`cairn.store.postgres.words`, ``units_fts.doc`` computed with them (the
    table rewritten, its GIN index built again) and the postings, lexicon and
    statistics rebuilt from the new vectors."""
    from cairn.store.postgres.words import CONFIG_STATEMENTS, DOC_VECTOR, FTS_CONFIG, WORDS_FUNCTION

    return (
        "DROP INDEX units_fts_doc",
        "ALTER TABLE units_fts DROP COLUMN doc",
        # (gone already unless the step runs again over a database whose version was
        # set back)
        f"DROP TEXT SEARCH CONFIGURATION IF EXISTS {FTS_CONFIG}",
        "DROP TEXT SEARCH DICTIONARY IF EXISTS cairn_stem",
        *CONFIG_STATEMENTS,
        WORDS_FUNCTION,
        f"ALTER TABLE units_fts ADD COLUMN doc tsvector GENERATED ALWAYS AS ({DOC_VECTOR}) "
        "STORED",
        "SET LOCAL maintenance_work_mem = '256MB'",
        "CREATE INDEX units_fts_doc ON units_fts USING gin(doc)",
        "DELETE FROM fts_pending",
        "DELETE FROM fts_stats",
        "INSERT INTO fts_stats SELECT count(*), coalesce(sum(length(doc)), 0) FROM units_fts",
        "ALTER TABLE fts_postings DROP CONSTRAINT fts_postings_pkey",
        *_REPOST_ALL,
        _PK3,
        # the rewrite left units_fts without planner statistics, and autovacuum, which
        # counts changed rows, would not give it any (1.4M units: n_live_tup 0 after)
        "ANALYZE units_fts",
        "ANALYZE fts_postings",
        "ANALYZE fts_lex",
    )


PG_STEPS += (
    # 6: words split and folded as SQLite's unicode61 does, stop words kept
    # (cairn.store.postgres.words): hyphenated words, paths and "don't" match again
    step6(),
)

PG_STEPS += (
    # 7: strftime with 'localtime' (created:/modified: fall back to the file's day)
    (STRFTIME_DAY,),
)
