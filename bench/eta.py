"""How honest is the time left ``cairn index`` prints? Each progress line's ETA against
the time its phase really took.

Usage: python bench/eta.py [--src DIR ...] [--phase embed] [--env K=V ...] FOLDER...

Runs ``cairn index FOLDER... --db <temporary>`` with its standard error to a pipe (so
it prints the plain progress lines of :mod:`cairn.interfaces.cli._progress`, one every
5 s per phase), once per ``--src`` (a ``src`` folder put first on ``PYTHONPATH``: give
an older checkout's beside this one's to compare; all of them run at the same time, so
they share the machine's load), stamps every line with the seconds since the start,
and then, for each line of ``--phase`` that gives an ETA, prints the time the phase
really had left (from that line to the phase's ``done`` line), what the line said
(``48 s``, ``40 s to 1 min 5 s`` …), and whether the truth is inside the range (or how
far it is from it, as a share of the truth). The last row per source sums up: the
lines in range, the median and worst miss. Not part of the test suite; it embeds with
the configured model (``--env CAIRN_EMBED=static`` for a fast run).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UNITS = {"h": 3600, "min": 60, "s": 1}


def seconds(text: str) -> float:
    """``"2 min 5 s"`` → 125.0 (the formats of ``_progress.duration``)."""
    return float(sum(int(n) * UNITS[u] for n, u in re.findall(r"(\d+) (h|min|s)\b", text)))


def stamped(src: Path, folders: list[str], env: dict[str, str], db: Path) -> list[str]:
    """The run's standard error, each line prefixed with ``[seconds]``."""
    env = {**os.environ, **env, "PYTHONPATH": str(src)}
    cmd = [sys.executable, "-m", "cairn.interfaces.cli", "index", *folders, "--db", str(db)]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stderr is not None
    lines = [f"[{time.monotonic() - t0:.1f}] {line.rstrip()}" for line in proc.stderr]
    proc.wait()
    return lines


def judge(lines: list[str], phase: str) -> list[tuple[float, str, float | None]]:
    """``(truth seconds, what was said, miss as a share of the truth or None if inside)``
    for each line of ``phase`` before its ``done`` line."""
    rows = []
    for line in lines:
        m = re.match(rf"\[([\d.]+)\] {phase}: \d+/\d+ .*?(?:ETA (.*)|(done))$", line)
        if m:
            rows.append((float(m[1]), m[2] or "done"))
    if not rows or rows[-1][1] != "done":
        return []
    end = rows[-1][0]
    out: list[tuple[float, str, float | None]] = []
    for t, said in rows[:-1]:
        truth = end - t
        if said == "unknown":
            out.append((truth, said, 1.0))
            continue
        if " to " in said:
            low, high = (seconds(x) for x in said.split(" to "))
        elif said.startswith("at least"):
            low, high = seconds(said), float("inf")
        else:
            low = high = seconds(said)
        # the printed figures are rounded to the second: a second either side is inside
        miss = None if low - 1 <= truth <= high + 1 else min(
            abs(truth - low), abs(truth - high)) / max(truth, 1.0)
        out.append((truth, said, miss))
    return out


def main() -> None:
    """Run, judge and print (see the module's docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--src", action="append", type=Path, default=None)
    ap.add_argument("--phase", default="embed")
    ap.add_argument("--env", action="append", default=[], help="K=V for the runs")
    a = ap.parse_args()
    srcs: list[Path] = a.src or [ROOT / "src"]
    env = dict(kv.split("=", 1) for kv in a.env)
    logs: dict[int, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        runs = [threading.Thread(target=lambda i=i, s=s: logs.__setitem__(
            i, stamped(s, a.folders, env, Path(tmp) / f"{i}.db"))) for i, s in enumerate(srcs)]
        for r in runs:
            r.start()
        for r in runs:
            r.join()
    for i, src in enumerate(srcs):
        rows = judge(logs[i], a.phase)
        print(f"== {src} ({a.phase}: {len(rows)} lines with an ETA)")
        for truth, said, miss in rows:
            verdict = "inside" if miss is None else f"off by {miss:.0%}"
            print(f"  truth {truth:6.0f} s   said {said:30s} {verdict}")
        misses = [m or 0.0 for _, _, m in rows]
        if rows:
            inside = sum(m is None for _, _, m in rows)
            print(f"  {inside}/{len(rows)} inside; miss median {statistics.median(misses):.0%}, "
                  f"worst {max(misses):.0%}")


if __name__ == "__main__":
    main()
