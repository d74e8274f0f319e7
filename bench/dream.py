"""``cairn dream`` on the shared corpus index: cold (every check runs) and unchanged
(the last report is reused), each in a new process as a user (or cron) runs it.

Usage: python bench/dream.py [--rounds N] [--db PATH]

The corpus (org, markdown, okf; chats left out) is copied to a scratch folder and
indexed without embeddings into ``--db`` if it does not exist yet; the corpus itself is
never written. "cold" clears the stored reports before each round; "unchanged" runs
again on the same index. Prints p50/min/max wall seconds and the report's own
``seconds``; also per check (one ``--only`` run each, cold). Not part of the test suite;
the machine's load counts (print ``uptime`` beside the figures).
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

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
CORPUS = HERE.parents[1] / "shared" / "corpus"
ENV = {**os.environ, "PYTHONPATH": str(SRC), "CAIRN_EMBED": "none"}
CHECKS = ("stale", "broken", "orphans", "thin", "duplicates", "entities", "contradictions",
          "integrity", "tags")


def _cli(db: Path, *args: str) -> tuple[float, dict[str, object]]:
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "cairn.interfaces.cli", *args, "--db", str(db)],
                         env=ENV, capture_output=True, text=True, check=True)
    return time.perf_counter() - t, json.loads(out.stdout) if "--json" in args else {}


def _clear(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM dream_reports")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--db", type=Path, default=Path(tempfile.gettempdir()) / "cairn-dream-bench"
                    / "index.db")
    a = ap.parse_args()
    db: Path = a.db
    if not db.exists():
        scratch = db.parent / "corpus"
        for part in ("org", "markdown", "okf"):
            shutil.copytree(CORPUS / part, scratch / part, dirs_exist_ok=True)
        subprocess.run([sys.executable, "-m", "cairn.interfaces.cli", "index",
                        *(str(scratch / p) for p in ("org", "markdown", "okf")),
                        "--no-embed", "--db", str(db)], env=ENV, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(f"index {db} ({db.stat().st_size / 1e6:.1f} MB); load: {os.getloadavg()}")
    for label, cold in (("cold", True), ("unchanged", False)):
        walls, own = [], []
        for _ in range(a.rounds):
            if cold:
                _clear(db)
            wall, data = _cli(db, "dream", "--json")
            rep = data["report"]
            assert isinstance(rep, dict)
            assert rep["unchanged"] is (not cold)
            walls.append(wall)
            own.append(float(rep["seconds"]))
        print(f"{label:10s} wall p50 {statistics.median(walls):.2f} s (min {min(walls):.2f}, "
              f"max {max(walls):.2f}); in-process {statistics.median(own):.2f} s; "
              f"{rep['summary']['findings']} findings")  # type: ignore[index]
    for check in CHECKS:
        _clear(db)
        wall, data = _cli(db, "dream", "--only", check, "--json")
        rep = data["report"]
        assert isinstance(rep, dict)
        print(f"  --only {check:15s} {rep['seconds']:.2f} s in-process, "
              f"{rep['counts'][check]} findings")  # type: ignore[index]


if __name__ == "__main__":
    main()
