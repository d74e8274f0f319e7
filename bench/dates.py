"""Latency of date filters, OR lists, sorting and the agenda over an Org index.

Usage: ``python bench/dates.py [ORG_FOLDER] [--db FILE]`` — indexes the folder
(default ``../shared/corpus/org``, keyword only) into ``--db`` (default a temporary
file) and prints p50/max over 7 runs of each query, with a fixed today (2024-03-06).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from cairn.app import Cairn
from cairn.config import Config

QUERIES: list[tuple[str, dict[str, str]]] = [
    ("deadline:this-month", {}),
    ("ts:2023", {}),
    ("scheduled:soon todo:open", {}),
    ("closed:2020..2022 tag:work,home", {}),
    ("todo:open", {"sort": "priority,deadline"}),
    ("org mode", {}),
]


def main() -> None:
    """Index, then time each query and the agenda (milliseconds)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "folder", nargs="?", default=str(Path(__file__).parents[1] / "../shared/corpus/org")
    )
    ap.add_argument("--db", default=None)
    args = ap.parse_args()
    db = Path(args.db) if args.db else Path(tempfile.mkdtemp()) / "dates.db"
    with Cairn(Config(db_path=db)) as c:
        c.index([args.folder])
        print(f"{c.stats().units} units in {db}")
        for q, kw in QUERIES:
            times = []
            for _ in range(7):
                t = time.perf_counter()
                res = c.search(q, mode="keyword", today="2024-03-06", **kw)  # type: ignore[arg-type]
                times.append((time.perf_counter() - t) * 1000)
            print(
                f"{q!r:36} {kw!s:28} hits={len(res.hits):3} "
                f"p50={statistics.median(times):7.1f} ms max={max(times):7.1f} ms"
            )
        times = []
        for _ in range(7):
            t = time.perf_counter()
            agenda = c.agenda.days(days=7, today="2024-03-06")
            times.append((time.perf_counter() - t) * 1000)
        print(f"agenda --days 7: {len(agenda.items)} items p50={statistics.median(times):.1f} ms")


if __name__ == "__main__":
    main()
