"""Keyword, semantic and hybrid search with explanations (DESIGN.md, Retrieval).

Modes:

* ``keyword`` — BM25 over FTS5 (the store's ``search_fts``, the same candidates as
  :class:`cairn.search.engine.Searcher`); the score is BM25.
* ``semantic`` — exact cosine over chunk vectors (:mod:`cairn.search.dense`); a unit
  scores its best chunk's cosine.
* ``hybrid`` — both lists, ``depth`` candidates each, fused by RRF (default) or the
  linear blend (:mod:`cairn.search.fusion`).

The query language is the keyword one: filters restrict both lists (the semantic list
to the units the filters allow), ``-word`` terms remove units from both, and the
semantic query text is the positive words and phrases. Without an embedder, or with no
vectors in its space, semantic and hybrid requests fall back to keyword search and say
so in the result's notes.

With ``explain``, each hit's ``explain`` holds the mode, each list's rank and raw score
(``keyword: {rank, bm25}``, ``semantic: {rank, cosine, chunk}``), the named
``summands`` and the ``score`` they add up to (``math.fsum``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cairn.config import SearchConfig
from cairn.embed.base import Embedder
from cairn.model import Hit
from cairn.search.dense import DenseHit, DenseIndex, encode_query
from cairn.search.engine import SearchResult, build_hit
from cairn.search.fusion import Fused, FusionConfig, Signals, linear, rrf, single
from cairn.search.query import Query, Term, parse_query, to_fts
from cairn.search.snippet import make_snippet, term_patterns
from cairn.store import Store
from cairn.store.sqlite.vectors import VectorStore

MODES = ("keyword", "semantic", "hybrid")
_ALL = 1 << 30


@dataclass(frozen=True, slots=True)
class Ranking:
    """Fused results before they become hits.

    Attributes:
        query: the parsed query.
        mode: the mode actually used (after any fallback).
        fused: results best first (keys are unit rowids).
        chunks: unit rowid → id of the chunk that gave its semantic score.
        fts_query: the FTS5 MATCH expression, or ``None``.
        notes: messages for the user (parse notes, fallbacks).
        took_ms: time spent.
    """

    query: Query
    mode: str
    fused: list[Fused]
    chunks: dict[int, int] = field(default_factory=dict)
    fts_query: str | None = None
    notes: tuple[str, ...] = ()
    took_ms: float = 0.0


class HybridSearcher:
    """Search in ``keyword``, ``semantic`` or ``hybrid`` mode.

    Args:
        store: the open store.
        config: keyword settings (BM25 column weights, default limit).
        embedder: the embedder whose space is searched, or ``None`` (keyword only).
        fusion: fusion settings.
        type_weights: note type → ``retriever_weight`` (``types.yaml``), for the
            linear blend.
        now: POSIX time used for ``time_decay`` (``None``: the clock at each query).
    """

    def __init__(
        self,
        store: Store,
        config: SearchConfig,
        embedder: Embedder | None = None,
        fusion: FusionConfig | None = None,
        *,
        type_weights: Mapping[str, float] | None = None,
        now: float | None = None,
        graph_proximity: Callable[[list[tuple[int, float]]], Mapping[int, float]] | None = None,
    ) -> None:
        self.graph_proximity = graph_proximity
        self.store = store
        self.config = config
        self.embedder = embedder
        self.fusion = fusion or FusionConfig()
        self.type_weights = {k.casefold(): float(v) for k, v in (type_weights or {}).items()}
        self.now = now
        self.dense = DenseIndex(store, embedder.fingerprint) if embedder is not None else None
        self._vectors: VectorStore | None = None

    @property
    def vectors(self) -> VectorStore:
        """The chunk/vector tables (created on first use)."""
        if self._vectors is None:
            self._vectors = self.dense.vectors if self.dense else VectorStore(self.store)
        return self._vectors

    # --- availability -----------------------------------------------------------------
    def semantic_unavailable(self) -> str | None:
        """Why semantic search cannot run now, or ``None`` when it can."""
        if self.embedder is None or self.dense is None:
            return "no embedding model is available"
        if self.dense.size() == 0:
            return f"no vectors for {self.embedder.name} yet (run cairn index)"
        return None

    def default_mode(self) -> str:
        """``hybrid`` when embeddings exist for the embedder, else ``keyword``."""
        return "keyword" if self.semantic_unavailable() else "hybrid"

    # --- ranking ----------------------------------------------------------------------
    def _keyword(
        self, query: Query, match: str | None, limit: int, include_alternates: bool
    ) -> list[tuple[int, float]]:
        if match is None and not query.filters:
            return []
        ranked = self.store.search_fts(
            match,
            query.filters,
            limit=limit,
            weights=self.config.weights,
            include_alternates=include_alternates,
        )
        # as the keyword searcher does: a title-only preamble is not listed when
        # another unit of its document is (ranks are counted after that)
        flags = self.vectors.title_only([r for r, _ in ranked])
        with_content = {doc for doc, only_title in flags.values() if not only_title}
        keep = {
            r for r, (doc, only_title) in flags.items() if not (only_title and doc in with_content)
        }
        return [(r, s) for r, s in ranked if r in keep]

    def _semantic(
        self, query: Query, limit: int, include_alternates: bool
    ) -> tuple[list[DenseHit], Any]:
        assert self.dense is not None and self.embedder is not None
        text = " ".join(t.text or " ".join(t.tokens) for t in query.positive).strip()
        if not text:
            return [], None
        allowed: set[int] | None = None
        if query.filters:
            allowed = {
                r
                for r, _ in self.store.search_fts(
                    None,
                    query.filters,
                    limit=_ALL,
                    weights=self.config.weights,
                    include_alternates=include_alternates,
                )
            }
        excluded: set[int] = set()
        negs = tuple(Term(t.tokens, t.cjk, False, t.text) for t in query.terms if t.negate)
        if negs:
            neg_match = to_fts(Query(query.text, negs))
            if neg_match:
                excluded = {
                    r
                    for r, _ in self.store.search_fts(
                        neg_match,
                        (),
                        limit=_ALL,
                        weights=self.config.weights,
                        include_alternates=True,
                    )
                }
        qvec = encode_query(self.embedder, text)
        hits = self.dense.search(
            qvec, limit, allowed=allowed, excluded=excluded, include_alternates=include_alternates
        )
        floor = self.fusion.min_similarity
        return [h for h in hits if h.score >= floor], qvec

    def rank(
        self,
        text: str,
        *,
        mode: str | None = None,
        limit: int | None = None,
        include_alternates: bool = False,
    ) -> Ranking:
        """Rank units for ``text`` without building hits (used by :meth:`search` and eval).

        Args:
            text: the query (see :mod:`cairn.search.query`).
            mode: ``keyword``, ``semantic``, ``hybrid`` or ``None`` (the default mode).
            limit: results wanted (default: the configured limit).
            include_alternates: also chat units off the canonical branch.

        Returns:
            A :class:`Ranking` with at most ``limit`` + a few spare results, best first.
            Never raises for any user text; an unknown mode falls back to the default.
        """
        t0 = time.perf_counter()
        query = parse_query(text)
        notes = list(query.notes)
        k = max(1, limit or self.config.limit)
        want = mode or self.default_mode()
        if want not in MODES:
            notes.append(f"unknown mode {want!r}; using {self.default_mode()}")
            want = self.default_mode()
        if want != "keyword":
            why = self.semantic_unavailable()
            if why:
                notes.append(f"{want} search unavailable ({why}); showing keyword results")
                want = "keyword"
        if query.is_empty:
            return Ranking(query, want, [], notes=tuple(notes))
        match = to_fts(query)
        if want != "keyword" and not query.positive and mode is not None:
            notes.append("no words to search by meaning; filters only")
            want = "keyword"
        depth = max(k, self.fusion.depth) if want == "hybrid" else k
        spare = 10  # extra for title-only preambles dropped and units gone since ranking
        chunks: dict[int, int] = {}
        if want == "keyword":
            fused = single("bm25", self._keyword(query, match, k + spare, include_alternates))
        elif want == "semantic":
            dense, _ = self._semantic(query, k + spare, include_alternates)
            chunks = {h.unit_rowid: h.chunk_id for h in dense}
            fused = single("cosine", [(h.unit_rowid, h.score) for h in dense])
        else:
            kw = self._keyword(query, match, depth, include_alternates)
            dense, qvec = self._semantic(query, depth, include_alternates)
            chunks = {h.unit_rowid: h.chunk_id for h in dense}
            sem = [(h.unit_rowid, h.score) for h in dense]
            if self.fusion.method == "linear":
                fused = linear(kw, sem, self._signals(kw, sem, qvec), self.fusion)
            else:
                fused = rrf(
                    {"keyword": kw, "semantic": sem},
                    k=self.fusion.rrf_k,
                    weights=self.fusion.weights,
                )
        took = (time.perf_counter() - t0) * 1000
        return Ranking(query, want, fused[: k + spare], chunks, match, tuple(notes), took)

    def _signals(
        self, kw: list[tuple[int, float]], sem: list[tuple[int, float]], qvec: Any
    ) -> Signals:
        keys = list(dict.fromkeys([k for k, _ in kw] + [k for k, _ in sem]))
        in_sem = {k for k, _ in sem}
        sims: dict[int, float] = {}
        if qvec is not None and self.dense is not None:
            sims = self.dense.unit_similarity(qvec, [k for k in keys if k not in in_sem])
        now = self.now if self.now is not None else time.time()
        meta = self.vectors.unit_dates_types(keys)
        ages: dict[int, float | None] = {}
        tw: dict[int, float] = {}
        for key in keys:
            r = meta.get(key)
            if r is None:
                continue
            ages[key] = _age_days(r, now)
            t = (r["type"] or "").casefold()
            tw[key] = self.type_weights.get(t, 1.0)
        graph: Mapping[int, float] = {}
        if self.graph_proximity is not None:  # the γ·graph term: nearness to the top hits
            seeds = sorted({**dict(sem), **dict(kw)}.items(), key=lambda kv: -kv[1])
            graph = self.graph_proximity(seeds)
        return Signals(sim=sims, age_days=ages, type_weight=tw, graph=dict(graph))

    # --- hits -------------------------------------------------------------------------
    def search(
        self,
        text: str,
        *,
        mode: str | None = None,
        limit: int | None = None,
        explain: bool = False,
        include_alternates: bool = False,
    ) -> SearchResult:
        """Search and build hits (see :meth:`rank` for the arguments).

        Returns:
            A :class:`cairn.search.engine.SearchResult` with exactly ``limit`` hits when
            at least that many live units match, best first, scores distinct.
        """
        t0 = time.perf_counter()
        k = max(1, limit or self.config.limit)
        ranking = self.rank(text, mode=mode, limit=k, include_alternates=include_alternates)
        rows = self.store.unit_rows([f.key for f in ranking.fused])
        fused = _drop_shadowed_preambles(ranking.fused, rows)
        chunk_rows = (
            self.vectors.chunk_units(list(ranking.chunks.values())) if ranking.chunks else {}
        )
        patterns = term_patterns(ranking.query.positive)
        hits: list[Hit] = []
        for f in fused:
            r = rows.get(f.key)
            if r is None:
                continue
            chunk = chunk_rows.get(ranking.chunks.get(f.key, -1))
            body = r["body"] or ""
            if chunk is not None and "keyword" not in f.ranks and "bm25" not in f.ranks:
                source = body[chunk["start"] : chunk["end"]] or body  # the chunk that matched
            else:
                source = body
            snippet, highlights = make_snippet(source if source.strip() else r["title"], patterns)
            exp = self._explain(ranking, f, chunk) if explain else {}
            hits.append(build_hit(self.store, r, len(hits) + 1, f.score, snippet, highlights, exp))
            if len(hits) == k:
                break
        took = (time.perf_counter() - t0) * 1000
        return SearchResult(ranking.query, tuple(hits), round(took, 3), ranking.notes)

    def _explain(self, ranking: Ranking, f: Fused, chunk: Any) -> dict[str, Any]:
        exp: dict[str, Any] = {"mode": ranking.mode}
        kw_name = "keyword" if "keyword" in f.ranks else "bm25"
        sem_name = "semantic" if "semantic" in f.ranks else "cosine"
        if kw_name in f.ranks:
            exp["keyword"] = {"rank": f.ranks[kw_name], "bm25": f.raw[kw_name]}
        if sem_name in f.ranks:
            sem: dict[str, Any] = {"rank": f.ranks[sem_name], "cosine": f.raw[sem_name]}
            if chunk is not None:
                sem["chunk"] = int(chunk["ordinal"])
            exp["semantic"] = sem
        if ranking.mode == "hybrid":
            exp["fusion"] = self.fusion.method
            if self.fusion.method == "rrf":
                exp["rrf_k"] = self.fusion.rrf_k
                exp["list_weights"] = dict(self.fusion.weights)
            else:
                exp["blend"] = {
                    "alpha": self.fusion.alpha,
                    "beta": self.fusion.beta,
                    "gamma": self.fusion.gamma,
                    "delta": self.fusion.delta,
                    "epsilon": self.fusion.epsilon,
                    "lambda": self.fusion.decay_lambda,
                }
        if ranking.fts_query is not None and ranking.mode != "semantic":
            exp["fts_query"] = ranking.fts_query
        if self.embedder is not None and ranking.mode != "keyword":
            exp["model"] = self.embedder.name
        exp["summands"] = dict(f.summands)
        exp["score"] = f.score
        exp["filters"] = [
            {"field": x.field, "value": x.value, "key": x.key, "negate": x.negate}
            for x in ranking.query.filters
        ]
        return exp


def _age_days(r: Any, now: float) -> float | None:
    """Age in days from a unit's time, the document's modified/created date, or mtime."""
    for key in ("time", "modified", "created"):
        v = r[key]
        if v:
            ts = _parse_time(str(v))
            if ts is not None:
                return max(0.0, (now - ts) / 86400.0)
    mtime = r["mtime"]
    return max(0.0, (now - float(mtime)) / 86400.0) if mtime else None


def _parse_time(value: str) -> float | None:
    from datetime import UTC, datetime

    v = value.strip().replace("Z", "+00:00")
    try:
        dt = datetime.fromisoformat(v[:10] if len(v) == 10 else v)
    except ValueError:
        try:
            dt = datetime.fromisoformat(v[:10])
        except ValueError:
            return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _title_only(row: Any) -> bool:
    """A preamble unit that holds nothing but its document's title."""
    body = (row["body"] or "").strip()
    return bool(row["kind"] == "preamble" and (not body or body == (row["title"] or "").strip()))


def _drop_shadowed_preambles(fused: list[Fused], rows: Mapping[int, Any]) -> list[Fused]:
    """Drop a document's title-only preamble when another unit of the same document is
    also a result (one result per place to read), as the keyword searcher does."""
    with_content = {
        rows[f.key]["document_id"] for f in fused if f.key in rows and not _title_only(rows[f.key])
    }
    return [
        f
        for f in fused
        if f.key in rows
        and not (_title_only(rows[f.key]) and rows[f.key]["document_id"] in with_content)
    ]


def summands_add_up(explain: Mapping[str, Any], tol: float = 1e-12) -> bool:
    """Whether an explanation's summands add up to its score (within ``tol``)."""
    s = math.fsum(float(v) for v in explain.get("summands", {}).values())
    return abs(s - float(explain.get("score", math.nan))) <= tol * max(1.0, abs(s))
