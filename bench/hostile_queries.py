"""Hostile and fuzzed queries: how long each takes, per search mode.

Usage::

    python bench/hostile_queries.py [--fuzz 600] [--check]

Indexes 30 small notes into a temporary folder (keyword only, unless ``CAIRN_EMBED``
says otherwise), then times every query of :data:`HOSTILE` in each mode and ``--fuzz``
random queries drawn from :data:`FUZZ_ALPHABET` (alternating keyword and hybrid), and
prints the slowest hostile query per mode and the fuzzed total. ``--check`` exits 1 when
a hostile query takes 5 s or more, or the fuzzed queries 60 s or more (the bounds that
once lived in ``tests/reliability/test_queries.py``, which checks that every such query
is answered; how fast is measured here).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

HOSTILE = {
    "lone surrogate filter": "format:\ud800",
    "surrogate-escaped byte": "format:\udcff",
    "lone surrogate word": "budget \udfff",
    "1,000 chars of quotes": '"x ' * 334,
    "5,000 chars of quotes": '"x ' * 1667,
    "100,000 characters": "x" * 100_000,
    "989 filters": " ".join(f"tag:t{i}" for i in range(989)),
    "5,000 words": "budget " * 5000,
    "a 3,000-token phrase": '"' + "x " * 1500 + '"',
    "nested quotes": '"""' * 500,
    "control characters": "\x00\x01\x1b[31m budget",
    "1,000 open parentheses": "(" * 1000,
    "500 nested groups": "(budget " * 250 + ")" * 250,
    "500 alternatives": "(" + " OR ".join(f"w{i}" for i in range(400)) + ")",
}
"""Queries a user (or a fuzzer) may type that stress the parser and the engines."""

FUZZ_ALPHABET = [
    '"', "-", ":", "tag", "x", " ", "(", ")", "*", "\\", "\ud800", "é", "の", "prop:",
    "before:", "path:", "NEAR", "OR", "AND", "^", "'", "\n", "\t",
]
"""The pieces random queries are made of."""


def fuzz_queries(n: int, seed: int = 11) -> Iterator[tuple[str, str]]:
    """``n`` random ``(query, mode)`` pairs, modes alternating keyword and hybrid."""
    rng = random.Random(seed)
    for i in range(n):
        q = "".join(rng.choice(FUZZ_ALPHABET) for _ in range(rng.randint(0, 60)))
        yield q, ("keyword", "hybrid")[i % 2]


def write_notes(folder: Path) -> None:
    """The 30 small notes the queries run against."""
    for i in range(30):
        (folder / f"n{i}.md").write_text(
            f"---\ntags: [t{i % 5}]\n---\n# Note {i}\n\nx budget review {i} x x\n", "utf-8"
        )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns a process exit code."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fuzz", type=int, default=600)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("CAIRN_EMBED", "none")
    from cairn.app import Cairn

    over = False
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_notes(folder)
        with Cairn.open(db=folder / "i.db") as c:
            c.index([folder])
            for mode in ("keyword", "semantic", "hybrid"):
                worst, name = 0.0, ""
                for key, query in HOSTILE.items():
                    t0 = time.perf_counter()
                    c.search(query, mode=mode)
                    took = time.perf_counter() - t0
                    if took > worst:
                        worst, name = took, key
                print(f"{mode:8s} slowest hostile query: {worst:.3f} s ({name})", flush=True)
                over |= worst >= 5
            t0 = time.perf_counter()
            for query, mode in fuzz_queries(args.fuzz):
                c.search(query, mode=mode)
            total = time.perf_counter() - t0
            print(f"{args.fuzz} fuzzed queries: {total:.2f} s", flush=True)
            over |= total >= 60
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 1 if args.check and over else 0


if __name__ == "__main__":
    sys.exit(main())
