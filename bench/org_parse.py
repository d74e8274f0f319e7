"""Org parse throughput: cairn's native parser against orgparse, in the same run.

Usage::

    .venv/bin/python bench/org_parse.py [--root ../shared/corpus/org] [--repeat 5]

Reads every ``.org`` file under ``--root`` once (decoded as UTF-8 with replacement),
then for each of ``--repeat`` rounds parses all of them with ``cairn.formats.org.parse``
and with ``orgparse.loads`` (touching the fields both extract, so orgparse's lazy parts
are paid for). Prints the median CPU seconds of the process (a loaded machine shifts
them less than wall-clock time), CPU seconds per MB and MB/s of each, and the ratio.
Run it with ``PYTHONPATH=OTHER/src`` to measure another tree. cairn also
extracts what orgparse does not (links, timestamps in text, blocks, drawers, body
text, code units); its figure includes all of that.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from cairn.formats.org import parse


def _touch_orgparse(root: Any) -> int:
    n = 0
    for node in root[1:]:
        _ = (node.heading, node.level, node.tags, node.todo, node.properties)
        _ = (node.scheduled, node.deadline, node.body)
        n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns a process exit code."""
    here = Path(__file__).resolve().parents[1]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=here.parent / "shared" / "corpus" / "org")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    try:
        import orgparse
    except ImportError:
        print("orgparse is not installed (pip install orgparse)", file=sys.stderr)
        return 2
    files = sorted(args.root.rglob("*.org"))
    texts = [(str(p.relative_to(args.root)), p.read_bytes().decode("utf-8", "replace"))
             for p in files]
    mb = sum(len(t.encode("utf-8")) for _, t in texts) / 1e6
    cairn_s: list[float] = []
    orgparse_s: list[float] = []
    units = headings = 0
    for _ in range(args.repeat):
        t0 = time.process_time()
        units = sum(len(parse(t, rel).units) for rel, t in texts)
        cairn_s.append(time.process_time() - t0)
        t0 = time.process_time()
        headings = sum(_touch_orgparse(orgparse.loads(t, filename=rel)) for rel, t in texts)
        orgparse_s.append(time.process_time() - t0)
    c, o = statistics.median(cairn_s), statistics.median(orgparse_s)
    print(f"corpus: {len(files)} files, {mb:.2f} MB, repeat {args.repeat} (medians)")
    print(f"cairn    : {c:.3f} CPU s  {c / mb:.3f} CPU s/MB  {mb / c:6.2f} MB/s  ({units} units)")
    print(f"orgparse : {o:.3f} CPU s  {o / mb:.3f} CPU s/MB  {mb / o:6.2f} MB/s  "
          f"({headings} headings)")
    print(f"ratio cairn/orgparse throughput: {o / c:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
