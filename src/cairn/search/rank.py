"""Ranking: the keyword, semantic and hybrid lists and their fusion (DESIGN.md,
Retrieval), keyed by unit id.

Modes:

* ``keyword`` — the store's text ranking (BM25 over FTS5 in SQLite); the score is BM25.
* ``semantic`` — exact cosine over chunk vectors (:mod:`cairn.search.dense`); a unit
  scores its best chunk's cosine.
* ``hybrid`` — both lists, ``depth`` candidates each, fused by RRF (default) or the
  linear blend (:mod:`cairn.search.fusion`), whose ``graph``, ``time_decay`` and
  ``type_weight`` terms are computed here.

The query language is the keyword one: filters restrict both lists (the semantic list
to the units the filters allow), ``-word`` terms remove units from both, and the
semantic query text is the positive words and phrases.

The rule that a document's title-only preamble is not listed when another unit of its
document is (:mod:`cairn.search.preambles`) is applied here before the list is cut,
asking the lists for more when it removed too much, so ``limit`` hits come back whenever
that many units match. The blend's other inputs are :mod:`cairn.search.blend`'s, the
exact-title rule :mod:`cairn.search.titles`'.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING, Any

from cairn.config import SearchConfig
from cairn.embed.base import Embedder
from cairn.embed.rerank import Reranker
from cairn.errors import ProviderUnavailable
from cairn.model import TextQuery, UnitFacts
from cairn.search.blend import Proximity, blend_signals
from cairn.search.conversation import rank_turns
from cairn.search.coverage import add_coverage
from cairn.search.dates import DATE_FIELDS, today
from cairn.search.dense import DenseHit, DenseIndex, encode_query
from cairn.search.documents import (
    CROWD_WINDOW,
    add_document_score,
    add_link_hop,
    crowd_files,
)
from cairn.search.fusion import Fused, FusionConfig, linear, rrf, single
from cairn.search.preambles import drop_shadowed, settle_preambles
from cairn.search.query import Query, parse_query
from cairn.search.rerank import rerank_fused
from cairn.search.titles import TITLE_WINDOW, promote_exact_titles
from cairn.search.turns import with_turn_context
from cairn.search.understand import DEPTH, Recognised, Vocabulary, boost, recognise
from cairn.store import Store

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

MODES = ("keyword", "semantic", "hybrid")
SPARE = 10
"""Candidates asked for beyond the cut (units shadowed or gone since ranking)."""
_ALL = 1 << 30

@dataclass(frozen=True, slots=True)
class Ranking:
    """Fused results before they become hits.

    Attributes:
        query: the parsed query.
        mode: the mode actually used (after any fallback).
        fused: results best first, keys unit ids; shadowed preambles and units gone
            from the index already dropped; at least ``limit`` when that many match.
        chunks: unit id → the chunk that gave its semantic score.
        facts: unit id → :class:`UnitFacts` of every fused unit.
        text_query: what the store ranked; ``syntax`` its backend rendering (FTS5).
        notes: messages for the user (parse notes, fallbacks).
        took_ms: time spent.
        reranked_by: the reranker's name when the top results were re-ranked.
        rerank_ms: time the re-rank took (0 when none ran).
        keyword_parts: unit id → the named parts of a chat message's keyword score
            that its neighbours or its speaker raised
            (:func:`cairn.search.turns.keyword_parts`); other units are absent.
    """

    query: Query
    mode: str
    fused: list[Fused]
    chunks: dict[str, DenseHit] = field(default_factory=dict)
    facts: dict[str, UnitFacts] = field(default_factory=dict)
    syntax: str | None = None
    notes: tuple[str, ...] = ()
    took_ms: float = 0.0
    reranked_by: str | None = None
    rerank_ms: float = 0.0
    keyword_parts: dict[str, dict[str, float]] = field(default_factory=dict)


SIDE_WORKERS = 4
"""Threads that search hybrid's semantic list while the caller searches the keyword list
(stores with ``concurrent_reads``); when all are busy the caller searches both."""

_side_pool: ThreadPoolExecutor | None = None
_side_slots = threading.BoundedSemaphore(SIDE_WORKERS)
_side_lock = threading.Lock()


def _side_by_side(store: Store, fn: Callable[..., Any], *args: Any
                  ) -> Callable[[], Any] | None:
    """``fn(*args)`` started on a side thread when the store serves concurrent reads
    and a side thread is free: a function that waits for its result (raising what it
    raised); ``None`` to run it in the caller."""
    global _side_pool
    if not getattr(store, "concurrent_reads", False) or not _side_slots.acquire(blocking=False):
        return None
    with _side_lock:
        if _side_pool is None:
            # imported here: it loads logging, which a keyword search never needs
            from concurrent.futures import ThreadPoolExecutor

            _side_pool = ThreadPoolExecutor(SIDE_WORKERS, thread_name_prefix="cairn-side")
    try:
        fut = _side_pool.submit(fn, *args)
    except BaseException:
        _side_slots.release()
        raise
    fut.add_done_callback(lambda _f: _side_slots.release())
    return fut.result


class Ranker:
    """Rank units in ``keyword``, ``semantic`` or ``hybrid`` mode.

    Args:
        store: the open store.
        config: keyword settings (BM25 column weights, default limit).
        embedder: the embedder whose space is searched, or ``None`` (keyword only).
        fusion: fusion settings; the embedder's recommended fusion (its ``fusion``
            attribute, from the model folder's ``fusion.json``) fills what they leave
            unset (:meth:`FusionConfig.with_model`).
        type_weights: note type (case-folded) → ``retriever_weight``, for the blend.
        now: POSIX time used for ``time_decay`` (``None``: the clock at each query).
        graph_proximity: the blend's ``graph`` term (see :data:`Proximity`).
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
        graph_proximity: Proximity | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.embedder = embedder
        # a model may recommend its own fusion (a weak one weighs less): it applies to
        # what cairn.toml did not set (a config built in code is taken as given)
        base = fusion if fusion is not None else FusionConfig(explicit=frozenset())
        self.fusion = base.with_model(getattr(embedder, "fusion", None))
        self.type_weights = {k.casefold(): float(v) for k, v in (type_weights or {}).items()}
        self.now = now
        self.graph_proximity = graph_proximity
        self.vocabulary = Vocabulary()  # what query words may name, kept between queries
        self.dense = (
            DenseIndex(store.vectors, embedder.fingerprint) if embedder is not None else None
        )

    # --- availability -----------------------------------------------------------------
    def semantic_unavailable(self) -> str | None:
        """Why semantic search cannot run now, or ``None`` when it can."""
        if self.embedder is None or self.dense is None:
            return "no embedding model is available"
        if self.dense.size() == 0:
            return f"no vectors for {self.embedder.name} yet (run `cairn embed`)"
        return None

    def default_mode(self) -> str:
        """``hybrid`` when embeddings exist for the embedder, else ``keyword``."""
        return "keyword" if self.semantic_unavailable() else "hybrid"

    def _resolve_mode(self, mode: str | None, query: Query, notes: list[str]) -> str:
        want = mode or self.default_mode()
        if want not in MODES:
            notes.append(f"unknown mode {want!r}; using {self.default_mode()}")
            want = self.default_mode()
        if want != "keyword":
            why = self.semantic_unavailable()
            if why:
                notes.append(f"{want} search unavailable ({why}); showing keyword results")
                want = "keyword"
        if want != "keyword" and not query.positive and not query.is_empty and mode is not None:
            notes.append("no words to search by meaning; filters only")
            want = "keyword"
        return want

    # --- lists ------------------------------------------------------------------------
    def _keyword(
        self, tq: TextQuery, limit: int, turns: bool = True,
        parts: dict[str, dict[str, float]] | None = None,
    ) -> list[tuple[str, float]]:
        """The keyword list; ``turns``: chat turns weighed with their neighbours (the
        parts of the raised scores go to ``parts``)."""
        if not tq.positive and not tq.filters:
            return []

        def search(n: int) -> list[tuple[str, float]]:
            return self.store.search_text(tq, limit=n, weights=self.config.weights)

        if not tq.positive or not turns:  # filters only: path and outline order
            return search(limit)
        # chat turns: a neighbouring turn's match counts (cairn.search.turns)
        words = {t.casefold() for term in tq.positive for t in term.tokens}
        return with_turn_context(self.store, search(limit), limit, search, words, parts)

    def _settle(
        self, kw: Sequence[tuple[str, float]], tq: TextQuery, facts: dict[str, UnitFacts]
    ) -> list[tuple[str, float]]:
        """The keyword list with title-only preambles settled at any depth
        (:func:`cairn.search.preambles.settle_preambles`)."""
        def best(q: TextQuery, docs: list[str]) -> dict[str, list[str]]:
            return self.store.best_in_documents(q, docs, per_document=2,
                                                weights=self.config.weights)

        return settle_preambles(kw, tq, facts, best, self.store.unit_facts)

    def _semantic(
        self, query: Query, tq: TextQuery, limit: int
    ) -> tuple[list[DenseHit], Any]:
        assert self.dense is not None and self.embedder is not None
        text = " ".join(t.text or " ".join(t.tokens) for t in query.positive).strip()
        if not text:
            return [], None
        weights = self.config.weights
        excluded: set[str] = set()
        negs = tuple(replace(t, negate=False) for t in tq.negative)
        if negs:
            excluded = {
                u
                for u, _ in self.store.search_text(
                    TextQuery(negs, alternates=True), limit=_ALL, weights=weights
                )
            }
        qvec = encode_query(self.embedder, text)
        hits: list[DenseHit] | None = None
        allowed: set[str] | None = None
        if tq.filters:
            # the best units asked about the filter first (cheap when many pass it);
            # a selective filter lists the units it passes instead
            hits = self.dense.search_where(
                qvec, limit, lambda ids: set(self.store.filter_units(ids, tq)),
                excluded=excluded, include_alternates=tq.alternates)
            if hits is None:
                only = TextQuery((), tq.filters, tq.alternates)
                allowed = {
                    u
                    for u, _ in self.store.search_text(
                        only,
                        limit=_ALL,
                        weights=weights,
                        whole_documents=False,
                    )
                }
        if hits is None:
            hits = self.dense.search(
                qvec, limit, allowed=allowed, excluded=excluded,
                include_alternates=tq.alternates)
        floor = self.fusion.min_similarity
        return [h for h in hits if h.score >= floor], qvec

    def _unembedded(
        self, kw: Sequence[tuple[str, float]], dense: Sequence[DenseHit], qvec: Any
    ) -> set[str]:
        """Keyword hits the semantic list cannot hold: units with no vector in this
        space (all metadata and no text, or still waiting to be embedded)."""
        if qvec is None or self.dense is None:
            return set()
        in_sem = {h.unit_id for h in dense}
        rest = [k for k, _ in kw if k not in in_sem]
        if not rest:
            return set()
        return set(rest) - set(self.dense.unit_similarity(qvec, rest))

    def _fuse(
        self, mode: str, query: Query, tq: TextQuery, k: int, n: int,
        parts: dict[str, dict[str, float]] | None = None,
    ) -> tuple[list[Fused], dict[str, DenseHit], dict[str, UnitFacts], bool]:
        """One try for ``k`` results: lists of ``n`` candidates (hybrid: ``k`` but at
        least ``depth`` each), fused; the last value says whether a list may hold more.
        ``parts`` gains the keyword list's :attr:`Ranking.keyword_parts`."""
        if mode == "keyword":
            kw = self._keyword(tq, n, parts=parts)
            facts = self.store.unit_facts([k for k, _ in kw])
            kept = self._settle(kw, tq, facts)
            return single("bm25", kept), {}, facts, len(kw) >= n
        if mode == "semantic":
            dense, _ = self._semantic(query, tq, n)
            facts = self.store.unit_facts([h.unit_id for h in dense])
            fused = single("cosine", [(h.unit_id, h.score) for h in dense])
            return fused, {h.unit_id: h for h in dense}, facts, len(dense) >= n
        depth = max(k, self.fusion.depth)
        side = _side_by_side(self.store, self._semantic, query, tq, depth)
        kw = self._keyword(tq, depth, parts=parts)
        dense, qvec = side() if side else self._semantic(query, tq, depth)
        facts = self.store.unit_facts([k for k, _ in kw] + [h.unit_id for h in dense])
        # ranks in the keyword list are counted after shadowed preambles are settled
        kw_kept = self._settle(kw, tq, facts)
        sem = [(h.unit_id, h.score) for h in dense]
        if self.fusion.method == "linear":
            now = self.now if self.now is not None else time.time()
            signals = blend_signals(kw_kept, sem, qvec, facts, dense=self.dense, now=now,
                                    type_weights=self.type_weights,
                                    graph_proximity=self.graph_proximity)
            fused = linear(kw_kept, sem, signals, self.fusion)
        else:
            fused = rrf(
                {"keyword": kw_kept, "semantic": sem},
                k=self.fusion.rrf_k,
                weights=self.fusion.weights,
                unlistable={"semantic": self._unembedded(kw_kept, dense, qvec)},
                relative=self.fusion.relative,
            )
        # speakers; a question answered; a list spread over conversations
        fused = rank_turns(self.store, tq, fused, facts, query.text)
        if self.fusion.method != "linear":
            fused = add_coverage(self.store, tq.positive, fused, self.fusion.coverage, facts)
            fused = add_document_score(fused, facts, self.fusion.document, self.fusion.weights)
            fused = add_link_hop(self.store, fused, facts, self.fusion.link_hop)
        more = len(kw) >= depth or len(dense) >= depth
        return fused, {h.unit_id: h for h in dense}, facts, more

    def _understood(self, query: Query, found: list[Recognised], fused: list[Fused],
                    facts: dict[str, UnitFacts]) -> list[Fused]:
        """``fused`` with the units carrying what the query's words name (``found``)
        raised (:func:`cairn.search.understand.boost`); units it brings in join
        ``facts``."""
        fused, added = boost(self.store, query, fused, found, today=self._today(query),
                             weights=self.config.weights)
        if added:
            facts.update(self.store.unit_facts(added))
            fused = [fused[i] for i in drop_shadowed(fused, facts)]
        return fused

    def _today(self, query: Query) -> date:
        """The day dates in a query's words count from: a date filter's day (the
        search's ``today``), else the ranker's ``now``, else ``$CAIRN_TODAY`` or the
        local date."""
        for f in query.filters:
            if f.field in DATE_FIELDS and f.key:
                return date.fromisoformat(f.key)
        return date.fromtimestamp(self.now) if self.now is not None else today()

    def rank(
        self,
        text: str | Query,
        *,
        mode: str | None = None,
        limit: int | None = None,
        reranker: Reranker | None = None,
        rerank_top_k: int = 30,
    ) -> Ranking:
        """Rank units for ``text`` without building hits.

        Args:
            text: the query (see :mod:`cairn.search.query`), or one already parsed
                (its ``alternates`` says whether chat units off the canonical branch
                may be ranked; text: never).
            mode: ``keyword``, ``semantic``, ``hybrid`` or ``None`` (the default mode).
            limit: results wanted (default: the configured limit).
            reranker: re-rank the first ``rerank_top_k`` fused results with it
                (:mod:`cairn.search.rerank`; before exact titles are promoted); a
                reranker that fails leaves the fused order, with a note.

        Returns:
            A :class:`Ranking` of at least ``limit`` results when that many units
            match (a few spare beyond), best first. Never raises for any user text;
            an unknown mode falls back to the default with a note.

        Raises:
            cairn.errors.ProviderUnavailable: the embedder failed to encode the query.
        """
        t0 = time.perf_counter()
        query = text if isinstance(text, Query) else parse_query(text)
        notes = list(query.notes)
        k = max(1, limit or self.config.limit)
        want = self._resolve_mode(mode, query, notes)
        if query.is_empty:
            return Ranking(query, want, [], notes=tuple(notes))
        tq = query.for_store()
        found = (recognise(self.store, query, self._today(query),
                           self.vocabulary.current(self.store)) if query.positive else [])
        # query understanding looks at the first DEPTH results whatever k is: they must
        # be there in full (after shadowed preambles are dropped), or a deeper read
        # would boost a unit a shallower one left out
        need = max(k, DEPTH) if found else k
        if query.filters and query.positive:  # so does the per-file cap (crowd_files)
            need = max(need, CROWD_WINDOW + 1)
        n, goal = need + SPARE, need
        parts: dict[str, dict[str, float]] = {}
        while True:
            parts.clear()  # a deeper try may see other neighbours
            fused, chunks, facts, more = self._fuse(want, query, tq, goal, n, parts)
            fused = [fused[i] for i in drop_shadowed(fused, facts)]
            if len(fused) >= need or not more:
                break
            n *= 4
            goal = n
        if found:  # the one place query understanding applies
            fused = self._understood(query, found, fused, facts)
        reranked_by, rerank_ms = None, 0.0
        if reranker is not None and query.positive and fused:
            t1 = time.perf_counter()
            top = max(1, rerank_top_k)
            units = self.store.hit_units([f.key for f in fused[: max(top, TITLE_WINDOW)]])
            words = " ".join(t.text or " ".join(t.tokens) for t in query.positive).strip()
            try:
                windows = {k: (h.start, h.end) for k, h in chunks.items()}
                fused = rerank_fused(reranker, words, fused, units, top, windows)
                reranked_by = reranker.name
            except ProviderUnavailable as exc:
                notes.append(f"reranking failed ({exc}); fused order kept")
            rerank_ms = (time.perf_counter() - t1) * 1000
        if query.filters and query.positive:  # one file's units do not fill the page
            fused = crowd_files(fused, facts, self.fusion.per_file)
        if want != "semantic" and query.positive and fused:
            window = [f.key for f in fused[:TITLE_WINDOW]]
            titles = {k: u.title for k, u in self.store.hit_units(window).items()}
            fused = promote_exact_titles(fused, query, titles)
        took = (time.perf_counter() - t0) * 1000
        syntax = self.store.text_query_syntax(tq) if want != "semantic" else None
        return Ranking(
            query, want, fused, chunks, facts, syntax, tuple(notes), took, reranked_by, rerank_ms,
            parts,
        )
