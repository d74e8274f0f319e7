"""The schema both backends share, as migrations in SQLite's dialect.

``MIGRATIONS[i]`` is a script of ``;``-separated statements bringing an index from
schema version ``i`` to ``i + 1`` (one entry per migration); SQLite runs it as written
(:mod:`cairn.store.sqlite.base`), PostgreSQL renders it through
:mod:`cairn.store.postgres.dialect` (:mod:`cairn.store.postgres.base`).
"""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    # 0 -> 1: the initial schema
    """
    CREATE TABLE roots (
        id TEXT PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        include TEXT NOT NULL DEFAULT '[]',
        exclude TEXT NOT NULL DEFAULT '[]',
        added TEXT NOT NULL
    );
    CREATE TABLE files (
        root_id TEXT NOT NULL REFERENCES roots(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime REAL NOT NULL,
        hash TEXT NOT NULL,
        format TEXT,
        status TEXT NOT NULL,
        reason TEXT,
        line INTEGER,
        PRIMARY KEY (root_id, path)
    );
    CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        root_id TEXT NOT NULL,
        path TEXT NOT NULL,
        key TEXT,
        format TEXT NOT NULL,
        title TEXT NOT NULL,
        metadata TEXT NOT NULL,
        tags TEXT NOT NULL,
        aliases TEXT NOT NULL,
        created TEXT,
        modified TEXT,
        visibility TEXT,
        type TEXT,
        declared_id TEXT,
        content_hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime REAL NOT NULL,
        warnings TEXT NOT NULL,
        FOREIGN KEY (root_id, path) REFERENCES files(root_id, path) ON DELETE CASCADE
    );
    CREATE INDEX documents_file ON documents(root_id, path);
    CREATE INDEX documents_declared ON documents(declared_id);
    CREATE TABLE units (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        parent_id TEXT,
        ordinal INTEGER NOT NULL,
        level INTEGER NOT NULL,
        kind TEXT NOT NULL,
        title TEXT NOT NULL,
        outline_path TEXT NOT NULL,
        body TEXT NOT NULL,
        tags TEXT NOT NULL,
        inherited_tags TEXT NOT NULL,
        properties TEXT NOT NULL,
        todo TEXT,
        todo_state TEXT,
        priority TEXT,
        timestamps TEXT NOT NULL,
        org_id TEXT,
        custom_id TEXT,
        declared_id TEXT,
        line_start INTEGER NOT NULL,
        line_end INTEGER NOT NULL,
        language TEXT,
        extra TEXT NOT NULL,
        role TEXT,
        time TEXT,
        alternate INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX units_document ON units(document_id, ordinal);
    CREATE INDEX units_parent ON units(parent_id);
    CREATE INDEX units_org_id ON units(org_id);
    CREATE TABLE unit_tags (
        unit_rowid INTEGER NOT NULL REFERENCES units(rowid) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        inherited INTEGER NOT NULL
    );
    CREATE INDEX unit_tags_tag ON unit_tags(tag);
    CREATE INDEX unit_tags_unit ON unit_tags(unit_rowid);
    CREATE TABLE links (
        id INTEGER PRIMARY KEY,
        unit_id TEXT NOT NULL REFERENCES units(id) ON DELETE CASCADE,
        document_id TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        kind TEXT NOT NULL,
        target TEXT NOT NULL,
        alias TEXT,
        anchor TEXT,
        line INTEGER,
        raw TEXT NOT NULL,
        resolved_document_id TEXT,
        resolved_unit_id TEXT,
        unresolved_reason TEXT
    );
    CREATE INDEX links_unit ON links(unit_id);
    CREATE INDEX links_document ON links(document_id);
    CREATE INDEX links_resolved_doc ON links(resolved_document_id);
    CREATE INDEX links_resolved_unit ON links(resolved_unit_id);
    CREATE TABLE attachments (
        root_id TEXT NOT NULL REFERENCES roots(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        PRIMARY KEY (root_id, path)
    );
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        started TEXT NOT NULL,
        finished TEXT,
        config_hash TEXT NOT NULL,
        seen INTEGER NOT NULL DEFAULT 0,
        added INTEGER NOT NULL DEFAULT 0,
        changed INTEGER NOT NULL DEFAULT 0,
        removed INTEGER NOT NULL DEFAULT 0,
        unchanged INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0,
        skipped INTEGER NOT NULL DEFAULT 0,
        failures TEXT NOT NULL DEFAULT '[]',
        warnings TEXT NOT NULL DEFAULT '[]',
        seconds REAL NOT NULL DEFAULT 0
    );
    CREATE VIRTUAL TABLE units_fts USING fts5(
        title, outline_path, tags, body, cjk,
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    """,
    # 1 -> 2: dream reports (cairn.maintain.dream): the last reports, newest by id
    """
    CREATE TABLE dream_reports (
        id TEXT PRIMARY KEY,
        created TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        checks TEXT NOT NULL,
        data TEXT NOT NULL
    );
    """,
    # 2 -> 3: a ``meta`` FTS column (frontmatter and property keys and values, TODO
    # keywords, tags: metadata searchable by plain words); FTS5 cannot add a column, so
    # the table is rebuilt with the old columns' text, and every document is marked to
    # be parsed and stored again by the next run (which fills ``meta``)
    """
    CREATE VIRTUAL TABLE units_fts_v2 USING fts5(
        title, outline_path, tags, body, cjk, meta,
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    INSERT INTO units_fts_v2(rowid, title, outline_path, tags, body, cjk, meta)
        SELECT rowid, title, outline_path, tags, body, cjk, '' FROM units_fts;
    DROP TABLE units_fts;
    ALTER TABLE units_fts_v2 RENAME TO units_fts;
    UPDATE runs SET config_hash = '';
    UPDATE documents SET content_hash = ''
    """,
    # 3 -> 4: a covering index of documents' content hashes, so finding what changed
    # since the last graph update reads the index, not every document row (a small
    # index run on a large root: cairn memory remember, cairn watch)
    """
    CREATE INDEX IF NOT EXISTS documents_hash ON documents(id, content_hash)
    """,
    # 4 -> 5: no duplicate text: ``units_fts`` becomes an external-content FTS5 table
    # over the view ``units_fts_source``, which reads a unit's title and body from
    # ``units`` and only what differs (normalised text, aliases, outline, tags, CJK
    # bigrams, metadata words) from ``units_fts_text`` (NULL: as in ``units``); the
    # index itself is rebuilt from the view (same tokens, same rowids); and the indexes
    # no query searches by go (EXPLAIN QUERY PLAN of every statement a run, a search
    # and the graph queries execute: bench/plans.py)
    """
    DROP INDEX IF EXISTS units_parent;
    DROP INDEX IF EXISTS units_org_id;
    DROP INDEX IF EXISTS unit_tags_tag;
    DROP INDEX IF EXISTS links_resolved_unit;
    DROP INDEX IF EXISTS documents_declared;
    CREATE TABLE units_fts_text (
        rowid INTEGER PRIMARY KEY,
        title TEXT,
        outline_path TEXT,
        tags TEXT,
        body TEXT,
        cjk TEXT,
        meta TEXT
    );
    INSERT INTO units_fts_text(rowid, title, outline_path, tags, body, cjk, meta)
        SELECT f.rowid, CASE WHEN f.title = u.title THEN NULL ELSE f.title END,
            nullif(f.outline_path, ''), nullif(f.tags, ''),
            CASE WHEN f.body = u.body THEN NULL ELSE f.body END,
            nullif(f.cjk, ''), nullif(f.meta, '')
        FROM units_fts f JOIN units u ON u.rowid = f.rowid;
    DROP TABLE units_fts;
    CREATE VIEW units_fts_source AS
        SELECT u.rowid AS rowid, coalesce(x.title, u.title) AS title,
            coalesce(x.outline_path, '') AS outline_path, coalesce(x.tags, '') AS tags,
            coalesce(x.body, u.body) AS body, coalesce(x.cjk, '') AS cjk,
            coalesce(x.meta, '') AS meta
        FROM units_fts_text x JOIN units u ON u.rowid = x.rowid;
    CREATE VIRTUAL TABLE units_fts USING fts5(
        title, outline_path, tags, body, cjk, meta,
        content = 'units_fts_source', content_rowid = 'rowid',
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    INSERT INTO units_fts(units_fts) VALUES ('rebuild')
    """,
    # 5 -> 6: what units carry, by the key a query phrase is looked up by (carried.py;
    # the rows already stored are filed by SQLBase._after_migration)
    """
    CREATE TABLE IF NOT EXISTS vocabulary (key TEXT NOT NULL, kind TEXT NOT NULL, name TEXT,
        value TEXT, source INTEGER, ord INTEGER, unit_id TEXT, document_id TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS vocabulary_key ON vocabulary(key, kind, name, value, source, ord);
    CREATE INDEX IF NOT EXISTS vocabulary_document ON vocabulary(document_id)
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)
