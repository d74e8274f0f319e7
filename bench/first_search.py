"""In-process keyword search on an existing SQLite index: the first search of a new
``Cairn`` and warm latency, and how many FTS5 statements a search runs.

Usage: python bench/first_search.py --db INDEX [--rounds N] [--label TEXT]

Prints one line per measure:

- ``first``: the first ``Cairn.search`` after opening the index (what a new process
  pays beyond its imports; query understanding's vocabulary is part of it);
- ``judged``: p50 / p95 of warm keyword searches (limit 10) over the 118 judged queries
  of ``bench/notes/queries.jsonl``, ``--rounds`` times (default 3);
- ``title words``: the same over the 20 most frequent words of the index's document
  titles (every other one of the top 40): the searches whose lists hold many title-only
  chat preambles;
- ``statements``: the FTS5 ``MATCH`` statements one title-word search runs, and of them
  those restricted to documents by ``id:`` (the preamble settling), from SQLite's trace.

To compare two checkouts, run it with each one's ``src`` first on ``PYTHONPATH``,
alternating, on the same index. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import collections
import json
import sqlite3
import time
from pathlib import Path

from cairn.app import Cairn
from cairn.config import load_config

QUERIES = Path(__file__).resolve().parent / "notes" / "queries.jsonl"


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    con = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    counts = collections.Counter(
        w.lower() for (t,) in con.execute("SELECT title FROM documents") for w in (t or "").split()
    )
    con.close()
    words = [w for w, _ in counts.most_common(40)][::2]
    judged = [json.loads(line)["text"] for line in QUERIES.read_text("utf-8").splitlines() if line]
    cairn = Cairn(load_config(db=str(args.db)))
    t0 = time.perf_counter()
    cairn.search(judged[0], mode="keyword", limit=10)
    print(f"{args.label} first: {(time.perf_counter() - t0) * 1000:.1f} ms")
    for name, queries in (("judged", judged), ("title words", words)):
        lat: list[float] = []
        for _ in range(args.rounds):
            for q in queries:
                t = time.perf_counter()
                cairn.search(q, mode="keyword", limit=10)
                lat.append((time.perf_counter() - t) * 1000)
        print(f"{args.label} {name}: p50 {_pct(lat, 0.5):.1f} ms, p95 {_pct(lat, 0.95):.1f} ms"
              f" ({len(lat)} searches)")
    seen: list[str] = []
    db = cairn.store.db  # type: ignore[attr-defined]
    db.set_trace_callback(seen.append)
    for q in words:
        cairn.search(q, mode="keyword", limit=10)
    db.set_trace_callback(None)
    match = [s for s in seen if "MATCH" in s]
    inside = [s for s in match if "document_id = " in s]
    print(f"{args.label} statements: {len(match) / len(words):.2f} FTS5 MATCH per search,"
          f" {len(inside) / len(words):.2f} of them restricted to documents")
    cairn.close()


if __name__ == "__main__":
    main()
