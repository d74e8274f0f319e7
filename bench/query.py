"""Keyword query latency on the shared corpus, and the work each query does.

Usage::

    python bench/query.py [--rounds N]
    python bench/query.py --db INDEX [--growth] [-q QUERY ...] --work [--limit 10]

Indexes ../shared/corpus/org and ../shared/corpus/markdown into a temp SQLite file (or
searches ``--db``, an existing index, e.g. one ``bench/growth.py`` built), then runs a
fixed list of queries (``--growth``: ``bench/growth.py``'s; ``-q``: these) N times
(default 20) and prints p50 / p95 latency of ``Cairn.search`` (parse, BM25, hit building
with snippets). Not part of the test suite.

``--work`` instead counts each query's work, after one warm-up search, slowest first:
CPU ms, the CPU ms of the store's BM25 ranking alone, SQLite VM steps (a progress
handler every 100 instructions, so the count is rounded to 100), the statements cairn
ran, the rows FTS5 scored (its own per-row reads of ``units_fts_docsize``, which BM25
needs) and the three statements that ran the most steps (the steps of FTS5's own
statements count to the statement that ran them).
"""

from __future__ import annotations

import argparse
import collections
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cairn.app import Cairn
from cairn.config import load_config
from cairn.search.query import parse_query
from cairn.store.sqlite import base as sqlite_base

HERE = Path(__file__).resolve().parent
ROOTS = [
    HERE.parents[1] / "shared" / "corpus" / "org",
    HERE.parents[1] / "shared" / "corpus" / "markdown",
]
QUERIES = [
    "zettelkasten",
    "property inheritance",
    "how do I schedule a repeating task",
    "tag:daily",
    "todo:open",
    "format:org babel src block",
    "callout foldable",
    "org-roam buffer",
    "C++",
    '"unbalanced',
    "state-of-the-art",
    "全文検索",
    "ラベル",
    "link to a heading in another note",
    "export to html with css",
    "tag:emacs -tag:doom",
    "path:worg/ agenda",
    "the",
    "a b c d e f g",
    "capture template",
]


def _need(paths: list[Path]) -> None:
    missing = [p for p in paths if not p.is_dir()]
    if missing:
        raise SystemExit(f"{missing[0]} is not beside this clone: pass folders to index")


_STEP = 100


class Counted:
    """SQLite work on every connection the store opens from now on."""

    def __init__(self) -> None:
        self.steps = 0
        self.statements = 0
        self.fts_rows = 0
        self.by_statement: collections.Counter[str] = collections.Counter()
        self._current = ""

    def clear(self) -> None:
        self.steps = self.statements = self.fts_rows = 0
        self.by_statement.clear()

    def tick(self) -> int:
        self.steps += _STEP
        self.by_statement[self._current] += _STEP
        return 0

    def trace(self, sql: str) -> None:
        if sql.startswith("-- "):  # a statement FTS5 runs itself
            self.fts_rows += "_docsize" in sql
            return
        self.statements += 1
        self._current = " ".join(sql.split())[:110]


@contextmanager
def counting() -> Iterator[Counted]:
    """Count the work of every connection :class:`SQLiteBase` opens inside."""
    counted = Counted()
    connect = sqlite_base.SQLiteBase._connect

    def counting_connect(self: sqlite_base.SQLiteBase) -> sqlite3.Connection:
        conn = connect(self)
        conn.set_progress_handler(counted.tick, _STEP)
        conn.set_trace_callback(counted.trace)
        return conn

    sqlite_base.SQLiteBase._connect = counting_connect  # type: ignore[method-assign]
    try:
        yield counted
    finally:
        sqlite_base.SQLiteBase._connect = connect  # type: ignore[method-assign]


def work(c: Cairn, queries: list[str], counted: Counted, limit: int) -> None:
    """Print each query's work, slowest first, beside the CPU of the store's ranking
    alone (``search_text`` of the parsed query, ``limit`` + 10 deep, as the search
    asks it first)."""
    rows = []
    weights = c.config.search.weights
    for q in queries:
        c.search(q, mode="keyword", limit=limit)
        counted.clear()
        t0 = time.process_time()
        c.search(q, mode="keyword", limit=limit)
        ms = (time.process_time() - t0) * 1000
        rows.append((ms, q, counted.steps, counted.statements, counted.fts_rows,
                     counted.by_statement.most_common(3)))
        tq = parse_query(q).for_store()
        t0 = time.process_time()
        c.store.search_text(tq, limit=limit + 10, weights=weights)
        rows[-1] += ((time.process_time() - t0) * 1000,)
    print("CPU ms | ranking alone ms | VM steps | statements | FTS5 rows scored | query")
    for ms, q, steps, statements, fts_rows, top, alone in sorted(rows, reverse=True):
        print(f"{ms:7.1f} | {alone:7.1f} | {steps:>11,} | {statements:4} | {fts_rows:>8,}"
              f" | {q!r}")
        for sql, n in top:
            print(f"{'':10}{n:>11,}  {sql}")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--db", type=Path, default=None, help="search this index as it is")
    ap.add_argument("--growth", action="store_true", help="bench/growth.py's queries")
    ap.add_argument("-q", "--query", action="append", default=[])
    ap.add_argument("--work", action="store_true", help="count each query's work")
    ap.add_argument("--limit", type=int, default=10)
    args = ap.parse_args()
    queries = list(QUERIES)
    if args.growth:
        from growth import QUERIES as GROWTH

        queries = list(GROWTH)
    queries = args.query or queries
    with tempfile.TemporaryDirectory() as tmp, counting() as counted:
        if args.db is not None:
            c = Cairn(load_config(db=args.db), create=False)
        else:
            _need(ROOTS)
            c = Cairn.open(db=Path(tmp) / "bench.db")
            c.index(ROOTS)
        if args.work:
            work(c, queries, counted, args.limit)
            c.close()
            return
        units = c.store.counts()["units"]
        for q in queries:
            c.search(q)
        times: list[float] = []
        for _ in range(args.rounds):
            for q in queries:
                t0 = time.perf_counter()
                c.search(q, limit=args.limit)
                times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        p95 = times[int(len(times) * 0.95) - 1]
        print(f"{units} units, {len(queries)} queries x {args.rounds} rounds")
        print(
            f"keyword search latency: p50 {statistics.median(times):.2f} ms, p95 {p95:.2f} ms,"
            f" max {times[-1]:.2f} ms"
        )
        c.close()


if __name__ == "__main__":
    main()
