"""Keyword query latency on the shared corpus.

Usage: python bench/query.py [--rounds N]

Indexes ../shared/corpus/org and ../shared/corpus/markdown into a temp SQLite file, then
runs a fixed list of queries N times (default 20) and prints p50 / p95 latency of
``Cairn.search`` (parse, BM25, hit building with snippets). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from cairn.app import Cairn

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


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    _need(ROOTS)
    with tempfile.TemporaryDirectory() as tmp:
        c = Cairn.open(db=Path(tmp) / "bench.db")
        c.index(ROOTS)
        units = c.store.counts()["units"]
        for q in QUERIES:
            c.search(q)
        times: list[float] = []
        for _ in range(args.rounds):
            for q in QUERIES:
                t0 = time.perf_counter()
                c.search(q, limit=10)
                times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        p95 = times[int(len(times) * 0.95) - 1]
        print(f"{units} units, {len(QUERIES)} queries x {args.rounds} rounds")
        print(
            f"keyword search latency: p50 {statistics.median(times):.2f} ms, p95 {p95:.2f} ms,"
            f" max {times[-1]:.2f} ms"
        )
        c.close()


if __name__ == "__main__":
    main()
