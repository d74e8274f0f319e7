"""Every shared schema migration renders for PostgreSQL and applies on a real server,
and an index left at any schema version is brought to the current one when opened."""

from __future__ import annotations

import re
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
