"""CPU milliseconds per request of ``bench/serve.py``'s mix, in process (no HTTP, no
load generator): what a server spends on each request, and on catching up after an
index run, measured with the CPU clock of the thread that does the work (one BLAS
thread, as in a server), so that the other work on a shared machine moves it little
(wall-clock percentiles under load move a lot).

Usage::

    python bench/serve_cpu.py --db /tmp/corpus.db [--rounds 5] [--runs 5]
    python bench/serve_cpu.py --db /tmp/corpus.db --compare 2eef24c   # this tree, then REV

The index is copied to a temporary folder. Each round sends the 15 queries of
``bench/serve.py`` as keyword and as hybrid searches (limit 10), and a ``get`` and a
``backlinks`` of units and documents they found, through :class:`cairn.app.Cairn`
and the one serialiser (``to_data``, as the HTTP API answers); the first round warms
up and is not counted. Then ``--runs`` times: the 40 generated notes of
``bench/serve.py`` are rewritten and indexed (not counted), and the CPU of bringing the
server's state up to date is measured — the vector matrix patch and the count of
units waiting for a vector, which a server does in background threads
(:func:`cairn.app.serving.serve_mode`) — as the first hybrid search after the run less
a steady hybrid search. It prints CPU ms per request per kind (median over rounds) and
per index run, and the mix again with another connection committing before each request
(``*_after_commit_cpu_ms``: what a server re-indexing all along pays, each commit of its
index process making the readers' connections drop the pages they had cached).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as a server runs (serve_mode)
os.environ.setdefault("OMP_NUM_THREADS", "1")

from serve import QUERIES, copy_index, write_notes  # noqa: E402


def measure(db: Path, rounds: int, runs: int) -> dict[str, Any]:
    """The report for the index ``db`` (copied) with the ``cairn`` importable now."""
    from cairn.app import Cairn
    from cairn.config import load_config
    from cairn.model.serialize import to_data

    tmp = Path(tempfile.mkdtemp(prefix="cairn-serve-cpu-"))
    try:
        copy = tmp / "i.db"
        copy_index(db, copy)
        notes = tmp / "load-notes"
        write_notes(notes, 0)
        with Cairn(load_config(db=copy)) as cairn:
            cairn.index([notes])
            probe = [cairn.search(q, mode="keyword", limit=5).hits for q in QUERIES]
            units = [h.unit_id for hits in probe for h in hits]
            docs = list(dict.fromkeys(h.document_id for hits in probe for h in hits))
            writer = sqlite3.connect(copy, isolation_level=None)
            writer.execute("CREATE TABLE bench_touch (n INTEGER)")  # the copy's, not cairn's
            kinds = ("keyword", "hybrid", "get", "backlinks")
            per: dict[str, list[float]] = {k: [] for k in kinds}
            per.update({f"{k}_after_commit": [] for k in kinds})
            for after_commit in (False, True):
                for r in range(rounds + 1):
                    got: dict[str, list[float]] = {k: [] for k in kinds}

                    def timed(kind: str, fn: Any, touch: bool = after_commit,
                              got: dict[str, list[float]] = got) -> None:
                        if touch:  # another connection commits: the readers' caches go
                            writer.execute("INSERT INTO bench_touch VALUES (1)")
                        t0 = time.thread_time()
                        fn()
                        got[kind].append(time.thread_time() - t0)

                    for i, q in enumerate(QUERIES):
                        for mode in ("keyword", "hybrid"):
                            timed(mode, lambda q=q, mode=mode: json.dumps(to_data(
                                answer(cairn.search(q, mode=mode, limit=10), q))))
                        timed("get", lambda i=i: json.dumps(to_data(
                            cairn.doors.get(units[i % len(units)]))))
                        timed("backlinks", lambda i=i: json.dumps(to_data(
                            cairn.graph.backlinks(docs[i % len(docs)]))))
                    if r:  # the first round warms up
                        for k, v in got.items():
                            name = f"{k}_after_commit" if after_commit else k
                            per[name].append(statistics.mean(v) * 1000)
            writer.close()
            catch_up: list[float] = []
            for n in range(1, runs + 1):
                write_notes(notes, n)
                cairn.index([notes])
                t0 = time.thread_time()
                cairn.search(QUERIES[1], mode="hybrid", limit=10)
                first = time.thread_time() - t0
                t0 = time.thread_time()
                cairn.search(QUERIES[1], mode="hybrid", limit=10)
                steady = time.thread_time() - t0
                catch_up.append((first - steady) * 1000)
        return {
            **{f"{k}_cpu_ms": round(statistics.median(v), 2) for k, v in per.items()},
            "mix_cpu_ms": round(statistics.mean(statistics.median(per[k]) for k in kinds), 2),
            "mix_after_commit_cpu_ms": round(statistics.mean(
                statistics.median(per[f"{k}_after_commit"]) for k in kinds), 2),
            "catch_up_after_run_cpu_ms": round(statistics.median(catch_up), 1),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def answer(res: Any, query: str) -> dict[str, Any]:
    """What ``POST /v1/search`` answers for ``res``."""
    return {"query": query, "took_ms": res.took_ms, "notes": res.notes, "hits": res.hits}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="an index of ../shared/corpus")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--compare", metavar="REV", default=None,
                    help="also measure git revision REV's src (in a subprocess)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.compare is None:
        report = measure(args.db, args.rounds, args.runs)
        print(json.dumps(report) if args.json else json.dumps(report, indent=2))
        return 0
    old = Path(tempfile.mkdtemp(prefix="cairn-serve-cpu-rev-"))
    try:
        archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", args.compare, "src"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        out = {}
        for name, src in (("new", HERE.parent / "src"), (args.compare, old / "src")):
            done = subprocess.run(
                [sys.executable, __file__, "--db", str(args.db), "--rounds", str(args.rounds),
                 "--runs", str(args.runs), "--json"],
                env={**os.environ, "PYTHONPATH": str(src)},
                check=True, capture_output=True, text=True)
            out[name] = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(old, ignore_errors=True)
    print(f"{'CPU ms':<28}{args.compare:>12}{'new':>12}")
    for key in out["new"]:
        print(f"{key:<28}{out[args.compare][key]!s:>12}{out['new'][key]!s:>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
