"""Load benchmark of the HTTP API: 16 loopback clients of mixed search, get and
backlinks against the shared corpus index while re-index runs write to it.

Usage::

    cairn index ../shared/corpus --db /tmp/corpus.db      # once (embeddings: minutes)
    python bench/serve.py --db /tmp/corpus.db [--seconds 60] [--clients 16]
    python bench/serve.py --db /tmp/corpus.db --compare main   # this tree and REV, in turn
    python bench/serve.py --db /tmp/corpus.db --rate 10        # paced: <= 10 req/s per client
    python bench/serve.py --db /tmp/corpus.db --workers 2      # cairn serve --workers 2
    python bench/serve.py --db /tmp/corpus.db --watch --burst 500  # serve --watch, 500 new files

The index is copied to a temporary folder (yours is never written), a folder of 40
generated notes is registered beside the corpus, and ``cairn serve`` is started on a
free loopback port as a subprocess. Then ``--clients`` clients, spread over ``--procs``
load-generator processes (one thread and one keep-alive ``http.client`` connection per
client: cheap, so the generator takes little of the cores it shares with the server),
send requests for ``--seconds`` seconds (at most ``--max-requests`` in all) — keyword
search, hybrid search, ``GET /v1/units/{id}`` and ``GET /v1/graph/backlinks`` in turn —
while one more thread rewrites the generated notes and calls ``POST /v1/index`` again
and again (``--no-index``: never). With ``--watch`` the server runs ``cairn serve
--watch`` (those index runs then go to its watching process), and ``--burst N`` writes N
new notes into the registered folder halfway through the load; the report says how
long after the last one was written all of them were searchable (``burst_indexed_s``,
``None``: not within the load and 30 s after it).

Two loads: the closed loop (default) sends each client's next request as soon as its
answer is in, so latency is set by throughput (16 clients / requests per second, on
average); ``--rate R`` paces each client to a mean of R requests per second, as independent
users: each starts at a random phase and waits exponential gaps (Poisson arrivals; a
slow answer makes the next request go at once, nothing is sent to catch up), which
measures latency at a fixed offered load of clients × R per second while the server
keeps up.

It prints p50/p95/p99 latency per kind, requests/s, errors (any status but 200), the
index runs (count and median seconds), the CPU seconds per request of the server
process and of the load generator, the CPU seconds of the server's child processes
(its index process, which runs the re-index since it left the server's own process),
and the 1-minute load average at the start and the end. With ``--compare REV`` the
same load runs against this checkout's ``src`` and then against ``git archive REV`` (a
fresh copy of the index each time; the generator is this checkout's), and a side-by-side
table follows the two reports.
"""

from __future__ import annotations

import argparse
import json
import os
import random
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
    ap.add_argument("--seconds", type=float, default=60.0, help="load duration")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--max-requests", type=int, default=200_000)
    ap.add_argument("--rate", type=float, default=0.0,
                    help="paced load: each client sends this many requests per second on "
                    "average, Poisson arrivals (default 0: closed loop, the next request "
                    "as soon as the answer is in)")
    ap.add_argument("--procs", type=int, default=4,
                    help="load-generator processes the clients are spread over")
    ap.add_argument("--no-index", action="store_true",
                    help="no re-index runs during the load (a baseline)")
    ap.add_argument("--workers", type=int, default=0,
                    help="pass --workers N to this checkout's cairn serve (not to REV's "
                    "with --compare; default: its own default)")
    ap.add_argument("--watch", action="store_true",
                    help="run cairn serve --watch (both checkouts with --compare)")
    ap.add_argument("--burst", type=int, default=0,
                    help="write this many new notes halfway through the load")
    ap.add_argument("--compare", metavar="REV", default=None,
                    help="also run the same load against git revision REV's src")
    args = ap.parse_args()
    if not args.db.is_file():
        sys.exit(f"{args.db}: no index; run `cairn index ../shared/corpus --db {args.db}`")
    if args.compare is None:
        code, _ = bench(args, str(HERE.parent / "src"))
        return code
    old = Path(tempfile.mkdtemp(prefix="cairn-serve-rev-"))
    try:
        archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", args.compare, "src"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        print(f"== this checkout ({HERE.parent})")
        code_new, new = bench(args, str(HERE.parent / "src"))
        print(f"== {args.compare}")
        code_old, before = bench(args, str(old / "src"))
    finally:
        shutil.rmtree(old, ignore_errors=True)
    print(f"\n{'ms':<12}{args.compare + ' p50':>14}{args.compare + ' p95':>14}"
          f"{'new p50':>10}{'new p95':>10}")
    for kind in KINDS:
        a, b = before[f"{kind}_ms"], new[f"{kind}_ms"]
        print(f"{kind:<12}{a['p50']:>14}{a['p95']:>14}{b['p50']:>10}{b['p95']:>10}")
    for route in sorted(set(before.get("server_ms", {})) | set(new.get("server_ms", {}))):
        a = before.get("server_ms", {}).get(route, {})
        b = new.get("server_ms", {}).get(route, {})
        print(f"{'server ' + route.removeprefix('/v1'):<12}{a.get('p50', '-')!s:>14}"
              f"{a.get('p95', '-')!s:>14}{b.get('p50', '-')!s:>10}{b.get('p95', '-')!s:>10}")
    for key in ("requests_per_s", "errors", "index_runs", "index_run_s_p50", "burst_indexed_s",
                "server_cpu_ms_per_request", "index_process_cpu_s",
                "generator_cpu_ms_per_request", "load_average_1m"):
        print(f"{key:<30}{before.get(key)!s:>14}{new.get(key)!s:>20}")
    return code_new or code_old


def bench(args: Any, src: str) -> tuple[int, dict[str, Any]]:
    """One load run with the server started from the source tree ``src``; returns the
    exit status and the report."""
    tmp = Path(tempfile.mkdtemp(prefix="cairn-serve-bench-"))
    db = tmp / "bench.db"
    copy_index(args.db, db)
    notes = tmp / "load-notes"
    write_notes(notes, 0)
    env = {**os.environ, "PYTHONPATH": src, "CAIRN_TOKEN": secrets.token_urlsafe(24)}
    subprocess.run([sys.executable, "-m", "cairn.interfaces.cli", "index", str(notes),
                    "--db", str(db), "--quiet", "--json"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    port = free_port()
    log = (tmp / "server.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "cairn.interfaces.cli", "serve", "--db", str(db),
         "--port", str(port), *(["--workers", str(args.workers)]
                                if args.workers and src == str(HERE.parent / "src") else []),
         *(["--watch"] if args.watch else [])],
        env=env, stderr=log)
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
        load = (f"Poisson arrivals, mean {args.rate:g} req/s each" if args.rate > 0
                else "closed loop, no think time")
        writes = "no re-index runs" if args.no_index else "re-index runs of 40 notes meanwhile"
        writes += (", serve --watch" if args.watch else "") + (
            f", {args.burst} new notes halfway" if args.burst else "")
        print(f"measures: latency and throughput of keyword and hybrid search, GET unit and"
              f" backlinks over HTTP; {args.clients} clients ({load}) for"
              f" {args.seconds:.0f} s, {writes}; a copy of {args.db.name} holding"
              f" {stats['documents']} documents and {stats['units']} units")
        log.flush()
        log_start = (tmp / "server.log").stat().st_size
        code, report = run_load(base, auth, notes, units, docs, args, server.pid)
        report["server_ms"] = server_times(tmp / "server.log", log_start)
        print("server-side ms per route (from its log lines):",
              json.dumps(report["server_ms"]))
        if report["errors"]:  # the server logged each error's details under its id
            log.flush()
            for line in (tmp / "server.log").read_text(errors="replace").splitlines():
                if '"error"' in line:
                    print("server log:", line[:2000])
        return code, report
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


KINDS = ("keyword", "hybrid", "get", "backlinks")


def server_times(path: Path, start: int) -> dict[str, dict[str, float]]:
    """p50/p95 of the server's own time per route (the ``ms`` of its JSON log lines
    after byte ``start``): from the request's arrival in the application to its last
    byte, queueing inside the server included, the network and the generator not."""
    by_route: dict[str, list[float]] = {}
    with path.open("rb") as f:
        f.seek(start)
        for raw in f:
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if isinstance(line, dict) and "ms" in line and "route" in line:
                by_route.setdefault(line["route"], []).append(float(line["ms"]))
    return {route: {"p50": round(percentile(v, 0.5), 1), "p95": round(percentile(v, 0.95), 1),
                    "n": len(v)} for route, v in sorted(by_route.items())}


def _client_loop(base: str, auth: dict[str, str], units: list[str], docs: list[str],
                 k: int, stop_at: float, rate: float, budget: int) -> dict[str, Any]:
    """One client: requests in turn (keyword, hybrid, get, backlinks) on one keep-alive
    connection until ``stop_at`` (wall clock, ``time.time()``) or ``budget`` requests.
    ``rate`` > 0: at most ``rate`` requests per second (the next one waits for its
    slot; a slow answer makes the next go at once, slots counted from then)."""
    import http.client
    from urllib.parse import quote

    port = int(base.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {**auth, "Host": f"127.0.0.1:{port}"}
    json_headers = {**headers, "Content-Type": "application/json"}
    lat: dict[str, list[float]] = {kind: [] for kind in KINDS}
    errors: list[str] = []
    i, sent = k, 0
    gap = 1.0 / rate if rate > 0 else 0.0
    # Paced clients are independent users: each starts at a random phase and spaces
    # its requests by exponential gaps of mean 1/rate (Poisson arrivals). Clients that
    # all start at once with one fixed gap send their requests in bursts of
    # ``clients`` at the same instant, and the bench then measures how long the
    # server takes to drain a burst, not its latency at the offered load.
    rng = random.Random(k)
    slot = time.time() + (rng.uniform(0, gap) if gap else 0.0)
    while time.time() < stop_at and sent < budget:
        if gap:
            wait = slot - time.time()
            if wait > 0:
                time.sleep(wait)
            slot = max(slot + rng.expovariate(rate), time.time())
        kind = KINDS[i % 4]
        q = QUERIES[i % len(QUERIES)]
        t0 = time.perf_counter()
        try:
            if kind in ("keyword", "hybrid"):
                body = json.dumps({"query": q, "mode": kind, "limit": 10})
                conn.request("POST", "/v1/search", body, json_headers)
            elif kind == "get":
                conn.request("GET", f"/v1/units/{quote(units[i % len(units)], safe='')}",
                             headers=headers)
            else:
                conn.request("GET", "/v1/graph/backlinks?node="
                             + quote(docs[i % len(docs)], safe=""), headers=headers)
            r = conn.getresponse()
            data = r.read()
            status = r.status
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            status, data = 0, repr(exc).encode()
        lat[kind].append((time.perf_counter() - t0) * 1000)
        if status != 200:
            errors.append(f"{kind} {status} {data[:120]!r}")
        i += 1
        sent += 1
    conn.close()
    return {"lat": lat, "errors": errors}


def _worker(conn: Any, base: str, auth: dict[str, str], units: list[str], docs: list[str],
            ks: list[int], stop_at: float, rate: float, budget: int) -> None:
    """A load-generator process: one thread per client in ``ks``; sends back the
    latencies, errors and the CPU seconds this process used."""
    out: list[dict[str, Any]] = []
    threads = [threading.Thread(target=lambda k=k: out.append(_client_loop(
        base, auth, units, docs, k, stop_at, rate, budget))) for k in ks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    conn.send({"results": out, "cpu_s": time.process_time()})
    conn.close()


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def descendants_cpu(pid: int) -> dict[int, tuple[float, bool]]:
    """CPU seconds per live descendant of ``pid`` and whether it is (or was started
    by) an index process (``cairn.serving.index_worker``); key ``-1``: what finished
    children used (``cutime``, counted with the server)."""
    kids: dict[int, list[int]] = {}
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                fields = (p / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            kids.setdefault(int(fields[1]), []).append(int(p.name))
    out: dict[int, tuple[float, bool]] = {}
    todo = [(k, False) for k in kids.get(pid, [])]
    while todo:
        k, index = todo.pop()
        try:
            cmdline = Path(f"/proc/{k}/cmdline").read_bytes()
            index = index or b"cairn.serving.index_worker" in cmdline
            out[k] = (cpu_seconds(k), index)
        except OSError:
            continue
        todo.extend((g, index) for g in kids.get(k, []))
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    out[-1] = ((int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK"), False)
    return out


def split_cpu(before: dict[int, tuple[float, bool]], after: dict[int, tuple[float, bool]]
              ) -> tuple[float, float]:
    """CPU seconds used between two :func:`descendants_cpu` readings: ``(server
    worker processes, index processes)``."""
    server = index = 0.0
    for k, (cpu, is_index) in after.items():
        used = cpu - before.get(k, (0.0, False))[0]
        if is_index:
            index += used
        else:
            server += used
    return server, index


def run_load(base: str, auth: dict[str, str], notes: Path, units: list[str],
             docs: list[str], args: Any, server_pid: int) -> tuple[int, dict[str, Any]]:
    """Run ``args.clients`` clients in ``args.procs`` processes and one index thread;
    returns the exit status and the report."""
    import multiprocessing as mp

    procs = max(1, min(args.procs, args.clients))
    stop_at = time.time() + args.seconds
    budget = max(1, args.max_requests // args.clients)
    runs: list[float] = []
    index_errors: list[str] = []

    def indexer() -> None:
        round_ = 1
        with httpx2.Client(base_url=base, headers=auth, timeout=120) as c:
            while time.time() < stop_at - 1 and not args.no_index:
                write_notes(notes, round_)
                t0 = time.perf_counter()
                r = c.post("/v1/index")
                if r.status_code != 200:
                    index_errors.append(f"index {r.status_code} {r.text[:120]}")
                else:
                    runs.append(time.perf_counter() - t0)
                round_ += 1

    ctx = mp.get_context("fork")
    server_cpu0 = cpu_seconds(server_pid)
    child_cpu0 = descendants_cpu(server_pid)
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    workers = []
    for p in range(procs):
        ks = list(range(p, args.clients, procs))
        parent, child = ctx.Pipe(duplex=False)
        w = ctx.Process(target=_worker, args=(child, base, auth, units, docs, ks, stop_at,
                                              args.rate, budget))
        w.start()
        workers.append((w, parent))
    index_thread = threading.Thread(target=indexer)
    index_thread.start()
    burst: dict[str, Any] = {}
    burst_thread = threading.Thread(target=_burst, args=(base, auth, notes, args, stop_at, burst))
    if args.burst:
        burst_thread.start()
    lat: dict[str, list[float]] = {kind: [] for kind in KINDS}
    errors: list[str] = []
    client_cpu = 0.0
    for w, parent in workers:
        got = parent.recv()
        w.join()
        client_cpu += got["cpu_s"]
        for res in got["results"]:
            for kind in KINDS:
                lat[kind].extend(res["lat"][kind])
            errors.extend(res["errors"])
    index_thread.join()
    wall = time.perf_counter() - t0
    if args.burst:
        burst_thread.join()
    server_cpu = cpu_seconds(server_pid) - server_cpu0
    workers_cpu, child_cpu = split_cpu(child_cpu0, descendants_cpu(server_pid))
    server_cpu += workers_cpu  # processes the server starts that do not index
    load1 = os.getloadavg()
    errors.extend(index_errors)
    total = sum(len(v) for v in lat.values())
    report = {
        "clients": args.clients, "load": (f"paced, each client at most {args.rate:g} req/s"
                                          if args.rate > 0 else "closed loop, no think time"),
        "generator_processes": procs, "seconds": round(wall, 1), "requests": total,
        "requests_per_s": round(total / wall, 1), "errors": len(errors),
        "index_runs": len(runs),
        "index_run_s_p50": round(statistics.median(runs), 2) if runs else None,
        **({"burst_files": args.burst, "burst_indexed_s": burst.get("seconds")}
           if args.burst else {}),
        "server_cpu_s": round(server_cpu, 1),
        "server_cpu_ms_per_request": round(server_cpu * 1000 / max(1, total), 2),
        "index_process_cpu_s": round(child_cpu, 1),
        "load_average_1m": [round(load0[0], 1), round(load1[0], 1)],
        "generator_cpu_s": round(client_cpu, 1),
        "generator_cpu_ms_per_request": round(client_cpu * 1000 / max(1, total), 2),
        **{f"{k}_ms": {"p50": round(percentile(v, 0.5), 1), "p95": round(percentile(v, 0.95), 1),
                       "p99": round(percentile(v, 0.99), 1), "n": len(v)}
           for k, v in lat.items()},
    }
    print(json.dumps(report, indent=2))
    for e in errors[:10]:
        print("error:", e)
    return (1 if errors else 0), report


def _burst(base: str, auth: dict[str, str], notes: Path, args: Any, stop_at: float,
           out: dict[str, Any]) -> None:
    """Halfway through the load, write ``args.burst`` new notes; ``out["seconds"]``:
    from the last write until ``/v1/stats`` counts them all."""
    time.sleep(max(0.0, (stop_at - time.time()) / 2))
    with httpx2.Client(base_url=base, headers=auth, timeout=60) as c:
        before = c.get("/v1/stats").json()["documents"]
        folder = notes / "burst"
        folder.mkdir()
        for i in range(args.burst):
            (folder / f"burst-{i:04d}.md").write_text(f"# Burst {i}\n\nburst note {i}\n",
                                                     encoding="utf-8")
        written = time.perf_counter()
        while time.time() < stop_at + 30:
            r = c.get("/v1/stats")
            if r.status_code == 200 and r.json()["documents"] >= before + args.burst:
                out["seconds"] = round(time.perf_counter() - written, 1)
                return
            time.sleep(0.5)


if __name__ == "__main__":
    sys.exit(main())
