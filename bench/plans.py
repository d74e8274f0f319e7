"""Which indexes of the SQLite store the queries use: every SQL statement of a
workload traced, each distinct one EXPLAIN QUERY PLAN-ed, the indexes a plan searches
by listed, and those none does.

Usage: python bench/plans.py

The workload: a small vault (the fixture files of ``tests/store/test_compact_index.py``)
indexed, every graph query and a set of keyword searches (with filters, explanations
and expansion) answered, a file changed and one deleted, indexed again and answered
again, statistics and the integrity check. An index only counted in a ``SCAN`` (SQLite
picks the smallest index for ``count(*)``) is not a use. Not part of the test suite.
"""

from __future__ import annotations

import re
import sqlite3
import sys
import tempfile
from pathlib import Path

from cairn.app import Cairn
from cairn.config import Config
from cairn.store.sqlite import base as sqlite_base

HERE = Path(__file__).resolve().parent


def main() -> None:
    seen: dict[str, None] = {}
    connect = sqlite_base.SQLiteBase._connect

    def traced(self: sqlite_base.SQLiteBase) -> sqlite3.Connection:
        conn = connect(self)
        conn.set_trace_callback(lambda s: seen.setdefault(s.strip(), None))
        return conn

    sqlite_base.SQLiteBase._connect = traced  # type: ignore[method-assign]
    sys.path.insert(0, str(HERE.parent / "tests" / "store"))
    import test_compact_index as fixture

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        for rel, text in fixture.FILES.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, "utf-8")
        db = Path(tmp) / "index.db"
        with Cairn(Config(db_path=db)) as c:
            c.index([root], embed=False)
            fixture.answers(c, str(root))
            (root / "beta.md").write_text("# B\n\n[[Alpha]] x\n", "utf-8")
            (root / "gamma.md").unlink()
            c.index([root], embed=False)
            fixture.answers(c, str(root))
            for q in ("alpha prop:project=apollo", "kind:heading alpha", "path:sub",
                      "after:2020 alpha", "tag:garden -beta", "+plan", "type:project",
                      "format:org", "todo:open"):
                c.search(q, mode="keyword")
            c.stats()
            c.store.integrity_check()
        con = sqlite3.connect(db)
        used: dict[str, str] = {}
        planned = 0
        for sql in seen:
            if not re.match(r"(?i)(select|with|update|delete|insert)", sql):
                continue
            try:
                plan = con.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
            except sqlite3.Error:
                continue  # needs a temporary object, or a command of FTS5
            planned += 1
            for row in plan:
                for m in re.finditer(
                    r"SEARCH \w+(?: AS \w+)? USING (?:COVERING )?INDEX (\w+)", row[3]
                ):
                    used.setdefault(m.group(1), sql[:100])
        indexes = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type='index' AND sql IS NOT NULL "
            "ORDER BY tbl_name, name")]
        con.close()
    print(f"{len(seen)} distinct statements, {planned} planned")
    for name in indexes:
        print(f"{'used  ' if name in used else 'UNUSED'} {name:28} {used.get(name, '')}")


if __name__ == "__main__":
    main()
