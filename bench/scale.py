"""The same cairn on SQLite and on PostgreSQL, side by side in one run.

    python bench/scale.py [--chunks 100000] [--scifact] [--clients 1,4,16] [--pg-url URL]
                          [--backends sqlite,postgres] [--json FILE] [--grow SLICES]
    python bench/scale.py --measure postgresql://… [--clients 1,4,16] [--repeat N]
                          [--topk server|client]

1. ``--scifact``: nDCG@10 / Recall@100 / MRR@10 on ``../shared/bench/beir/scifact`` for
   keyword (and hybrid with the shipped static model) on both backends; with
   ``--chunks 0`` nothing else.
2. A synthetic corpus of about ``--chunks`` chunks (Markdown notes of 3–8 sections with
   realistic word counts over a Zipf-distributed vocabulary of 30,000 words, wikilinks
   between notes and Zipf-distributed tags: :func:`tag_vocabulary`), indexed into both:
   indexing throughput (files/s, MB/s), keyword and hybrid query latency p50/p95 with
   1, 4 and 16 concurrent clients (threads, each query a new search), and size on disk
   (the SQLite file; ``pg_database_size``).

3. ``--grow SLICES`` (instead of 2): one index of the first of ``--backends`` grown to
   ``--chunks`` in that many slices, the same figures after each slice (how throughput
   and latency change with size; a stopped run keeps the slices it measured).

4. ``--measure URL``: only the query latencies (and size) of an index already on a
   server, e.g. one left by 2. on a kept server, after a code change. ``--topk client``
   runs keyword top-k as the client loop (``store/postgres/topk.py``) instead of the
   server function (``store/postgres/topk_sql.py``), to compare the two on one index.

Without ``--pg-url`` a throwaway PostgreSQL server is started from the ``pgserver`` wheel
in a temporary folder. Prints one table per part; ``--json FILE`` writes every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from cairn.app import Cairn
from cairn.config import Config
from cairn.store import open_store, open_url

_TEXT = (
    "budget report travel garden tomato soil water morning project meeting design review "
    "network server latency cache index query search graph link note tag heading section "
    "python rust emacs org markdown vault concept memory agent model embedding vector "
    "paper protein cell gene study trial result method data analysis error test build "
    "deploy release plan goal habit reading book author chapter idea question answer"
)
WORDS = tuple(_TEXT.split(" "))
VOCABULARY = 30_000
"""Distinct words of the synthetic corpus: the real words above, then made-up ones."""
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "ta", "vo", "shi", "der", "ion", "pra", "gel",
              "tur", "bam", "qui", "sen", "dor", "fla", "mon", "zet")


def vocabulary(n: int = VOCABULARY) -> tuple[tuple[str, ...], list[float]]:
    """The corpus's words with Zipf-like weights (``1 / (rank + 100)``: no stop words,
    so the most frequent word is in about one chunk in ten, as a frequent content word
    of real notes is), most frequent first."""
    rng = random.Random(1)
    words = list(WORDS)
    seen = set(words)
    while len(words) < n:
        w = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return tuple(words), [1.0 / (r + 100) for r in range(n)]


_VOCAB, _WEIGHTS = vocabulary()
_CUM = list(__import__("itertools").accumulate(_WEIGHTS))


def _words(rng: random.Random, k: int) -> list[str]:
    return rng.choices(_VOCAB, cum_weights=_CUM, k=k)


def _sentence(rng: random.Random) -> str:
    return " ".join(_words(rng, rng.randint(8, 20))).capitalize() + "."


_TAGS_PER_NOTE = (0, 0, 0, 1, 1, 2)
"""How many tags a note has, drawn uniformly: two notes in three have none or one."""


def tag_vocabulary(notes: int) -> int:
    """Distinct tags a corpus of ``notes`` notes draws from: 200 plus one per ten notes,
    Zipf-weighted (``1 / rank``). Like the shared corpus (224 tags on 2,165 files, the
    top one on 1,113 units), a few tags are on many notes — too many to make
    ``shares_tag`` edges (``BuildConfig.max_feature_units``, 100) — and most on a few, so the
    implicit edges stay near one per unit at any size. (Two tags drawn from 70 common
    words, as before, put every tag on notes/35 notes: at 10,000 chunks 125,000
    ``shares_tag`` edges, 10 per unit, three quarters of the file; above 17,500 chunks
    none at all.)"""
    return 200 + notes // 10


def make_corpus(folder: Path, chunks: int, seed: int = 7, *, first: int = 0,
                linked: int | None = None) -> tuple[int, int]:
    """Write Markdown notes holding about ``chunks`` sections; returns (files, bytes).

    ``first``: the number of the first note (``Note {first}``…), for a corpus written
    in slices; ``linked``: how many notes links may name (default: this slice's)."""
    rng = random.Random(seed)
    n = max(1, chunks // 5)
    files = linked or first + n
    n_tags = tag_vocabulary(files)
    tag_cum = list(__import__("itertools").accumulate(1.0 / (r + 1) for r in range(n_tags)))
    total = 0
    for i in range(first, first + n):
        sub = folder / f"d{i % 50:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        tags = sorted(set(rng.choices(_VOCAB[:n_tags], cum_weights=tag_cum,
                                      k=rng.choice(_TAGS_PER_NOTE))))
        parts = [f"---\ntags: [{', '.join(tags)}]\n---\n# Note {i}\n"]
        for s in range(rng.randint(3, 7)):
            body = " ".join(_sentence(rng) for _ in range(rng.randint(2, 6)))
            link = f" See [[Note {rng.randrange(files)}]]." if rng.random() < 0.5 else ""
            parts.append(f"\n## {rng.choice(WORDS).title()} {s}\n{body}{link}\n")
        text = "".join(parts)
        (sub / f"Note {i}.md").write_text(text, encoding="utf-8")
        total += len(text.encode())
    return n, total


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))] if xs else float("nan")


def latency(c: Cairn, mode: str, clients: int, per_client: int, seed: int) -> dict[str, float]:
    """p50/p95 (ms) of ``per_client`` queries from each of ``clients`` threads."""
    times: list[float] = []
    lock = threading.Lock()

    def work(k: int) -> None:
        rng = random.Random(seed + k)
        mine = []
        for _ in range(per_client):
            q = " ".join(_words(rng, rng.randint(1, 3)))
            t = time.perf_counter()
            c.search(q, mode=mode, limit=10)
            mine.append((time.perf_counter() - t) * 1000)
        with lock:
            times.extend(mine)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(clients)]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.perf_counter() - t0
    return {"p50": round(statistics.median(times), 1), "p95": round(_pct(times, 0.95), 1),
            "qps": round(len(times) / wall, 1)}


WARM = 200
"""Queries of each mode run before measuring (the generator's, another seed): the
figures are a warm server's, whose caches hold the pages its queries read; the time
they took is reported as ``warm_<mode>_s``. ``--warm 0`` measures cold."""


WARM_N = [WARM]
"""The warm-up count of this run (``--warm``)."""


def warm(c: Cairn, mode: str, n: int) -> float:
    """Run ``n`` queries of ``mode`` (seed 10,000) unmeasured; their seconds."""
    rng = random.Random(10_000)
    t = time.perf_counter()
    for _ in range(n):
        c.search(" ".join(_words(rng, rng.randint(1, 3))), mode=mode,
                 limit=10)
    return round(time.perf_counter() - t, 1)


def _steps(run: Any) -> dict[str, float]:
    """Seconds of a run's graph and embedding steps (the rest is files: parse, store,
    link resolution)."""
    return {"graph_seconds": round(run.graph.seconds, 1) if run.graph else 0.0,
            "embed_seconds": round(run.embedding.seconds, 1) if run.embedding else 0.0}


def pg_size(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else 0


def new_database(server_url: str) -> str:
    import psycopg

    name = "bench_" + uuid.uuid4().hex[:10]
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    from urllib.parse import urlsplit, urlunsplit

    p = urlsplit(server_url)
    return urlunsplit((p.scheme, p.netloc, "/" + name, p.query, p.fragment))


def scifact(server_url: str, work: Path) -> dict[str, Any]:
    from cairn.embed.registry import EmbedConfig, make_embedder
    from cairn.evaluation import evaluate

    folder = Path(__file__).resolve().parents[2] / "shared" / "bench" / "beir" / "scifact"
    embedder = make_embedder(EmbedConfig(provider="static"))
    out: dict[str, Any] = {}
    for name, db in (("sqlite", str(work / "scifact.db")), ("postgres", new_database(server_url))):
        t = time.perf_counter()
        rep = evaluate(folder, embedder, modes=("keyword", "hybrid"), db_path=db)
        out[name] = {"seconds": round(time.perf_counter() - t, 1),
                     **{m.mode: {"ndcg@10": round(m.ndcg10, 4),
                                 "recall@100": round(m.recall100, 4),
                                 "mrr@10": round(m.mrr10, 4), "p50_ms": m.p50_ms,
                                 "p95_ms": m.p95_ms} for m in rep.results}}
    return out


def vacuum(url: str) -> None:
    """``VACUUM ANALYZE`` (what autovacuum does soon after a first run): planner
    statistics, and the visibility map that lets the postings be read index-only."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


def scale(server_url: str, work: Path, chunks: int, clients: list[int],
          backends: tuple[str, ...] = ("sqlite", "postgres")) -> dict[str, Any]:
    corpus = work / "corpus"
    t = time.perf_counter()
    files, size = make_corpus(corpus, chunks)
    print(f"  corpus: {files} files, {size / 1e6:.1f} MB in {time.perf_counter() - t:.0f} s",
          file=sys.stderr, flush=True)
    out: dict[str, Any] = {"files": files, "mb": round(size / 1e6, 2)}
    url = new_database(server_url)
    for name in backends:
        cfg = Config(db_path=work / "scale.db", embed={"provider": "static"})
        store = open_store(work / "scale.db") if name == "sqlite" else open_url(url)
        with Cairn(cfg, store=store) as c:
            t = time.perf_counter()
            run = c.index([str(corpus)])
            secs = time.perf_counter() - t
            print(f"  {name}: indexed in {secs:.0f} s", file=sys.stderr, flush=True)
            if name == "postgres":
                vacuum(url)
            n_chunks = c.store.vectors.counts().get("chunks", 0)
            res: dict[str, Any] = {
                "index_seconds": round(secs, 1), "files_per_s": round(files / secs, 1),
                "mb_per_s": round(size / 1e6 / secs, 2), "chunks": n_chunks,
                "chunks_per_s": round(n_chunks / secs, 1), "failed": run.failed,
                **_steps(run),
                "size_mb": round((os.path.getsize(work / "scale.db") if name == "sqlite"
                                  else pg_size(url)) / 1e6, 1)}
            for mode in ("keyword", "hybrid"):
                res[f"warm_{mode}_s"] = warm(c, mode, WARM_N[0])
                for k in clients:
                    res[f"{mode}@{k}"] = latency(c, mode, k, max(5, 60 // k), seed=k)
            out[name] = res
        print(f"  {name}: {json.dumps(res)}", file=sys.stderr)
    return out


def grow(server_url: str, work: Path, chunks: int, slices: int, clients: list[int],
         backend: str = "postgres") -> list[dict[str, Any]]:
    """Index a corpus of about ``chunks`` chunks in ``slices`` equal slices into one
    index (each slice a new folder of the one root, indexed again after it is written:
    a growing vault, links naming notes of any slice), measuring after each slice:
    that slice's indexing throughput, keyword and hybrid latency, database size. One
    JSON line per slice goes to stderr as it is measured, so a run stopped part way
    still reports the largest size it reached."""
    root = work / "grow"
    files_total = max(1, chunks // 5)
    per = max(1, files_total // slices)
    url = new_database(server_url) if backend == "postgres" else ""
    db_file = work / "grow.db"
    cfg = Config(db_path=db_file, embed={"provider": "static"})
    store = open_store(db_file) if backend == "sqlite" else open_url(url)
    out: list[dict[str, Any]] = []
    before = 0
    with Cairn(cfg, store=store) as c:
        for k in range(slices):
            files, _size = make_corpus(root / f"s{k:03d}", per * 5, seed=100 + k,
                                      first=k * per, linked=files_total)
            t = time.perf_counter()
            run = c.index([str(root)])
            secs = time.perf_counter() - t
            if backend == "postgres":
                vacuum(url)
            n_chunks = c.store.vectors.counts().get("chunks", 0)
            res: dict[str, Any] = {
                "slice": k + 1, "backend": backend, "files": (k + 1) * per, "chunks": n_chunks,
                "slice_seconds": round(secs, 1), "files_per_s": round(files / secs, 1),
                "chunks_per_s": round((n_chunks - before) / secs, 1), "failed": run.failed,
                **_steps(run),
                "size_mb": round((os.path.getsize(db_file) if backend == "sqlite"
                                  else pg_size(url)) / 1e6, 1)}
            for mode in ("keyword", "hybrid"):
                res[f"warm_{mode}_s"] = warm(c, mode, WARM_N[0])
                for n in clients:
                    res[f"{mode}@{n}"] = latency(c, mode, n, max(5, 60 // n), seed=n)
            out.append(res)
            before = n_chunks
            print(json.dumps(res), file=sys.stderr, flush=True)
    return out


def measure(url: str, clients: list[int], repeat: int = 1) -> dict[str, Any]:
    """The query half of :func:`scale` on an index already on the server (``--measure
    URL``): opening it (which runs any new migration step, timed), ``VACUUM ANALYZE``,
    size, then keyword and hybrid p50/p95 at each client count, ``repeat`` times."""
    t = time.perf_counter()
    cfg = Config(db_path=Path(tempfile.gettempdir()) / "unused-scale.db",
                 embed={"provider": "static"})
    with Cairn(cfg, store=open_url(url)) as c:
        res: dict[str, Any] = {"open_seconds": round(time.perf_counter() - t, 1)}
        vacuum(url)
        res["chunks"] = c.store.vectors.counts().get("chunks", 0)
        res["size_mb"] = round(pg_size(url) / 1e6, 1)
        for i in range(repeat):
            for mode in ("keyword", "hybrid"):
                if i == 0:
                    res[f"warm_{mode}_s"] = warm(c, mode, WARM_N[0])
                for k in clients:
                    res[f"{mode}@{k}" + (f"#{i + 1}" if repeat > 1 else "")] = latency(
                        c, mode, k, max(5, 60 // k), seed=k)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--scifact", action="store_true")
    ap.add_argument("--pg-url", default=os.environ.get("CAIRN_TEST_PG_URL"))
    ap.add_argument("--backends", default="sqlite,postgres")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--grow", type=int, default=0, metavar="SLICES",
                    help="index --chunks in this many slices into one index of the first "
                         "of --backends, measuring after each (one JSON line per slice)")
    ap.add_argument("--measure", metavar="URL",
                    help="only measure query latency on this existing PostgreSQL index")
    ap.add_argument("--repeat", type=int, default=1, help="with --measure: rounds")
    ap.add_argument("--warm", type=int, default=WARM, metavar="N",
                    help=f"unmeasured queries per mode before measuring (default {WARM}; "
                         "0: cold)")
    ap.add_argument("--topk", choices=("server", "client"), default="server",
                    help="PostgreSQL keyword top-k: one server function, or the client loop")
    args = ap.parse_args()
    from cairn.store.postgres import search as pg_search

    WARM_N[0] = args.warm
    pg_search.TOPK_SERVER = args.topk == "server"
    if args.measure:
        res = measure(args.measure, [int(x) for x in args.clients.split(",")], args.repeat)
        res["topk"] = args.topk
        print(json.dumps(res, indent=1))
        if args.json:
            args.json.write_text(json.dumps(res, indent=1), encoding="utf-8")
        return
    server: Any = None
    url = args.pg_url
    if not url:
        import pgserver

        server = pgserver.get_server(  # type: ignore[attr-defined]
            tempfile.mkdtemp(prefix="cairn-bench-pg-"), cleanup_mode="delete")
        url = server.get_uri()
    try:
        with tempfile.TemporaryDirectory(prefix="cairn-scale-") as tmp:
            work = Path(tmp)
            result: dict[str, Any] = {}
            if args.grow:
                result["grow"] = grow(url, work, args.chunks, args.grow,
                                      [int(x) for x in args.clients.split(",")],
                                      args.backends.split(",")[0])
                print(json.dumps(result["grow"], indent=1))
                if args.json:
                    args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
                return
            if args.scifact:
                result["scifact"] = scifact(url, work)
                print(json.dumps(result["scifact"], indent=1))
            if not args.chunks:  # --scifact alone
                if args.json:
                    args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
                return
            result["scale"] = scale(url, work, args.chunks,
                                    [int(x) for x in args.clients.split(",")],
                                    tuple(args.backends.split(",")))
            print(json.dumps(result["scale"], indent=1))
            if args.json:
                args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    finally:
        if server is not None:
            server.cleanup()


if __name__ == "__main__":
    main()
