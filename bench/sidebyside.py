"""Two source trees side by side, alternating, in one run: cold index, no-change run,
one-file change and keyword latency on the shared Org+Markdown corpus.

Usage: python bench/sidebyside.py OLD_SRC NEW_SRC [--rounds N]

OLD_SRC / NEW_SRC are ``src`` folders of two checkouts (``git worktree add /tmp/old REV``
gives one). Each measurement runs in a fresh process with that tree first on
``PYTHONPATH`` and uses only the public API both trees share (``Cairn.open``,
``index(embed=False)``, ``search(mode="keyword")``), so the figures compare the code,
not the set-up. Prints one JSON line per tree and round, then the medians. Not part of
the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"

WORKER = r'''
import json, os, shutil, statistics, sys, tempfile, time
from pathlib import Path
from cairn.app import Cairn
SH = Path(sys.argv[1])
QUERIES = ["weekly review", "org mode agenda", "tag:daily", "python virtual environment",
           "graph view", "canvas cards", "sqlite full text", "todo:open", "emacs lisp macro",
           "obsidian sync settings"]
def main():
    with tempfile.TemporaryDirectory() as tmp:
        roots = []
        for name in ("org", "markdown"):
            shutil.copytree(SH / name, Path(tmp) / "c" / name)
            roots.append(Path(tmp) / "c" / name)
        size = sum(p.stat().st_size for r in roots for p in r.rglob("*") if p.is_file())
        c = Cairn.open(db=Path(tmp) / "i.db")
        t0 = time.perf_counter(); c.index(roots, embed=False); cold = time.perf_counter() - t0
        warm = []
        for _ in range(5):
            t0 = time.perf_counter(); c.index(embed=False); warm.append(time.perf_counter() - t0)
        leaf = next(p for p in sorted(roots[1].rglob("*.md")) if p.stat().st_size < 4000)
        one = []
        for i in range(5):
            leaf.write_text(leaf.read_text() + f"\nedit {i}\n")
            t0 = time.perf_counter(); c.index(embed=False); one.append(time.perf_counter() - t0)
        lat = []
        for _ in range(10):
            for q in QUERIES:
                t0 = time.perf_counter(); c.search(q, mode="keyword", limit=10)
                lat.append(time.perf_counter() - t0)
        lat.sort()
        print(json.dumps({"mb_s": size / 1e6 / cold, "cold_s": cold,
                          "nochange_ms": statistics.median(warm) * 1000,
                          "onefile_ms": statistics.median(one) * 1000,
                          "kw_p50_ms": lat[len(lat) // 2] * 1000,
                          "kw_p95_ms": lat[int(len(lat) * 0.95)] * 1000}))
        c.close()
if __name__ == "__main__":
    main()
'''


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    if not CORPUS.is_dir():
        raise SystemExit(f"{CORPUS} is not beside this clone")
    results: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for _ in range(args.rounds):
        for label, tree in (("old", args.old), ("new", args.new)):
            env = {**os.environ, "PYTHONPATH": str(tree.resolve()), "CAIRN_EMBED": "none"}
            out = subprocess.run(
                [sys.executable, "-c", WORKER, str(CORPUS)],
                env=env, capture_output=True, text=True, check=True,
            ).stdout.strip().splitlines()[-1]
            print(label, out, flush=True)
            results[label].append(json.loads(out))
    for key in ("cold_s", "mb_s", "nochange_ms", "onefile_ms", "kw_p50_ms", "kw_p95_ms"):
        old = statistics.median(r[key] for r in results["old"])
        new = statistics.median(r[key] for r in results["new"])
        print(f"{key:12} old {old:9.2f}  new {new:9.2f}  new/old {new / old:5.2f}")


if __name__ == "__main__":
    main()
