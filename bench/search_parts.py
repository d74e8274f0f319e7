"""Where a search's time goes, and what pgvector's over-fetch costs in agreement.

``python bench/search_parts.py URL_OR_DB [--mode hybrid] [--queries 60] [--seed 1]``
runs ``--queries`` searches of ``bench/scale.py``'s query generator (seed ``--seed``: the
seed its one-client figures use is 1) against an existing index — a PostgreSQL URL or a
SQLite file — and prints p50/p95 (ms) of the whole search and of its parts: the keyword
list (``Ranker._keyword``), the semantic list (``Ranker._semantic`` and the store's
``nearest``), ``unit_facts``, fusion (``Ranker._fuse``) and ranking (``Ranker.rank``).
A part called more than once per search (the keyword list settling preambles) counts
each call. The parts are timed by wrapping those methods in this process only.

``--overfetch 2,4 --against 10`` (PostgreSQL) instead runs each query's search once per
:data:`cairn.store.postgres.vectors.OVERFETCH` value and prints the mean and the least
share of each top 10 that the ``--against`` value's top 10 also holds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale  # bench/scale.py: the query generator
from cairn.app import Cairn
from cairn.config import Config
from cairn.search.rank import Ranker
from cairn.store import open_store, open_url


def _open(where: str) -> Cairn:
    cfg = Config(db_path=Path(where) if "://" not in where else Path("unused-parts.db"),
                 embed={"provider": "static"})
    store = open_url(where) if "://" in where else open_store(Path(where))
    return Cairn(cfg, store=store)


def _timed(cls: type, name: str, into: list[float]) -> None:
    """Replace ``cls.name`` by a wrapper adding each call's milliseconds to ``into``."""
    f: Callable[..., Any] = getattr(cls, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return f(*args, **kwargs)
        finally:
            into.append((time.perf_counter() - t) * 1000)

    setattr(cls, name, wrapper)


def _queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(scale._words(rng, rng.randint(1, 3))) for _ in range(n)]


def _p(xs: list[float]) -> str:
    xs = sorted(xs)
    return (f"p50 {statistics.median(xs):7.1f}  p95 {scale._pct(xs, 0.95):7.1f} ms  "
            f"calls {len(xs)}")


def parts(where: str, mode: str, n: int, seed: int) -> None:
    """Print the whole search's and each part's p50/p95 over ``n`` queries."""
    times: dict[str, list[float]] = defaultdict(list)
    for name, label in (("_keyword", "keyword list"), ("_semantic", "semantic list"),
                        ("_fuse", "fusion"), ("rank", "ranking")):
        _timed(Ranker, name, times[label])
    with _open(where) as c:
        _timed(type(c.store.vectors), "nearest", times["nearest"])
        _timed(type(c.store), "unit_facts", times["unit_facts"])
        c.search("warm up", mode=mode, limit=10)
        for v in times.values():
            v.clear()
        whole: list[float] = []
        for q in _queries(n, seed):
            t = time.perf_counter()
            c.search(q, mode=mode, limit=10)
            whole.append((time.perf_counter() - t) * 1000)
    print(f"{'search':14s} {_p(whole)}")
    for label, v in times.items():
        if v:
            print(f"{label:14s} {_p(v)}")


def overfetch(url: str, mode: str, n: int, seed: int, values: list[int], against: int) -> None:
    """Print how much of each top 10 with each over-fetch the ``against`` one holds."""
    from cairn.store.postgres import vectors

    qs = _queries(n, seed)
    tops: dict[int, list[set[str]]] = {}
    with _open(url) as c:
        for f in [*values, against]:
            vectors.OVERFETCH = f
            tops[f] = [{h.unit_id for h in c.search(q, mode=mode, limit=10).hits} for q in qs]
    for f in values:
        shares = [len(a & b) / max(1, len(b)) for a, b in zip(tops[f], tops[against],
                                                             strict=True)]
        print(f"{mode} over-fetch {f} against {against}: top-10 agreement mean "
              f"{statistics.fmean(shares):.4f}, least {min(shares):.2f} ({n} queries)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("index", help="a PostgreSQL URL or a SQLite index file")
    ap.add_argument("--mode", default="hybrid", choices=("keyword", "semantic", "hybrid"))
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--overfetch", help="comma-separated OVERFETCH values to compare")
    ap.add_argument("--against", type=int, default=10)
    args = ap.parse_args()
    if args.overfetch:
        overfetch(args.index, args.mode, args.queries, args.seed,
                  [int(x) for x in args.overfetch.split(",")], args.against)
    else:
        parts(args.index, args.mode, args.queries, args.seed)


if __name__ == "__main__":
    main()
