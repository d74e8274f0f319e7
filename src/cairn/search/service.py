"""``SearchService``: one search over one store — keyword, semantic and hybrid
ranking (:mod:`cairn.search.rank`), graph expansion (:mod:`cairn.search.expand`),
hits with snippets and explanations (:mod:`cairn.search.hits`), paging — plus the
embedder it searches with.

The composition root (:class:`cairn.app.Cairn`) attaches one::

    self.semantic = SearchService(self.store, config.search,
                                  SemanticConfig.from_mapping(...), graph=self.graph)

Configuration (``cairn.toml``; chunking is the indexer's)::

    [embed]
    provider = "auto"        # auto | static | minilm | minilm-onnx | http | none
    [rerank]
    provider = "none"        # none | onnx | http (see cairn.embed.rerank)
    [fusion]
    method = "rrf"           # rrf | linear
    rrf_k = 10
    weights = { keyword = 0.5, semantic = 0.5 }
    alpha = 0.45; beta = 0.25; gamma = 0.20; delta = 0.07; epsilon = 0.03; lambda = 0.0025
Per-type ``chunk_profile`` and ``retriever_weight`` come from ``types.yaml``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cairn.config import SearchConfig
from cairn.embed.base import NO_EMBEDDER_NOTICE, Embedder
from cairn.embed.locator import ModelLocator
from cairn.embed.registry import EmbedConfig, make_embedder
from cairn.embed.rerank import RerankConfig, Reranker, make_reranker
from cairn.errors import ConfigError, ProviderUnavailable, QueryError
from cairn.model import Hit
from cairn.model.search_request import SearchRequest
from cairn.search.blend import Proximity
from cairn.search.dates import today as today_of
from cairn.search.expand import POOL, Entry, expand_entries
from cairn.search.fusion import FusionConfig
from cairn.search.hits import build_hits, explain_fused
from cairn.search.query import Query, parse_query
from cairn.search.rank import Ranker, Ranking
from cairn.search.sort import SORT_POOL, parse_sort, sort_units
from cairn.store import Store

if TYPE_CHECKING:
    from cairn.graph.service import GraphService

UNSET: Any = object()
"""The default of ``embedder``: build one from the ``[embed]`` settings on first use."""
_UNSET = UNSET


@dataclass(frozen=True, slots=True)
class SemanticConfig:
    """The ``[embed]``, ``[fusion]`` and ``[rerank]`` sections (chunking is the
    indexer's)."""

    embed: EmbedConfig = field(default_factory=EmbedConfig)
    fusion: FusionConfig = field(default_factory=FusionConfig)
    rerank: RerankConfig = field(default_factory=RerankConfig)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> SemanticConfig:
        """Read the sections from the configuration's tables.

        Raises:
            ConfigError: a section is not a table or holds a bad value.
        """

        def table(name: str) -> Mapping[str, Any]:
            v = data.get(name, {})
            if not isinstance(v, Mapping):
                raise ConfigError(f"[{name}] must be a table")
            return v

        return cls(
            embed=EmbedConfig.from_mapping(table("embed")),
            fusion=FusionConfig.from_mapping(table("fusion")),
            rerank=RerankConfig.from_mapping(table("rerank")),
        )


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One page of hits for a query, with the parsed query, timing (milliseconds),
    notes for the user, and the page's ``offset`` (hits are ranked from
    ``offset + 1``; ask for the next page at ``offset + len(hits)``)."""

    query: Query
    hits: tuple[Hit, ...]
    took_ms: float
    notes: tuple[str, ...] = field(default=())
    offset: int = 0


_TODO_STATES = ("open", "done", "any", "*")

NEAREST_BY_MEANING = "no word of the query matched: these are the nearest by meaning"
"""The note of a semantic or hybrid search none of whose hits matched a word."""


def value_notes(store: Store, query: Query) -> list[str]:
    """Notes for ``format:``, ``kind:``, ``todo:`` and ``role:`` filters whose value
    nothing in the index has, naming the values it does have (asked only when a query
    found nothing: the look-up scans the units)."""
    out: list[str] = []
    seen: dict[str, list[str]] = {}
    for f in query.filters:
        if f.negate or f.field not in ("format", "kind", "todo", "role"):
            continue
        if f.field not in seen:
            seen[f.field] = store.filter_values(f.field)
        known = seen[f.field]
        if f.field == "todo":
            ok = f.value in _TODO_STATES or f.value in known
            choices = [*_TODO_STATES[:3], *known]
        else:
            ok = f.value.casefold() in {v.casefold() for v in known}
            choices = known
        if not ok:
            listed = ", ".join(choices) if choices else "none yet"
            out.append(
                f"{f.field}:{f.value} matches nothing in this index; {f.field} values: {listed}"
            )
    return out


class SearchService:
    """Search (and the embeddings it needs) over one store.

    Args:
        store: the open store.
        search_config: keyword settings.
        config: embedding and fusion settings.
        embedder: an embedder to use instead of building one from ``config`` (``None``
            turns embeddings off); built lazily on first use otherwise.
        types: a ``types.yaml`` registry (:class:`cairn.formats.types.TypeRegistry`)
            for per-type chunk profiles and retriever weights.
        locator: where models are looked for.
        graph_proximity: ``[(unit id, score)] -> {unit id: proximity in [0, 1]}`` of
            units near ranked hits, the ``graph`` term of the linear blend (default:
            ``graph.proximity`` when ``graph`` is given).
        graph: the graph service, for ``expand`` (graph expansion) and proximity.
        graph_factory: gives the graph service when needed, instead of ``graph`` (a
            keyword search without expansion never asks, so its owner need not build
            it nor import the graph builders).
        reranker: a reranker to use instead of building one from ``config.rerank``
            (``None``: none); built on the first search that reranks otherwise.
    """

    def __init__(
        self,
        store: Store,
        search_config: SearchConfig,
        config: SemanticConfig | None = None,
        *,
        embedder: Embedder | None = _UNSET,
        types: Any = None,
        locator: ModelLocator | None = None,
        graph_proximity: Proximity | None = None,
        graph: GraphService | None = None,
        graph_factory: Callable[[], GraphService] | None = None,
        reranker: Reranker | None = _UNSET,
    ) -> None:
        self._graph = graph
        self._graph_factory = graph_factory
        if graph_proximity is None and graph is not None:
            graph_proximity = graph.proximity
        elif graph_proximity is None and graph_factory is not None:

            def graph_proximity(seeds: Sequence[tuple[str, float]]) -> Mapping[str, float]:
                return graph_factory().proximity(seeds)

        self.graph_proximity = graph_proximity
        self.store = store
        self.search_config = search_config
        self.config = config or SemanticConfig()
        self.types = types
        self.locator = locator
        self._embedder: Embedder | None = embedder
        self._reranker: Reranker | None = reranker
        self._rerank_error: str | None = None
        self._ranker: Ranker | None = None
        self._kw_ranker: Ranker | None = None
        self.notices: list[str] = []

    @property
    def graph(self) -> GraphService | None:
        """The graph service: ``graph_factory()`` when given (asked each time, so the
        owner may build it lazily or replace it), else ``graph``. Only graph expansion
        and the linear blend's graph term need it."""
        if self._graph_factory is not None:
            return self._graph_factory()
        return self._graph

    # --- embedder ---------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        """The embedder, built on first use; ``None`` (with a notice) when unavailable."""
        if self._embedder is _UNSET:
            try:
                self._embedder = make_embedder(self.config.embed, self.locator)
            except ProviderUnavailable as exc:
                self._embedder = None
                self.notices.append(f"{exc}; {NO_EMBEDDER_NOTICE}")
        return self._embedder

    def reranker(self) -> tuple[Reranker | None, str | None]:
        """``(reranker, None)``, or ``(None, why)`` when none is configured or it cannot
        be loaded (built on first use; a failure is remembered)."""
        if self._reranker is _UNSET:
            try:
                self._reranker = make_reranker(self.config.rerank)
                if self._reranker is None:
                    self._rerank_error = (
                        "no reranker configured: set [rerank] provider to onnx or http"
                    )
            except (ProviderUnavailable, ConfigError) as exc:
                self._reranker = None
                self._rerank_error = str(exc)
        if self._reranker is None:
            return None, self._rerank_error or "no reranker configured"
        return self._reranker, None

    def type_weights(self) -> dict[str, float]:
        """Note type → ``retriever_weight`` from ``types.yaml`` (aliases included)."""
        out: dict[str, float] = {}
        for t in getattr(self.types, "types", {}).values():
            for name in (t.name, *t.aliases):
                out[name.casefold()] = float(t.retriever_weight)
        return out

    def use_embedder(self, embedder: Embedder | None) -> None:
        """Search and embed with ``embedder`` from now on (e.g. the fast profile's
        model just trained, ``StaticTrainer.train``); the rankers that
        held the old one are rebuilt on the next search."""
        self._embedder = embedder
        self._ranker = None

    def set_types(self, types: Any) -> None:
        """Use these note types (``types.yaml``) for chunk profiles and retriever weights
        from now on (the composition root loads them once per run)."""
        self.types = types
        self._ranker = None  # its type weights came from the old registry

    def ranker(self) -> Ranker:
        """The ranker over this service's embedder (built once; it keeps the vector
        matrix in memory)."""
        if self._ranker is None:
            self._ranker = Ranker(
                self.store,
                self.search_config,
                self.embedder,
                self.config.fusion,
                type_weights=self.type_weights(),
                graph_proximity=self.graph_proximity,
            )
        return self._ranker

    def has_vectors(self) -> bool:
        """Whether the index holds any embedding at all (of any model)."""
        return self.store.vectors.any_vectors()

    def _keyword_ranker(self) -> Ranker:
        if self._kw_ranker is None:
            self._kw_ranker = Ranker(self.store, self.search_config, None, self.config.fusion)
        return self._kw_ranker

    def _rank(
        self,
        text: str | Query,
        mode: str | None,
        want: int,
        reranker: Reranker | None = None,
    ) -> tuple[Ranking, list[str], list[str]]:
        """The ranking, with notes to put before and after its own."""
        top = self.config.rerank.top_k
        if mode == "keyword" or (self._embedder is _UNSET and not self.has_vectors()):
            # no model load for keyword searches or an index that has no vectors yet
            ranking = self._keyword_ranker().rank(
                text,
                mode="keyword",
                limit=want,
                reranker=reranker,
                rerank_top_k=top,
            )
            if mode in ("semantic", "hybrid"):
                note = f"{mode} search unavailable (no embeddings in this index yet); "
                return ranking, [note + "showing keyword results"], []
            return ranking, [], []
        ranker = self.ranker()
        try:
            ranking = ranker.rank(
                text,
                mode=mode,
                limit=want,
                reranker=reranker,
                rerank_top_k=top,
            )
        except ProviderUnavailable as exc:
            ranking = ranker.rank(
                text,
                mode="keyword",
                limit=want,
                reranker=reranker,
                rerank_top_k=top,
            )
            return ranking, [], [f"semantic search failed ({exc}); keyword results"]
        if self.notices and mode not in (None, "keyword"):
            return ranking, list(self.notices), []
        return ranking, [], []

    def search(self, request: SearchRequest | str, /, **options: Any) -> SearchResult:
        """One page of hits for a request (see :class:`cairn.model.SearchRequest` for
        its fields and :mod:`cairn.search.query` for the query syntax).

        Args:
            request: the search; or its query text, with the other fields as
                ``options`` (``search("compost", mode="keyword")``).

        How the fields are read here: a ``semantic`` or ``hybrid`` request without
        embeddings, or whose model fails, answers with keywords and a note; ``limit``
        hits come back exactly when at least ``offset + limit`` units match, and
        pages at ``0, limit, 2·limit …`` do not overlap and together equal one page
        of their total size (as long as the pages stay within the fusion depth, 100
        candidates per list by default); ``expand`` needs the service's ``graph``
        (unset counts as off); ``rerank`` asked for without a usable reranker
        answers unreranked with a note saying why.

        Raises:
            QueryError: a field has a bad value (see :class:`SearchRequest`), or a
                sort key is unknown.
        """
        req = SearchRequest.of(request, **options)
        t0 = time.perf_counter()
        offset, explain = req.offset, req.explain
        keys = parse_sort(req.sort)
        try:
            now = today_of(req.today)
        except ValueError as exc:  # $CAIRN_TODAY (the request's own day is checked)
            raise QueryError(f"today: {exc}") from exc
        k = max(1, req.limit or self.search_config.limit)
        need = offset + k
        expand = bool(req.expand) and self.graph is not None
        want = need * POOL if expand else need
        if keys:
            want = max(want, SORT_POOL)
        # the query carries the request's alternates to every list, filter and
        # expansion that chooses units (none takes them as a parameter)
        parsed = dataclasses.replace(parse_query(req.text, today=now), alternates=req.alternates)
        reranker, why_not = None, None
        if self.config.rerank.enabled if req.rerank is None else req.rerank:
            reranker, why_not = self.reranker()
            if reranker is not None and self.config.rerank.top_k > want:
                want = self.config.rerank.top_k  # the whole top-k is re-scored
        ranking, before, after = self._rank(parsed, req.mode, want, reranker)
        if why_not:
            before.append(f"not reranked: {why_not}")
        model = self._embedder.name if self._embedder not in (None, _UNSET) else None
        # the fusion the ranker used: the model's recommendation fills cairn.toml's gaps
        fusion = self._ranker.fusion if self._ranker is not None else self.config.fusion
        pool = ranking.fused[:want]
        entries: dict[str, Entry] = {}
        for f in pool:
            chunk = ranking.chunks.get(f.key)
            exp = (
                explain_fused(
                    f,
                    mode=ranking.mode,
                    query=ranking.query,
                    fusion=fusion,
                    chunk=chunk,
                    syntax=ranking.syntax,
                    model=model,
                    reranker=ranking.reranked_by,
                    keyword_parts=ranking.keyword_parts.get(f.key),
                )
                if explain
                else {}
            )
            by_kw = "keyword" in f.ranks or "bm25" in f.ranks
            entries[f.key] = (f.key, f.score, exp, chunk, by_kw)
        if expand and pool:
            assert self.graph is not None
            ordered = expand_entries(
                self.graph,
                self.store,
                pool,
                entries,
                ranking.query,
                explain=explain,
            )
        else:
            ordered = list(entries.values())
        ordered = sort_units(self.store, ordered, lambda e: e[0], keys, now)
        page = ordered[offset:need]
        hits = build_hits(self.store, page, ranking.query, first_rank=offset + 1)
        notes = [*before, *ranking.notes, *after]
        if (
            hits
            and ranking.mode != "keyword"
            and not any(e[4] for e in entries.values())
            and not self._words_match(ranking.query)
        ):
            notes.append(NEAREST_BY_MEANING)
        if not ranking.fused:  # filters are AND-ed: a value nothing has gives no hits
            notes += value_notes(self.store, ranking.query)
        took = round((time.perf_counter() - t0) * 1000, 3)
        return SearchResult(ranking.query, tuple(hits), took, tuple(notes), offset)

    def _words_match(self, query: Query) -> bool:
        """Whether any word of ``query`` matches a unit by keywords (with its filters).
        A semantic list has no keyword side, so its hits alone cannot tell: without this
        every semantic search would say that no word matched."""
        tq = query.for_store()
        if not tq.positive:
            return False
        try:
            return bool(
                self.store.search_text(
                    tq,
                    limit=1,
                    weights=self.search_config.weights,
                )
            )
        except QueryError:
            return False

    def candidates(
        self, text: str, *, mode: str | None = None, limit: int = 200,
        include_alternates: bool = False,
    ) -> list[str]:
        """The unit ids ``text`` ranks first (at most ``limit``), best first: the
        candidates a page of hits is cut from, for facet counts. Never raises for
        ``text``; the same fallbacks as :meth:`search`."""
        query = dataclasses.replace(parse_query(text), alternates=include_alternates)
        ranking, _, _ = self._rank(query, mode, max(1, limit))
        return [f.key for f in ranking.fused[:limit]]

    def status(self) -> dict[str, Any]:
        """Provider, spaces and chunk/vector counts, JSON-ready."""
        vs = self.store.vectors
        emb = self.embedder
        return {
            "provider": self.config.embed.provider,
            "model": emb.name if emb else None,
            "space": emb.fingerprint if emb else None,
            **vs.counts(),
            "spaces": [dataclasses.asdict(s) for s in vs.spaces()],
            "notices": list(self.notices),
        }

    def check(self) -> list[str]:
        """Problems of the chunk and vector tables (``[]`` = fine); also counts chunks
        lacking a vector when the embedder is already loaded (no model is loaded here)."""
        emb = self._embedder
        space = emb.fingerprint if emb is not None and emb is not _UNSET else None
        return self.store.vectors.integrity_check(space)


SemanticService = SearchService
"""The former name of :class:`SearchService` (the composition root still uses it)."""
