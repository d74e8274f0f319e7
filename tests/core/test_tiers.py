"""The test tiers: a bare ``pytest`` (the fast tier) leaves out every test that needs a
real PostgreSQL server, whether or not its module is marked ``postgres``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UNMARKED = "tests/store/test_postgres_understanding.py"  # uses pg_url, has no marker
MIXED = "tests/store/test_backend_registry.py"  # one test marked postgres, the rest not


def test_a_test_that_needs_postgresql_is_left_out_of_the_fast_tier() -> None:
    # a fresh pytest session collects the files as a developer's fast run does
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "--tier", "fast", UNMARKED, MIXED],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    fast = [ln for ln in res.stdout.splitlines() if "::" in ln]
    assert f"{MIXED}::test_no_code_but_the_registry_names_a_backend" in fast
    assert f"{MIXED}::test_a_postgresql_url_opens_the_postgres_backend" not in fast
    assert [t for t in fast if t.startswith(UNMARKED)] == []
    assert "(3 deselected)" in res.stdout  # the two tests of UNMARKED are there to leave out
