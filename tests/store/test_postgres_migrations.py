"""Every shared schema migration renders for PostgreSQL and applies on a real server,
and an index left at any schema version is brought to the current one when opened."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from cairn.store.postgres.migrate import schema_migration
from cairn.store.sql.migrations import MIGRATIONS, SCHEMA_VERSION

pytestmark = pytest.mark.postgres


def _created_tables(version: int) -> list[str]:
    """The ordinary tables migration ``version`` creates (FTS5's virtual ones are
    SQLite's own)."""
    return re.findall(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", MIGRATIONS[version],
                      flags=re.I)


def _at_version(raw: Any, version: int) -> None:
    """Bring the empty database behind ``raw`` to schema ``version`` as PostgreSQL
    runs the migrations, and record that version as the store does."""
    from cairn.store.postgres.dialect import COMPAT_FUNCTIONS

    if not version:
        return
    for fn in COMPAT_FUNCTIONS:
        raw.execute(fn)
    for i in range(version):
        for stmt in schema_migration(i):
            raw.execute(stmt.sql, () if stmt.rendered else None)
    raw.execute("CREATE TABLE cairn_schema (version BIGINT NOT NULL)")
    raw.execute("INSERT INTO cairn_schema(version) VALUES (%s)", (version,))


@pytest.mark.parametrize("version", range(SCHEMA_VERSION))
def test_each_migration_applies_on_postgresql_and_an_index_at_its_version_opens(
    pg_url: str, version: int
) -> None:
    import psycopg

    from cairn.store import open_url
    from cairn.store.postgres.steps import PG_REPLACES

    with psycopg.connect(pg_url, autocommit=True) as raw:
        _at_version(raw, version)
        with raw.transaction():  # each statement alone first, named when it fails
            for stmt in schema_migration(version):
                try:
                    raw.execute(stmt.sql, () if stmt.rendered else None)
                except psycopg.Error as exc:
                    pytest.fail(f"migration {version} -> {version + 1}: "
                                f"{stmt.sql.strip()[:160]}\n{exc}")
            raise psycopg.Rollback()
    store = open_url(pg_url)  # the real open: this migration and every later one
    try:
        assert store.schema_version == SCHEMA_VERSION
        if version not in PG_REPLACES:
            missing = set(_created_tables(version)) - set(store.table_names())
            assert not missing
        assert store.counts()["documents"] == 0
    finally:
        store.close()


def test_an_index_at_schema_5_has_its_vocabulary_filed_when_opened(
    tmp_path: Path, pg_url: str
) -> None:
    """Migration 5 -> 6's work beyond its SQL runs on PostgreSQL too
    (``_after_migration``): the vocabulary of the notes already stored is filed from
    their rows, the same rows an index run writes."""
    import psycopg

    from cairn.app import Cairn
    from cairn.config import Config
    from cairn.store import open_url
    from cairn.store.sql.carried import VOCABULARY

    assert MIGRATIONS[VOCABULARY - 1].count("CREATE TABLE") == 1  # the 5 -> 6 entry
    root = tmp_path / "vault"
    root.mkdir()
    (root / "dune.md").write_text("---\ntags: [media/books]\ngenre: Sci-fi\n---\n# Dune\n\nsand\n",
                                  encoding="utf-8")
    (root / "tasks.org").write_text("#+TODO: TODO WAITING | DONE\n* WAITING Plumber visit\n",
                                    encoding="utf-8")
    query = "SELECT key, kind, name, value, source, unit_id FROM vocabulary ORDER BY 1, 2, 3, 4, 6"
    cfg = Config(db_path=tmp_path / "index.db", embed={"provider": "none"})
    with Cairn(cfg, store=open_url(pg_url)) as c:
        c.index([str(root)])
    with psycopg.connect(pg_url, autocommit=True) as raw:
        filed = raw.execute(query).fetchall()
        raw.execute("DROP TABLE vocabulary")  # the index as schema 5 left it
        raw.execute("UPDATE cairn_schema SET version = %s", (VOCABULARY - 1,))
    assert {r[:2] for r in filed} >= {("mediabook", "tag"), ("book", "tag"), ("scifi", "prop"),
                                      ("waiting", "todo")}
    store = open_url(pg_url)
    try:
        assert store.schema_version == SCHEMA_VERSION
    finally:
        store.close()
    with psycopg.connect(pg_url, autocommit=True) as raw:
        assert raw.execute(query).fetchall() == filed
