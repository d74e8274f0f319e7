"""Retrieval evaluation on BEIR-layout data sets (``cairn eval DIR``).

A BEIR folder holds ``corpus.jsonl`` (``{"_id", "title", "text"}``), ``queries.jsonl``
(``{"_id", "text"}``) and ``qrels/<split>.tsv`` (``query-id corpus-id score`` with a
header line). :func:`evaluate` indexes the corpus into a throwaway store — each record
becomes one Markdown-like document whose single unit has the record's title as its
heading and its text as the body, with the BEIR ``_id`` as document and unit id — embeds
it, runs every query with ``limit = 100`` in each mode, and computes, averaged over the
queries that have qrels (a query with no hits counts 0, as in BEIR):

* nDCG@10 — graded gain ``rel``, discount ``1/log2(rank+1)``, ideal from the qrels
  (trec_eval's ``ndcg_cut_10``);
* Recall@100 — relevant documents (``rel > 0``) found in the top 100 over all relevant;
* MRR@10 — ``1/rank`` of the first relevant hit in the top 10 (0 if none).

Ties are impossible: fused scores are distinct, and the run is ordered by score as
trec_eval orders it. :func:`write_trec_run` writes the standard run file so the numbers
can be checked with ``../shared/bench/eval_beir.py``.
"""

from __future__ import annotations

import csv
import json
import math
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cairn.config import Config, SearchConfig
from cairn.embed.base import NO_EMBEDDER_NOTICE, Embedder
from cairn.errors import CairnError
from cairn.ingest.chunking import ChunkConfig
from cairn.model import HEADING, Document, SourceRoot, Unit
from cairn.search.fusion import FusionConfig
from cairn.search.rank import Ranker
from cairn.store import Store, open_location

Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]


@dataclass(frozen=True, slots=True)
class BeirData:
    """A loaded BEIR data set: corpus ``id -> (title, text)``, queries, qrels."""

    name: str
    corpus: dict[str, tuple[str, str]]
    queries: dict[str, str]
    qrels: Qrels


@dataclass(frozen=True, slots=True)
class ModeResult:
    """Measures of one mode: ``ndcg10``, ``recall100``, ``mrr10``, query latency (ms)."""

    mode: str
    ndcg10: float
    recall100: float
    mrr10: float
    queries: int
    p50_ms: float
    p95_ms: float


@dataclass(frozen=True, slots=True)
class EvalReport:
    """Everything :func:`evaluate` measured."""

    dataset: str
    documents: int
    queries: int
    provider: str
    results: tuple[ModeResult, ...]
    index_seconds: float
    embed_seconds: float
    chunks: int
    notes: tuple[str, ...] = field(default=())
    runs: Mapping[str, Run] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready data (without the runs)."""
        return {
            "dataset": self.dataset,
            "documents": self.documents,
            "queries": self.queries,
            "provider": self.provider,
            "chunks": self.chunks,
            "index_seconds": round(self.index_seconds, 3),
            "embed_seconds": round(self.embed_seconds, 3),
            "notes": list(self.notes),
            "results": [
                {
                    "mode": r.mode,
                    "ndcg@10": round(r.ndcg10, 4),
                    "recall@100": round(r.recall100, 4),
                    "mrr@10": round(r.mrr10, 4),
                    "queries": r.queries,
                    "p50_ms": round(r.p50_ms, 2),
                    "p95_ms": round(r.p95_ms, 2),
                }
                for r in self.results
            ],
        }


def _jsonl(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def load_qrels(path: Path) -> Qrels:
    """Read a qrels TSV (header optional)."""
    qrels: Qrels = {}
    with path.open(newline="", encoding="utf-8") as f:
        for i, row in enumerate(csv.reader(f, delimiter="\t")):
            if len(row) < 3 or (i == 0 and not row[2].strip().lstrip("-").isdigit()):
                continue
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    return qrels


def load_beir(folder: str | Path, split: str = "test") -> BeirData:
    """Load a BEIR folder; only queries with qrels in ``split`` are kept.

    Raises:
        CairnError: a file is missing or not valid JSON lines.
    """
    root = Path(folder)
    try:
        corpus = {
            str(d["_id"]): (str(d.get("title") or ""), str(d.get("text") or ""))
            for d in _jsonl(root / "corpus.jsonl")
        }
        qrels = load_qrels(root / "qrels" / f"{split}.tsv")
        queries = {
            str(q["_id"]): str(q["text"])
            for q in _jsonl(root / "queries.jsonl")
            if str(q["_id"]) in qrels
        }
    except (OSError, ValueError, KeyError) as exc:
        raise CairnError(f"{root}: not a BEIR data set: {exc}") from exc
    return BeirData(root.resolve().name, corpus, queries, qrels)


def beir_root(root_path: str) -> SourceRoot:
    """The source root a BEIR corpus is indexed under (its id names the path)."""
    import hashlib

    return SourceRoot(
        id="beir-" + hashlib.sha256(root_path.encode()).hexdigest()[:16], path=root_path
    )


def _kept_index_ready(store: Store, root: SourceRoot, documents: int, name: str) -> bool:
    """Whether ``store`` (an index the caller keeps) already holds this data set:
    ``True`` when it does (nothing to index again), ``False`` when it is empty.

    Raises:
        CairnError: it holds anything else — a user's notes, another data set —
            which an evaluation must never write over.
    """
    roots = store.roots()
    other = [r for r in roots if r.id != root.id]
    if other:
        raise CairnError(
            f"{name}: this index holds other files ({other[0].path}); cairn eval builds "
            "its own index of the data set and keeps it in the --db file: name a new "
            "file, or one an earlier cairn eval of this data set made"
        )
    return bool(roots) and store.counts()["documents"] == documents


def index_corpus(
    store: Store, corpus: Mapping[str, tuple[str, str]], root_path: str, id_suffix: str = ""
) -> None:
    """Write a BEIR corpus into ``store`` as one document with one unit per record.

    The record ``_id`` (plus ``id_suffix``, for benchmark copies) is the document id
    and the unit id; the title is the unit's heading (and outline path), the text its
    body.
    """
    root = beir_root(root_path)
    store.upsert_root(root)
    with store.transaction():
        for i, (raw_id, (title, text)) in enumerate(corpus.items()):
            doc_id = raw_id + id_suffix
            rel = f"{doc_id}.md"
            unit = Unit(
                ordinal=0,
                level=1,
                kind=HEADING,
                title=title,
                outline_path=(title,) if title else (),
                body=text,
                line_start=1,
                line_end=3,
                id=doc_id,
                document_id=doc_id,
            )
            doc = Document(
                path=rel,
                format="markdown",
                title=title or raw_id,
                units=(unit,),
                id=doc_id,
                root_id=root.id,
                content_hash=str(i),
                size=len(text),
                mtime=0.0,
            )
            store.replace_file(
                root.id,
                rel,
                size=len(text),
                mtime=0.0,
                hash_=str(i),
                format_="markdown",
                documents=[doc],
            )


def ndcg_at(ranked: Sequence[str], rels: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k with linear gains (trec_eval ``ndcg_cut``)."""
    dcg = sum(
        rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if rels.get(d, 0) > 0
    )
    ideal = sorted((r for r in rels.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranked: Sequence[str], rels: Mapping[str, int], k: int = 100) -> float:
    """Relevant documents in the top ``k`` over all relevant ones."""
    relevant = {d for d, r in rels.items() if r > 0}
    if not relevant:
        return 0.0
    return len(relevant & set(ranked[:k])) / len(relevant)


def mrr_at(ranked: Sequence[str], rels: Mapping[str, int], k: int = 10) -> float:
    """Reciprocal rank of the first relevant document in the top ``k``."""
    for i, d in enumerate(ranked[:k], start=1):
        if rels.get(d, 0) > 0:
            return 1.0 / i
    return 0.0


def measure(run: Run, qrels: Qrels) -> tuple[float, float, float]:
    """``(nDCG@10, Recall@100, MRR@10)`` averaged over the queries in ``qrels``.

    Documents are ordered by score (descending), then id, as trec_eval does.
    """
    n = len(qrels)
    if n == 0:
        return 0.0, 0.0, 0.0
    tot = [0.0, 0.0, 0.0]
    for qid, rels in qrels.items():
        scores = run.get(qid, {})
        ranked = sorted(scores, key=lambda d: (-scores[d], d))
        tot[0] += ndcg_at(ranked, rels)
        tot[1] += recall_at(ranked, rels)
        tot[2] += mrr_at(ranked, rels)
    return tot[0] / n, tot[1] / n, tot[2] / n


def write_trec_run(run: Run, path: str | Path, tag: str = "cairn") -> None:
    """Write ``qid Q0 docid rank score tag`` lines, best first per query."""
    with Path(path).open("w", encoding="utf-8") as f:
        for qid in sorted(run):
            scores = run[qid]
            for i, d in enumerate(sorted(scores, key=lambda x: (-scores[x], x)), start=1):
                f.write(f"{qid} Q0 {d} {i} {scores[d]!r} {tag}\n")


def _pct(values: Sequence[float], p: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    i = min(len(s) - 1, max(0, math.ceil(p / 100 * len(s)) - 1))
    return s[i]


def run_queries(
    ranker: Ranker, queries: Mapping[str, str], mode: str, limit: int = 100
) -> tuple[Run, list[float]]:
    """Run every query in ``mode``; returns the run (``qid -> {unit id: score}``) and
    per-query latency in milliseconds. Unit ids are the corpus ids (see
    :func:`index_corpus`)."""
    run: Run = {}
    lat: list[float] = []
    for qid, text in queries.items():
        t0 = time.perf_counter()
        ranking = ranker.rank(_plain(text), mode=mode, limit=limit)
        lat.append((time.perf_counter() - t0) * 1000)
        run[qid] = {f.key: f.score for f in ranking.fused[:limit]}
    return run, lat


def _plain(text: str) -> str:
    """A BEIR query as cairn query text: no filter syntax, exclusions or phrases.

    Words like ``type:`` or a leading ``-`` in a claim are data, not operators.
    """
    out = []
    for w in text.replace('"', " ").split():
        w = w.lstrip("-")
        if ":" in w:
            w = w.replace(":", " ")
        if w:
            out.append(w)
    return " ".join(out)


def evaluate(
    folder: str | Path,
    embedder: Embedder | None,
    *,
    modes: Sequence[str] = ("keyword", "semantic", "hybrid"),
    split: str = "test",
    search_config: SearchConfig | None = None,
    fusion: FusionConfig | None = None,
    chunk_config: ChunkConfig | None = None,
    db_path: str | Path | None = None,
    data: BeirData | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    keep_runs: bool = False,
    store: Store | None = None,
    store_name: str = "the index",
) -> EvalReport:
    """Index a BEIR data set into a throwaway store (or ``store``) and measure each mode.

    Args:
        folder: the BEIR folder.
        embedder: the embedder (``None``: keyword only; other modes are reported as
            skipped in ``notes``).
        modes: modes to measure.
        split: the qrels split.
        search_config: BM25 column weights (default: cairn's).
        fusion: fusion settings (default: RRF k=10, keyword 0.5 / semantic 0.5).
        chunk_config: chunking settings.
        db_path: where to build the store (default: a temporary folder, removed), or
            the URL of an empty PostgreSQL database.
        data: an already loaded data set (skips reading ``folder``).
        progress: embedding progress callback.
        keep_runs: keep each mode's run in the report (for TREC run files).
        store: an open index to build the evaluation in and keep (the caller closes
            it): empty, or holding this data set from an earlier evaluation (then
            only missing vectors are made); ``db_path`` is then ignored.
        store_name: how errors name ``store`` (its file).

    Raises:
        CairnError: the folder is not a BEIR data set, or ``store`` holds other
            files (a user's notes are never written over).
    """
    from cairn.ingest.embedding import embed_pass

    ds = data or load_beir(folder, split)
    notes: list[str] = []
    kept = store is not None
    with tempfile.TemporaryDirectory(prefix="cairn-eval-") as tmp:
        if store is None:  # a URL (an empty PostgreSQL database) or a file
            store = open_location(db_path or Path(tmp) / "eval.db")
        try:
            t0 = time.perf_counter()
            if not kept:
                index_corpus(store, ds.corpus, tmp)
            else:  # a kept index: under the data set's own folder, reused next time
                where = str(Path(folder).resolve())
                root = beir_root(where)
                if not _kept_index_ready(store, root, len(ds.corpus), store_name):
                    index_corpus(store, ds.corpus, where)
            rep = embed_pass(store, embedder, config=chunk_config, progress=progress)
            index_s = time.perf_counter() - t0
            if embedder is None:
                notes.append(NO_EMBEDDER_NOTICE)
            ranker = Ranker(store, search_config or SearchConfig(), embedder, fusion)
            results: list[ModeResult] = []
            runs: dict[str, Run] = {}
            for mode in modes:
                if mode != "keyword" and embedder is None:
                    notes.append(f"{mode}: skipped (no embedder)")
                    continue
                run, lat = run_queries(ranker, ds.queries, mode)
                nd, rc, mr = measure(run, ds.qrels)
                results.append(
                    ModeResult(mode, nd, rc, mr, len(ds.qrels), _pct(lat, 50), _pct(lat, 95))
                )
                if keep_runs:
                    runs[mode] = run
            chunks = store.vectors.counts()["chunks"]
        finally:
            if not kept:
                store.close()
    return EvalReport(
        dataset=ds.name,
        documents=len(ds.corpus),
        queries=len(ds.qrels),
        provider=embedder.name if embedder else "none",
        results=tuple(results),
        index_seconds=index_s,
        embed_seconds=rep.embed_seconds,
        chunks=chunks,
        notes=tuple(notes),
        runs=runs,
    )


class Evaluator:
    """``cairn eval``: one index's model and search, fusion and chunking settings
    measured on a BEIR data set.

    Args:
        store: the index, written only with ``keep``.
        config: its configuration (search weights, chunking, where the index is).
        embedder: returns the index's embedder (``None``: keyword only); called once
            per evaluation, so the model loads only when one is asked for.
        fusion: the index's fusion settings.
    """

    def __init__(
        self,
        store: Store,
        config: Config,
        embedder: Callable[[], Embedder | None],
        fusion: FusionConfig,
    ) -> None:
        self.store = store
        self.config = config
        self.embedder = embedder
        self.fusion = fusion

    def run(
        self,
        folder: str | Path,
        *,
        modes: Sequence[str] = ("keyword", "semantic", "hybrid"),
        split: str = "test",
        keep: bool = False,
    ) -> EvalReport:
        """nDCG@10, Recall@100 and MRR@10 per mode (see :func:`evaluate`), indexed into a
        throwaway store.

        Args:
            keep: index the data set into this index instead and keep it there
                (``cairn eval --db FILE``), so the next evaluation reuses its
                documents and vectors. The index must be empty or hold this data set
                from an earlier evaluation.

        Raises:
            CairnError: the folder is not a BEIR data set; with ``keep``, the index
                holds other files (an index of notes is never written over).
        """
        return evaluate(
            Path(folder),
            self.embedder(),
            modes=modes,
            split=split,
            search_config=self.config.search,
            fusion=self.fusion,
            chunk_config=ChunkConfig.from_mapping(self.config.chunking),
            store=self.store if keep else None,
            store_name=str(self.config.db_path),
        )
