"""Indexing throughput on the shared corpus.

Usage: python bench/index.py [--repeat N] [ROOT ...]

Indexes ROOTs (default: ../shared/corpus/org and ../shared/corpus/markdown) into a fresh
temp SQLite file N times (default 3) and prints, as medians: cold-index files/s and MB/s,
and the time of a no-change re-index. Embeddings are left out (``embed=False``: their
cost is measured by ``bench/beir.py``); the graph update is included. Not part of the
test suite.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from cairn.app import Cairn

HERE = Path(__file__).resolve().parent
DEFAULT = [
    HERE.parents[1] / "shared" / "corpus" / "org",
    HERE.parents[1] / "shared" / "corpus" / "markdown",
]


def _need(paths: list[Path]) -> None:
    missing = [p for p in paths if not p.is_dir()]
    if missing:
        raise SystemExit(f"{missing[0]} is not beside this clone: pass folders to index")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("roots", nargs="*", type=Path, default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    _need(args.roots)
    cold: list[float] = []
    warm: list[float] = []
    files = size = 0
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            c = Cairn.open(db=Path(tmp) / "bench.db")
            t0 = time.perf_counter()
            run = c.index(args.roots, embed=False)
            cold.append(time.perf_counter() - t0)
            files = run.seen
            size = sum(r["size"] for r in c.store.db.execute("SELECT size FROM files").fetchall())
            t0 = time.perf_counter()
            again = c.index(embed=False)
            warm.append(time.perf_counter() - t0)
            assert again.changed == again.added == 0
            c.close()
    mb = size / 1e6
    med = statistics.median(cold)
    print(f"corpus: {files} files, {mb:.1f} MB ({', '.join(str(r) for r in args.roots)})")
    print(
        f"cold index: median {med:.2f} s  ({files / med:.0f} files/s, {mb / med:.2f} MB/s)"
        f"  runs: {', '.join(f'{t:.2f}' for t in cold)}"
    )
    print(
        f"no-change re-index: median {statistics.median(warm) * 1000:.0f} ms"
        f"  runs: {', '.join(f'{t * 1000:.0f}' for t in warm)}"
    )


if __name__ == "__main__":
    main()
