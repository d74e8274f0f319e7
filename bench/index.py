"""Indexing throughput on the shared corpus, with each step's share, a one-file change,
a no-change run and the index size per table.

Usage: python bench/index.py [--repeat N] [--workers N] [ROOT ...]

Copies ROOTs (default: ../shared/corpus/org and ../shared/corpus/markdown) to a temp
folder and, N times (default 3), indexes them into a fresh SQLite file with
``embed=False`` (embeddings are measured by ``bench/beir.py``; the graph is included),
then times a no-change run and a one-file change (a leaf note edited, graph included).
Prints medians: the whole cold ``cairn index`` in s, files/s and MB/s, the graph step's
seconds, the no-change and one-file times in ms, and the size of each table of the last
index. With ``--embed PROVIDER`` (e.g. ``static``, fast) one more cold run embeds with
that provider and its table sizes are printed too (``--json FILE`` writes every figure).
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from cairn.app import Cairn
from cairn.config import Config

HERE = Path(__file__).resolve().parent
DEFAULT = [
    HERE.parents[1] / "shared" / "corpus" / "org",
    HERE.parents[1] / "shared" / "corpus" / "markdown",
]


def _need(paths: list[Path]) -> None:
    missing = [p for p in paths if not p.is_dir()]
    if missing:
        raise SystemExit(f"{missing[0]} is not beside this clone: pass folders to index")


def _children_cpu() -> float:
    """CPU seconds of the finished child processes (the parse workers, once stopped)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def table_sizes(db: Path) -> list[tuple[str, int]]:
    """``(table or index, bytes)`` from SQLite's ``dbstat``, largest first."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute(
            "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    except sqlite3.OperationalError:  # SQLite built without dbstat
        rows = []
    con.close()
    return [(str(n), int(b)) for n, b in rows]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("roots", nargs="*", type=Path, default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=None, help="parsing processes")
    ap.add_argument("--embed", default="", help="also one run embedding with this provider")
    ap.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = ap.parse_args()
    _need(args.roots)
    if args.workers:
        os.environ["CAIRN_WORKERS"] = str(args.workers)
    os.environ.setdefault("CAIRN_EMBED", "none")
    cold: list[float] = []
    cpu_main: list[float] = []
    cpu_workers: list[float] = []
    graph: list[float] = []
    warm: list[float] = []
    one: list[float] = []
    files = size = 0
    sizes: list[tuple[str, int]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "corpus"
        roots = []
        for r in args.roots:
            shutil.copytree(r, work / r.name)
            roots.append(work / r.name)
        size = sum(p.stat().st_size for r in roots for p in r.rglob("*") if p.is_file())
        leaf = next(p for p in sorted(roots[-1].rglob("*.md")) if p.stat().st_size < 4000)
        for i in range(args.repeat):
            db = Path(tmp) / f"bench{i}.db"
            with Cairn(Config(db_path=db)) as c:
                t0 = time.perf_counter()
                c0 = time.process_time()
                w0 = _children_cpu()
                run = c.index(roots, embed=False)
                cold.append(time.perf_counter() - t0)
                cpu_main.append(time.process_time() - c0)
                cpu_workers.append(_children_cpu() - w0)
                files = run.seen
                graph.append(run.graph.seconds if run.graph else 0.0)
                t0 = time.perf_counter()
                again = c.index(embed=False)
                warm.append(time.perf_counter() - t0)
                assert again.changed == again.added == 0
                leaf.write_text(leaf.read_text(encoding="utf-8") + f"\nedit {i}\n", "utf-8")
                t0 = time.perf_counter()
                edited = c.index(embed=False)
                one.append(time.perf_counter() - t0)
                assert edited.changed == 1
            sizes = table_sizes(db)
        embedded: dict[str, object] = {}
        if args.embed:
            db = Path(tmp) / "embedded.db"
            os.environ["CAIRN_EMBED"] = args.embed
            with Cairn(Config(db_path=db)) as c:
                t0 = time.perf_counter()
                run = c.index(roots)
                took = time.perf_counter() - t0
                e = run.embedding
            os.environ["CAIRN_EMBED"] = "none"
            embedded = {
                "provider": args.embed,
                "seconds": round(took, 2),
                "chunks": e.chunks_added if e else 0,
                "embedded": e.embedded if e else 0,
                "sizes": table_sizes(db),
            }
    mb = size / 1e6
    med = statistics.median(cold)
    print(f"corpus: {files} files, {mb:.1f} MB ({', '.join(str(r) for r in args.roots)})")
    print(
        f"cold index: median {med:.2f} s  ({files / med:.0f} files/s, {mb / med:.2f} MB/s)"
        f"  runs: {', '.join(f'{t:.2f}' for t in cold)}"
    )
    print(f"  of which the graph step: median {statistics.median(graph):.2f} s")
    print(
        f"  CPU: main process median {statistics.median(cpu_main):.2f} s, parse workers "
        f"{statistics.median(cpu_workers):.2f} s (wall time depends on the load: "
        f"{os.getloadavg()[0]:.1f} now)"
    )
    print(
        f"no-change re-index: median {statistics.median(warm) * 1000:.0f} ms"
        f"  runs: {', '.join(f'{t * 1000:.0f}' for t in warm)}"
    )
    print(
        f"one-file change (graph included): median {statistics.median(one) * 1000:.0f} ms"
        f"  runs: {', '.join(f'{t * 1000:.0f}' for t in one)}"
    )
    total = sum(b for _n, b in sizes)
    print(f"index size: {total / 1e6:.1f} MB")
    for name, b in sizes[:15]:
        print(f"  {name:32} {b / 1e6:8.2f} MB")
    if embedded:
        esizes: list[tuple[str, int]] = embedded["sizes"]  # type: ignore[assignment]
        print(
            f"with embeddings ({embedded['provider']}): {embedded['seconds']} s, "
            f"{embedded['chunks']} chunks, {embedded['embedded']} texts embedded; "
            f"index size {sum(b for _n, b in esizes) / 1e6:.1f} MB"
        )
        for name, b in esizes[:15]:
            print(f"  {name:32} {b / 1e6:8.2f} MB")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "files": files,
                    "mb": mb,
                    "cold": cold,
                    "cpu_main": cpu_main,
                    "cpu_workers": cpu_workers,
                    "graph": graph,
                    "warm": warm,
                    "one": one,
                    "sizes": sizes,
                    "embedded": embedded,
                },
                indent=1,
            ),
            "utf-8",
        )


if __name__ == "__main__":
    main()
