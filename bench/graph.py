"""Graph traversal latency on a synthetic graph (not run by the test suite).

Generates 100,000 units (10,000 documents of 10 headings) and 500,000 edges straight
into the store tables — structural ``parent``/``next``/``previous`` edges inside each
document, and declared ``references`` between random units, whose targets are skewed
(target = ⌊N·u²⌋, so a few hubs collect hundreds of backlinks, as real vaults do) — then
times, over random start units:

* 1- and 2-hop neighbours (all edges, both directions; and declared edges only),
* backlinks, and
* shortest paths between random pairs (undirected, all edges),

printing p50 / p95 / max in milliseconds. Usage::

    python bench/graph.py [--units 100000] [--edges 500000] [--samples 200] [--db PATH]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from cairn.graph import traverse as tv
from cairn.graph.edges import edge_id
from cairn.store.sqlite import SQLiteStore


def generate(store: SQLiteStore, n_units: int, n_edges: int, seed: int = 7) -> list[str]:
    """Fill the store with ``n_units`` units and about ``n_edges`` edges; returns unit ids."""
    rng = random.Random(seed)
    per_doc = 10
    n_docs = n_units // per_doc
    db = store.db
    db.execute("PRAGMA synchronous = OFF")
    unit_ids = [f"u{i:07d}-bench" for i in range(n_docs * per_doc)]
    with store.transaction():
        db.execute("INSERT INTO roots(id, path, added) VALUES ('r', '/bench', '2026-01-01')")
        db.executemany(
            "INSERT INTO files(root_id, path, size, mtime, hash, format, status) "
            "VALUES ('r', ?, 0, 0, '', 'markdown', 'ok')",
            [(f"d{d}.md",) for d in range(n_docs)],
        )
        db.executemany(
            "INSERT INTO documents(id, root_id, path, format, title, metadata, tags, aliases, "
            "content_hash, size, mtime, warnings) "
            "VALUES (?, 'r', ?, 'markdown', ?, '{}', '[]', '[]', 'h', 0, 0, '[]')",
            [(f"doc{d}", f"d{d}.md", f"Doc {d}") for d in range(n_docs)],
        )
        db.executemany(
            "INSERT INTO units(id, document_id, parent_id, ordinal, level, kind, title, "
            "outline_path, body, tags, inherited_tags, properties, timestamps, line_start, "
            "line_end, extra) VALUES (?,?,?,?,?,?,?, '[]', '', '[]', '[]', '{}', '[]', ?, ?, '{}')",
            [
                (unit_ids[d * per_doc + k], f"doc{d}",
                 unit_ids[d * per_doc] if k else None, k, 1 if k else 0,
                 "heading" if k else "preamble", f"H{k}", k + 1, k + 1)
                for d in range(n_docs) for k in range(per_doc)
            ],
        )
    rows: list[tuple[object, ...]] = []

    def add(s: int, t: int, rel: str, origin: str) -> None:
        sid, tid = unit_ids[s], unit_ids[t]
        rows.append((edge_id(sid, tid, rel, origin), sid, tid, rel, origin, 1.0, 1,
                     1 if origin == "declared" else 0, "[]", f"doc{s // per_doc}",
                     f"doc{t // per_doc}", None))

    for d in range(n_docs):
        base = d * per_doc
        for k in range(1, per_doc):
            add(base + k, base, "parent", "structural")
            if k > 1:
                add(base + k - 1, base + k, "next", "structural")
                add(base + k, base + k - 1, "previous", "structural")
    seen: set[tuple[int, int]] = set()
    n = len(unit_ids)
    while len(rows) < n_edges:
        s = rng.randrange(n)
        t = int(n * rng.random() ** 2)
        if s // per_doc == t // per_doc or (s, t) in seen:
            continue
        seen.add((s, t))
        add(s, t, "references", "declared")
    t0 = time.perf_counter()
    with store.transaction():
        db.executemany(
            "INSERT INTO edges(id, source, target, relation, origin, weight, count, links, "
            "evidence, source_document_id, target_document_id, run_id) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
    print(f"inserted {len(rows):,} edges in {time.perf_counter() - t0:.1f} s")
    db.execute("ANALYZE")
    return unit_ids


def _time(fn: Callable[[], object], samples: int) -> tuple[list[float], list[object]]:
    out: list[float] = []
    results: list[object] = []
    for _ in range(samples):
        t0 = time.perf_counter()
        results.append(fn())
        out.append((time.perf_counter() - t0) * 1000)
    return out, results


def _report(name: str, ms: list[float], extra: str = "") -> None:
    ms = sorted(ms)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    print(f"{name:<42} p50 {statistics.median(ms):7.2f} ms   p95 {p95:7.2f} ms   "
          f"max {ms[-1]:7.2f} ms  {extra}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--units", type=int, default=100_000)
    ap.add_argument("--edges", type=int, default=500_000)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--db", type=Path, default=None, help="keep the index here")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="cairn-bench-graph-"))
    db_path = args.db or folder / "graph.db"
    fresh = not db_path.exists()
    store = SQLiteStore(db_path)
    es = store.edges
    if fresh:
        t0 = time.perf_counter()
        ids = generate(store, args.units, args.edges)
        print(f"generated in {time.perf_counter() - t0:.1f} s")
    else:
        ids = [r[0] for r in store.db.execute("SELECT id FROM units")]
    n_edges = store.db.execute("SELECT count(*) FROM edges").fetchone()[0]
    print(f"graph: {len(ids):,} units, {n_edges:,} edges ({db_path})")
    rng = random.Random(1)
    starts = [rng.choice(ids) for _ in range(args.samples)]

    for hops, origins in ((1, None), (2, None), (2, ("declared",))):
        nodes = iter(starts)

        def walk(h: int = hops, o: tuple[str, ...] | None = origins,
                 n: Iterator[str] = nodes) -> object:
            return tv.neighbors(es, [next(n)], hops=h, origins=o)

        ms, res = _time(walk, args.samples)
        sizes = sorted(len(r) for r in res)  # type: ignore[arg-type]
        label = f"neighbours {hops} hop{'s' if hops > 1 else ''}" + (
            " (declared)" if origins else " (all edges)")
        _report(label, ms, f"nodes p50 {sizes[len(sizes) // 2]}, max {sizes[-1]}")
    from cairn.graph.service import GraphService

    svc = GraphService(store)
    it = iter(starts)
    ms, res = _time(lambda: svc.neighbors(next(it), hops=2), args.samples)
    _report("GraphService.neighbors 2 hops (+ display)", ms)
    it = iter(starts)
    ms, res = _time(lambda: tv.backlinks(es, [next(it)]), args.samples)
    _report("backlinks", ms)
    pairs = iter([(rng.choice(ids), rng.choice(ids)) for _ in range(args.samples)])

    def one_path() -> object:
        a, b = next(pairs)
        return tv.shortest_path(es, [a], [b])

    ms, res = _time(one_path, args.samples)
    lengths = sorted(len(r) for r in res if r is not None)  # type: ignore[arg-type]
    _report("shortest path (undirected, all edges)", ms,
            f"length p50 {lengths[len(lengths) // 2] if lengths else '-'}, "
            f"none {sum(1 for r in res if r is None)}")
    store.close()


if __name__ == "__main__":
    main()
