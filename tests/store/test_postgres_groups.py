"""``( … OR … )`` groups match the same units on PostgreSQL as on SQLite (a real
server, see ``conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.store.test_postgres_parity import _notes, _pair

pytestmark = pytest.mark.postgres

GROUP_QUERIES = [
    "(budget OR tomatoes)",
    "(tomatoes sun OR refundable)",
    "(tomatoes -sun OR budget travel)",
    '("clocking work time" OR compost)',
    "+(budget OR tomatoes) sun",
    "tomatoes -(soil OR early)",
    "((budget OR travel) hardware OR loam)",
    "(東京 OR budget)",
    "(the budget OR a loam)",
    "(budget OR tomatoes) format:markdown",
    "-(budget OR tomatoes)",
]


def test_groups_match_the_same_units(tmp_path: Path, pg_url: str) -> None:
    root = _notes(tmp_path)
    lite, pg = _pair(tmp_path, pg_url)
    try:
        for c in (lite, pg):
            c.index([str(root)])
        matched = 0
        for q in GROUP_QUERIES:
            want = {h.unit_id for h in lite.search(q, limit=50).hits}
            assert {h.unit_id for h in pg.search(q, limit=50).hits} == want, q
            matched += bool(want)
        assert matched >= len(GROUP_QUERIES) - 2  # the queries are not vacuous
        # a group's units: AND within an alternative, OR between them
        both = {h.title for h in lite.search("(tomatoes sun OR refundable)", limit=50).hits}
        assert both == {"Gardening", "Travel"}
    finally:
        lite.close()
        pg.close()
