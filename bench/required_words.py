"""Keyword search with a required common word (``+word``), beside the plain word.

Usage: python bench/required_words.py [--db FILE] [--rounds N] [--top K]

Indexes ../shared/corpus/org and ../shared/corpus/markdown into a temp SQLite file
(``--db``: an existing index instead, opened read-only), finds the K commonest words of
the units' text (default 5), then times ``Cairn.search`` in keyword mode for ``w``,
``+w``, ``+w +v`` (the two commonest) and ``+w other`` N times each (default 10), and
prints the median and maximum in ms. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from cairn.app import Cairn
from cairn.config import Config

HERE = Path(__file__).resolve().parent
ROOTS = [
    HERE.parents[1] / "shared" / "corpus" / "org",
    HERE.parents[1] / "shared" / "corpus" / "markdown",
]


def _commonest(c: Cairn, k: int) -> list[str]:
    """The ``k`` words in the most units (a crude count over the stored text)."""
    df: Counter[str] = Counter()
    for (body,) in c.store.db.execute("SELECT body FROM units"):  # type: ignore[attr-defined]
        df.update(set(re.findall(r"[a-z]{2,}", (body or "").lower())))
    return [w for w, _ in df.most_common(k)]


def _time(c: Cairn, q: str, rounds: int) -> tuple[float, float]:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        c.search(q, mode="keyword", limit=10)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), max(times)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--db", type=Path)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--top", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.db:
            c = Cairn(Config(db_path=args.db, embed={"provider": "none"}), create=False)
        else:
            c = Cairn(Config(db_path=Path(tmp) / "bench.db", embed={"provider": "none"}))
            c.index([str(r) for r in ROOTS], embed=False)
        words = _commonest(c, args.top)
        queries = [q for w in words for q in (w, f"+{w}")]
        queries += [f"+{words[0]} +{words[1]}", f"+{words[0]} agenda"]
        for q in queries:
            c.search(q, mode="keyword", limit=10)
        print(f"{'query':24} {'p50 ms':>8} {'max ms':>8}")
        for q in queries:
            p50, worst = _time(c, q, args.rounds)
            print(f"{q:24} {p50:8.1f} {worst:8.1f}")
        c.close()


if __name__ == "__main__":
    main()
