"""PostgreSQL's own tables beyond the shared schema: the ``postgres`` component.

The shared migrations (:data:`cairn.store.sqlite.schema.MIGRATIONS`, rendered by
:mod:`cairn.store.postgres.dialect`) give both backends the same tables; what only
PostgreSQL has — BM25's inverted index and statistics, kept by triggers — is versioned
separately in ``components`` under :data:`PG_COMPONENT`, one step of :data:`PG_STEPS`
at a time, so it never moves the shared schema version.
"""

from __future__ import annotations

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

PG_TABLES = ("fts_stats", "fts_postings", "pg_vectors")
"""Tables derived on the server from the shared ones (never copied between stores)."""
