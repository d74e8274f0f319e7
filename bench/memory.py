"""Agent memory at scale: remember and recall latency, and one maintenance cycle.

Usage: python bench/memory.py [--memories N] [--concepts N] [--rounds N] [--dir DIR]
       [--embed MODE]

Generates a bundle of N memories (default 10,000; consolidated, in
``memories/subsumed/``) and N concepts (default 2,000; each the source of N/2,000
memories, with 1–3 typed relations), indexes it once (``CAIRN_EMBED`` defaults to
``none``: keyword recall; ``--embed static`` for hybrid), then in this one process:

- ``remember``: ``Cairn.memory.remember`` ROUNDS times (write, log, index the two files);
- ``recall``: ``Cairn.memory.recall`` ROUNDS times, over varied queries;
- ``maintain``: one full ``Cairn.memory_maintain`` cycle (every seal recomputed,
  symmetry, truth maintenance, decay of every unrecalled concept: ~2,000 files rewritten
  and re-indexed).

Prints p50/p95 in milliseconds and the cycle's seconds, and ``os.getloadavg()``. Not
part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

WORDS = [
    "kiln",
    "glaze",
    "clay",
    "pottery",
    "build",
    "deploy",
    "python",
    "server",
    "backup",
    "database",
    "rotation",
    "oncall",
    "tea",
    "morning",
    "meeting",
    "release",
    "review",
    "budget",
    "garden",
    "compost",
    "tomato",
    "invoice",
    "travel",
    "train",
    "ticket",
    "paper",
    "model",
    "vector",
    "search",
    "index",
    "graph",
    "memory",
    "agent",
    "planner",
    "schedule",
]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def generate(folder: Path, memories: int, concepts: int, seed: int = 7) -> None:
    """Write the bundle (files only, nothing indexed)."""
    from cairn.memory.bundle import INDEX_TEXT, LOG_TITLE, render_file
    from cairn.memory.ops import make_memory

    rng = random.Random(seed)
    for d in (
        "memories/active",
        "memories/subsumed",
        "memories/archive",
        "concepts/active",
        "concepts/archive",
    ):
        (folder / d).mkdir(parents=True, exist_ok=True)
    (folder / "index.md").write_text(INDEX_TEXT)
    (folder / "log.md").write_text(LOG_TITLE + "\n## 2026-12-01\n* **Initialization**: generated\n")
    per = max(1, memories // concepts)
    sources: list[list[dict[str, str]]] = [[] for _ in range(concepts)]
    for i in range(memories):
        tag = WORDS[i % len(WORDS)]
        name, data, rec = make_memory(
            _text(rng, 14), tags=[tag], timestamp=f"2026-11-{1 + i % 28:02d}T10:{i % 60:02d}:00Z"
        )
        (folder / "memories/subsumed" / name).write_bytes(data)
        sources[min(i // per, concepts - 1)].append(
            {"id": rec.seal, "resource": f"/memories/subsumed/{name}"}
        )
    types = ("refines", "depends_on", "supports", "contradicts", "related")
    for c in range(concepts):
        rels = [
            {
                "target": f"/concepts/active/concept-{rng.randrange(concepts):08d}.md",
                "type": types[(c + k) % 5 if (c + k) % 5 != 1 else 4],
                "confidence": 0.8,
            }
            for k in range(1 + c % 3)
        ]
        meta = {
            "type": "L2 Concept",
            "title": _text(rng, 5)[:-1],
            "description": _text(rng, 10),
            "tags": [WORDS[c % len(WORDS)]],
            "timestamp": "2026-11-30T00:00:00Z",
            "node_type": "Fact",
            "sources": sources[c],
            "confidence": 1.0,
            "retrieval_count": 0,
            "pinned": c % 50 == 0,
            "status": "active",
            "relations": rels,
        }
        body = f"# Details\n\n{_text(rng, 40)}\n"
        (folder / f"concepts/active/concept-{c:08d}.md").write_bytes(render_file(meta, body))


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--concepts", type=int, default=2_000)
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--dir", type=Path, default=None, help="Work folder (kept).")
    ap.add_argument("--embed", default="none", help="CAIRN_EMBED for the run.")
    args = ap.parse_args()
    os.environ["CAIRN_EMBED"] = args.embed
    from cairn.app import Cairn
    from cairn.config import load_config

    work = args.dir or Path(tempfile.mkdtemp(prefix="cairn-membench-"))
    if work.exists() and args.dir is None:
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    bundle = work / "mem"
    t0 = time.perf_counter()
    if not bundle.exists():
        generate(bundle, args.memories, args.concepts)
    t1 = time.perf_counter()
    print(
        f"load {os.getloadavg()}  generated {args.memories} memories, {args.concepts} "
        f"concepts in {t1 - t0:.1f} s",
        flush=True,
    )
    with Cairn(load_config(db=work / "index.db")) as cairn:
        run = cairn.index([bundle])
        t2 = time.perf_counter()
        print(f"indexed {run.seen} files in {t2 - t1:.1f} s", flush=True)
        rng = random.Random(3)
        rem: list[float] = []
        for i in range(args.rounds):
            t = time.perf_counter()
            cairn.memory.remember(bundle, _text(rng, 14) + f" ({i})", tags=[rng.choice(WORDS)])
            rem.append((time.perf_counter() - t) * 1000)
        rec: list[float] = []
        for _ in range(args.rounds):
            q = " ".join(rng.sample(WORDS, 2))
            t = time.perf_counter()
            cairn.memory.recall(bundle, q)
            rec.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        rep = cairn.memory.maintain(bundle)
        cycle = time.perf_counter() - t
    print(f"remember ms: p50 {statistics.median(rem):.1f}  p95 {pct(rem, 0.95):.1f}")
    print(f"recall   ms: p50 {statistics.median(rec):.1f}  p95 {pct(rec, 0.95):.1f}")
    print(
        f"maintain: {cycle:.1f} s ({rep.checked} seals, {len(rep.decayed)} decayed, "
        f"{len(rep.recalled)} recalled, {len(rep.changed)} files changed)"
    )
    print(f"load {os.getloadavg()}  work folder {work}")


if __name__ == "__main__":
    main()
