"""Benchmark a re-index of a big chat export after one conversation changed.

Generates one ChatGPT export of N conversations (``bench/gen_chats.py``) and a copy in
which one conversation's title differs. For each source tree given (``--src``; default
this checkout's ``src``), a fresh process indexes the export into a new SQLite file
(the cold index), puts the changed copy in its place and indexes again; both are timed
in CPU seconds of that process (``time.process_time``; embeddings off) and in wall
seconds, with the process's peak resident memory (``ru_maxrss``) over both runs. The
export is written a conversation at a time (the same seed gives the same bytes), so
this process stays small at any N. With several trees the processes alternate, round by
round, so old and new code share the load.

Usage::

    python bench/chat_reindex.py [-n 2000] [--rounds 1] [--src OLD/src --src NEW/src]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_chats import write_export

HERE = Path(__file__).resolve()


def _child(db: Path, folder: Path, changed: Path) -> None:
    """Index ``folder`` cold, swap in ``changed``, index again; print CPU seconds."""
    from cairn.app import Cairn

    with Cairn.open(db=db) as cairn:
        t0, w0 = time.process_time(), time.perf_counter()
        cold = cairn.index([folder])
        t1, w1 = time.process_time(), time.perf_counter()
        shutil.copyfile(changed, folder / "conversations.json")
        again = cairn.index([folder])
        t2, w2 = time.process_time(), time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({
        "cold_cpu": t1 - t0, "one_changed_cpu": t2 - t1,
        "cold_wall": w1 - w0, "one_changed_wall": w2 - w1,
        "peak_rss_mib": peak, "worker_peak_rss_mib": workers,
        "cold_changed": cold.added + cold.changed, "again_changed": again.changed,
        "notes": [w.message for w in again.warnings if "documents changed" in w.message],
    }))


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--src", action="append", default=[],
                    help="a source tree holding the cairn package (repeatable)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(*(Path(p) for p in args.child))
        return
    srcs = args.src or [str(HERE.parents[1] / "src")]
    with tempfile.TemporaryDirectory() as tmp:
        # written a conversation at a time: this process stays small at any N
        export = write_export(Path(tmp) / "conversations.json", args.n)
        changed = write_export(Path(tmp) / "changed.json", args.n, retitle=args.n // 2)
        print(f"export: {args.n} conversations, {export.stat().st_size / 2**20:.1f} MiB")
        env = {**os.environ, "CAIRN_EMBED": "none"}
        for r in range(args.rounds):
            for i, src in enumerate(srcs):
                run = Path(tmp) / f"r{r}s{i}"
                folder = run / "chats"
                folder.mkdir(parents=True)
                shutil.copyfile(export, folder / "conversations.json")
                out = subprocess.run(
                    [sys.executable, str(HERE), "--child", str(run / "index.db"),
                     str(folder), str(changed)],
                    env={**env, "PYTHONPATH": src}, capture_output=True, text=True,
                    check=True,
                )
                res = json.loads(out.stdout.strip().splitlines()[-1])
                print(f"round {r + 1} {src}: cold {res['cold_cpu']:.1f} CPU s "
                      f"({res['cold_wall']:.1f} s wall), "
                      f"one changed {res['one_changed_cpu']:.1f} CPU s "
                      f"({res['one_changed_wall']:.1f} s wall), "
                      f"peak RSS {res['peak_rss_mib']:.0f} MiB "
                      f"(workers {res['worker_peak_rss_mib']:.0f} MiB) {res['notes']}")
                shutil.rmtree(run)


if __name__ == "__main__":
    main()
