"""An optional component's tables (vectors, edges …) are created and migrated by
``ensure_component`` the same way on both backends: step by step, recorded in
``components``, idempotent, and an index holding a newer version than this cairn knows
is refused naming the component and both versions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.errors import StoreError
from cairn.store import Store, open_store, open_url

STEPS = ("CREATE TABLE garden_beds (name TEXT); CREATE TABLE garden_crops (name TEXT)",
         "CREATE TABLE garden_harvests (crop TEXT, kilos REAL)")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        opened = open_store(tmp_path / "index.db")
    else:
        opened = open_url(request.getfixturevalue("pg_url"))
    try:
        yield opened
    finally:
        opened.close()


def _version(store: Store, name: str) -> int:
    db = store.db  # type: ignore[attr-defined]
    return int(db.execute("SELECT version FROM components WHERE name=?", (name,)).fetchone()[0])


def test_a_component_is_created_step_by_step_and_once(store: Store) -> None:
    store.ensure_component("garden", STEPS[:1])
    assert _version(store, "garden") == 1
    store.ensure_component("garden", STEPS)
    store.ensure_component("garden", STEPS)
    assert _version(store, "garden") == 2
    db = store.db  # type: ignore[attr-defined]
    assert db.execute("SELECT count(*) FROM garden_harvests").fetchone()[0] == 0


def test_a_newer_component_is_refused_naming_it_and_both_versions(store: Store) -> None:
    store.ensure_component("garden", STEPS)
    with pytest.raises(StoreError, match=r"component 'garden' is at version 2, newer than "
                                         r"this cairn \(1\)"):
        store.ensure_component("garden", STEPS[:1])
