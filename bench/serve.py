"""Load benchmark of the HTTP API: 16 loopback clients of mixed search, get and
backlinks against the shared corpus index while re-index runs write to it.

Usage::

    cairn index ../shared/corpus --db /tmp/corpus.db      # once (embeddings: minutes)
    python bench/serve.py --db /tmp/corpus.db [--seconds 50] [--clients 16]

The index is copied to a temporary folder (yours is never written), a folder of 40
generated notes is registered beside the corpus, and ``cairn serve`` is started on a
free loopback port as a subprocess. Then ``--clients`` threads send requests for
``--seconds`` seconds (at most ``--max-requests`` in all) — keyword search, hybrid
search, ``GET /v1/units/{id}`` and ``GET /v1/graph/backlinks`` in turn — while one more
thread rewrites the generated notes and calls ``POST /v1/index`` again and again. It
prints p50/p95 latency per kind, requests/s, errors (any status but 200) and the index
runs; the whole run stops by itself within ``--seconds`` plus start-up (about 5 s).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx2

HERE = Path(__file__).resolve().parent
QUERIES = [
    "zettelkasten", "property inheritance", "how do I schedule a repeating task",
    "tag:daily", "todo:open", "format:org babel src block", "callout foldable",
    "org-roam buffer", "C++", "全文検索", "link to a heading in another note",
    "export to html with css", "weekly review", "spaced repetition", "backlinks panel",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def copy_index(src: Path, dest: Path) -> None:
    """A consistent copy of the index (SQLite's backup API: the WAL included)."""
    with sqlite3.connect(src) as a, sqlite3.connect(dest) as b:
        a.backup(b)


def write_notes(folder: Path, round_: int) -> None:
    """40 small Markdown notes whose text changes every round (links between them)."""
    folder.mkdir(exist_ok=True)
    for i in range(40):
        (folder / f"note-{i:02d}.md").write_text(
            f"# Load note {i}\n\nRound {round_}: zettelkasten weekly review {i * round_}.\n"
            f"See [[note-{(i + 1) % 40:02d}]].\n\n## Details\n\nspaced repetition {round_}\n",
            encoding="utf-8")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="an index of ../shared/corpus")
    ap.add_argument("--seconds", type=float, default=50.0, help="load duration")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--max-requests", type=int, default=200_000)
    ap.add_argument("--no-index", action="store_true",
                    help="no re-index runs during the load (a baseline)")
    args = ap.parse_args()
    if not args.db.is_file():
        sys.exit(f"{args.db}: no index; run `cairn index ../shared/corpus --db {args.db}`")

    tmp = Path(tempfile.mkdtemp(prefix="cairn-serve-bench-"))
    db = tmp / "bench.db"
    copy_index(args.db, db)
    notes = tmp / "load-notes"
    write_notes(notes, 0)
    src = str(HERE.parent / "src")
    env = {**os.environ, "PYTHONPATH": src, "CAIRN_TOKEN": secrets.token_urlsafe(24)}
    subprocess.run([sys.executable, "-m", "cairn.interfaces.cli", "index", str(notes),
                    "--db", str(db), "--quiet", "--json"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    port = free_port()
    log = (tmp / "server.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "cairn.interfaces.cli", "serve", "--db", str(db),
         "--port", str(port)], env=env, stderr=log)
    base = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {env['CAIRN_TOKEN']}"}
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx2.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                sys.exit("the server did not start; see " + str(tmp / "server.log"))
            time.sleep(0.1)
        with httpx2.Client(base_url=base, headers=auth, timeout=60) as c:
            stats = c.get("/v1/stats").json()
            probe = [c.post("/v1/search", json={"query": q, "mode": "keyword", "limit": 5})
                     .json()["hits"] for q in QUERIES]
            # warm up: the embedding model and the vector matrix load on first use
            c.post("/v1/search", json={"query": QUERIES[0], "mode": "hybrid", "limit": 5})
        units = [h["unit_id"] for hits in probe for h in hits]
        docs = list(dict.fromkeys(h["document_id"] for hits in probe for h in hits))
        print(f"index: {stats['documents']} documents, {stats['units']} units; "
              f"{args.clients} clients for {args.seconds:.0f} s")
        return run_load(base, auth, notes, units, docs, args)
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)
        log.close()
        if os.environ.get("BENCH_KEEP"):
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def run_load(base: str, auth: dict[str, str], notes: Path, units: list[str],
             docs: list[str], args: Any) -> int:
    stop = time.monotonic() + args.seconds
    lat: dict[str, list[float]] = {"keyword": [], "hybrid": [], "get": [], "backlinks": []}
    errors: list[str] = []
    lock = threading.Lock()
    sent = {"n": 0}
    runs: list[float] = []

    def client(k: int) -> None:
        kinds = list(lat)
        i = k
        with httpx2.Client(base_url=base, headers=auth, timeout=60) as c:
            while time.monotonic() < stop:
                with lock:
                    if sent["n"] >= args.max_requests:
                        return
                    sent["n"] += 1
                kind = kinds[i % 4]
                q = QUERIES[i % len(QUERIES)]
                t0 = time.perf_counter()
                if kind in ("keyword", "hybrid"):
                    r = c.post("/v1/search", json={"query": q, "mode": kind, "limit": 10})
                elif kind == "get":
                    r = c.get(f"/v1/units/{units[i % len(units)]}")
                else:
                    r = c.get("/v1/graph/backlinks", params={"node": docs[i % len(docs)]})
                ms = (time.perf_counter() - t0) * 1000
                with lock:
                    lat[kind].append(ms)
                    if r.status_code != 200:
                        errors.append(f"{kind} {r.status_code} {r.text[:120]}")
                i += 1

    def indexer() -> None:
        round_ = 1
        with httpx2.Client(base_url=base, headers=auth, timeout=120) as c:
            while time.monotonic() < stop - 1 and not args.no_index:
                write_notes(notes, round_)
                t0 = time.perf_counter()
                r = c.post("/v1/index")
                if r.status_code != 200:
                    errors.append(f"index {r.status_code} {r.text[:120]}")
                else:
                    runs.append(time.perf_counter() - t0)
                round_ += 1

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(args.clients)]
    threads.append(threading.Thread(target=indexer))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    total = sum(len(v) for v in lat.values())
    report = {
        "clients": args.clients, "seconds": round(wall, 1), "requests": total,
        "requests_per_s": round(total / wall, 1), "errors": len(errors),
        "index_runs": len(runs),
        "index_run_s_p50": round(statistics.median(runs), 2) if runs else None,
        **{f"{k}_ms": {"p50": round(percentile(v, 0.5), 1), "p95": round(percentile(v, 0.95), 1),
                       "n": len(v)} for k, v in lat.items()},
    }
    print(json.dumps(report, indent=2))
    for e in errors[:10]:
        print("error:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
