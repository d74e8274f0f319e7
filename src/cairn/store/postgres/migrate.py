"""The shared schema migrations (:data:`cairn.store.sql.migrations.MIGRATIONS`) as
PostgreSQL runs them: each statement rendered by :mod:`cairn.store.postgres.dialect`
(FTS5's virtual tables left out: PostgreSQL's keyword index is its own), or replaced
by PostgreSQL's own where the shared DDL has no rendering
(:data:`cairn.store.postgres.steps.PG_REPLACES`), then PostgreSQL's additions
(:data:`cairn.store.postgres.steps.PG_SCHEMA`).
"""

from __future__ import annotations

from typing import NamedTuple

from cairn.store.postgres.dialect import translate, translate_trigger
from cairn.store.postgres.steps import PG_REPLACES, PG_SCHEMA
from cairn.store.sql.migrations import MIGRATIONS


class Statement(NamedTuple):
    """One statement of a migration, ready for the server."""

    sql: str
    rendered: bool
    """Rendered from the shared SQL: run with an (empty) parameter list, as its ``%``
    are escaped; PostgreSQL's own statements run without one."""


def _split(script: str) -> list[str]:
    return [s for s in script.split(";") if s.strip()]


def schema_migration(i: int) -> list[Statement]:
    """The PostgreSQL statements that bring the shared schema from version ``i`` to
    ``i + 1``, in order.

    Raises:
        IndexError: there is no migration ``i``.
        ValueError: a shared statement the dialect cannot render.
    """
    script = MIGRATIONS[i]
    if i in PG_REPLACES:
        return [Statement(s, False) for s in _split(PG_REPLACES[i])]
    out: list[Statement] = []
    for stmt in _split(script):
        if "VIRTUAL TABLE" in stmt.upper():
            continue
        if stmt.lstrip()[:16].upper().startswith("CREATE TRIGGER"):
            out += [Statement(s, True) for s in translate_trigger(stmt)]
        else:
            # a migration runs before the tables' primary keys are read: none known
            out.append(Statement(translate(stmt, {}), True))
    if i < len(PG_SCHEMA):
        out += [Statement(s, False) for s in _split(PG_SCHEMA[i])]
    if i == 0:
        # SQLite's implicit rowid, which the shared SQL orders runs by
        out.append(Statement("ALTER TABLE runs ADD COLUMN rowid BIGSERIAL", False))
    return out
