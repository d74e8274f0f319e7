"""``SemanticService``: embeddings, hybrid search and evaluation for one store.

The composition root (:class:`cairn.app.Cairn`) attaches one with a line::

    self.semantic = SemanticService(self.store, config.search,
                                    SemanticConfig.load(config.config_file))

and calls :meth:`SemanticService.after_index` after each indexing run,
:meth:`SemanticService.search` for ``cairn search --mode …`` and
:meth:`SemanticService.evaluate` for ``cairn eval``.

Configuration (``cairn.toml``)::

    [embed]
    provider = "auto"        # auto | static | minilm | minilm-onnx | http | none
    [fusion]
    method = "rrf"           # rrf | linear
    rrf_k = 60
    weights = { keyword = 0.6, semantic = 0.4 }
    alpha = 0.45; beta = 0.25; gamma = 0.20; delta = 0.07; epsilon = 0.03; lambda = 0.0025
    [chunking]
    default_profile = "medium"
    profiles = { short = { target = 96, overlap = 16 }, medium = { target = 192, overlap = 32 } }

Per-type ``chunk_profile`` and ``retriever_weight`` come from ``types.yaml``.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cairn.config import SearchConfig
from cairn.embed.base import Embedder
from cairn.embed.locator import ModelLocator
from cairn.embed.registry import EmbedConfig, make_embedder
from cairn.errors import ConfigError, ProviderUnavailable
from cairn.ingest.chunking import DEFAULT_PROFILES, ChunkConfig, Profile
from cairn.ingest.embedding import NO_EMBEDDER_NOTICE, EmbedProgress, EmbedReport, embed_pass
from cairn.search.engine import SearchResult
from cairn.search.eval import EvalReport, evaluate
from cairn.search.fusion import FusionConfig
from cairn.search.hybrid import HybridSearcher
from cairn.store import Store
from cairn.store.sqlite.vectors import VectorStore

_UNSET: Any = object()
NO_EMBED_NOTICE = (
    "--no-embed: new and changed notes were not embedded; they are found by keywords "
    "until the next `cairn index` without --no-embed"
)


@dataclass(frozen=True, slots=True)
class SemanticConfig:
    """The ``[embed]``, ``[fusion]`` and ``[chunking]`` sections."""

    embed: EmbedConfig = field(default_factory=EmbedConfig)
    fusion: FusionConfig = field(default_factory=FusionConfig)
    chunking: ChunkConfig = field(default_factory=ChunkConfig)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> SemanticConfig:
        """Read the three sections from a parsed ``cairn.toml``.

        Raises:
            ConfigError: a section is not a table or holds a bad value.
        """

        def table(name: str) -> Mapping[str, Any]:
            v = data.get(name, {})
            if not isinstance(v, Mapping):
                raise ConfigError(f"[{name}] must be a table")
            return v

        ch = table("chunking")
        profiles = dict(DEFAULT_PROFILES)
        try:
            for name, p in dict(ch.get("profiles", {})).items():
                profiles[str(name)] = Profile(int(p["target"]), int(p.get("overlap", 0)))
        except (TypeError, ValueError, KeyError) as exc:
            raise ConfigError(f"[chunking] profiles need target and overlap: {exc}") from exc
        default = str(ch.get("default_profile", "medium"))
        if default not in profiles:
            raise ConfigError(f"[chunking] default_profile {default!r} is not a profile")
        return cls(
            embed=EmbedConfig.from_mapping(table("embed")),
            fusion=FusionConfig.from_mapping(table("fusion")),
            chunking=ChunkConfig(profiles=profiles, default_profile=default),
        )

    @classmethod
    def load(
        cls, config_file: str | Path | None, env: Mapping[str, str] | None = None
    ) -> SemanticConfig:
        """Read ``config_file`` (``None`` or missing: defaults); ``CAIRN_EMBED`` in
        ``env`` (default ``os.environ``) overrides ``[embed] provider`` (e.g. ``none``
        to turn embeddings off for a test run).

        Raises:
            ConfigError: the file is unreadable or invalid, or ``CAIRN_EMBED`` names no
                provider.
        """
        env = os.environ if env is None else env
        data: dict[str, Any] = {}
        if config_file is not None and Path(config_file).is_file():
            try:
                data = tomllib.loads(Path(config_file).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise ConfigError(f"{config_file}: cannot read config: {exc}") from exc
        if env.get("CAIRN_EMBED"):
            embed = dict(data.get("embed", {})) if isinstance(data.get("embed"), dict) else {}
            embed["provider"] = env["CAIRN_EMBED"]
            data = {**data, "embed": embed}
        return cls.from_mapping(data)


class SemanticService:
    """Embeddings and hybrid search over one store.

    Args:
        store: the open store.
        search_config: keyword settings.
        config: embedding, fusion and chunking settings.
        embedder: an embedder to use instead of building one from ``config`` (``None``
            turns embeddings off); built lazily on first use otherwise.
        types: a ``types.yaml`` registry (:class:`cairn.formats.types.TypeRegistry`)
            for per-type chunk profiles and retriever weights.
        locator: where models are looked for.
        graph_proximity: ``rowid -> proximity in [0, 1]`` of units near ranked hits
            (:meth:`cairn.graph.service.GraphService.proximity_rowids`), the ``graph``
            term of the linear blend.
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
        graph_proximity: Callable[[list[tuple[int, float]]], Mapping[int, float]] | None = None,
    ) -> None:
        self.graph_proximity = graph_proximity
        self.store = store
        self.search_config = search_config
        self.config = config or SemanticConfig()
        self.types = types
        self.locator = locator
        self._embedder: Embedder | None = embedder
        self._searcher: HybridSearcher | None = None
        self._kw_searcher: HybridSearcher | None = None
        self.notices: list[str] = []

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

    def chunk_config(self) -> ChunkConfig:
        """Chunking settings with ``types.yaml`` profiles applied."""
        cfg = self.config.chunking
        return cfg.with_types(self.types) if self.types is not None else cfg

    def type_weights(self) -> dict[str, float]:
        """Note type → ``retriever_weight`` from ``types.yaml`` (aliases included)."""
        out: dict[str, float] = {}
        for t in getattr(self.types, "types", {}).values():
            for name in (t.name, *t.aliases):
                out[name.casefold()] = float(t.retriever_weight)
        return out

    # --- indexing ---------------------------------------------------------------------
    def after_index(
        self,
        document_ids: Sequence[str] | None = None,
        *,
        no_embed: bool = False,
        progress: EmbedProgress | None = None,
    ) -> EmbedReport:
        """Chunk and embed what the last run added or changed; prune the rest.

        With ``no_embed`` or no available model, nothing is embedded and the report
        carries one notice (keyword search keeps working). Never raises for a missing
        model or an unreachable endpoint.
        """
        emb = None if no_embed else self.embedder
        try:
            report = embed_pass(
                self.store,
                emb,
                document_ids=document_ids,
                config=self.chunk_config(),
                batch_size=self.config.embed.batch_size,
                progress=progress,
            )
        except ProviderUnavailable as exc:  # e.g. the endpoint went away mid-run
            report = embed_pass(self.store, None)
            return EmbedReport(pruned=report.pruned, notices=(f"{exc}; {NO_EMBEDDER_NOTICE}",))
        if emb is None and self.notices and not no_embed:
            return EmbedReport(
                pruned=report.pruned, seconds=report.seconds, notices=tuple(self.notices)
            )
        if no_embed:
            return EmbedReport(
                pruned=report.pruned, seconds=report.seconds, notices=(NO_EMBED_NOTICE,)
            )
        return report

    def pending(self) -> bool:
        """Whether some unit has not been chunked (and so not embedded) yet, e.g. after
        an ``index --no-embed`` run; cheap, loads no model."""
        return VectorStore(self.store).has_unchunked()

    # --- search -----------------------------------------------------------------------
    def searcher(self) -> HybridSearcher:
        """The hybrid searcher (built once; it keeps the vector matrix in memory)."""
        if self._searcher is None:
            self._searcher = HybridSearcher(
                self.store,
                self.search_config,
                self.embedder,
                self.config.fusion,
                type_weights=self.type_weights(),
                graph_proximity=self.graph_proximity,
            )
        return self._searcher

    def has_vectors(self) -> bool:
        """Whether the index holds any embedding at all (of any model)."""
        return VectorStore(self.store).any_vectors()

    def _keyword_searcher(self) -> HybridSearcher:
        if self._kw_searcher is None:
            self._kw_searcher = HybridSearcher(self.store, self.search_config, None)
        return self._kw_searcher

    def search(
        self,
        text: str,
        *,
        mode: str | None = None,
        limit: int | None = None,
        explain: bool = False,
        include_alternates: bool = False,
    ) -> SearchResult:
        """Search in ``mode`` (``None``: hybrid when embeddings exist, else keyword).

        See :meth:`cairn.search.hybrid.HybridSearcher.search`. Never raises for any user
        text; a semantic request without embeddings answers with keywords and a note.
        """
        if mode == "keyword" or (self._embedder is _UNSET and not self.has_vectors()):
            # no model load for keyword searches or an index that has no vectors yet
            res = self._keyword_searcher().search(
                text,
                mode="keyword",
                limit=limit,
                explain=explain,
                include_alternates=include_alternates,
            )
            if mode in ("semantic", "hybrid"):
                note = f"{mode} search unavailable (no embeddings in this index yet); "
                note += "showing keyword results"
                return SearchResult(res.query, res.hits, res.took_ms, (note, *res.notes))
            return res
        searcher = self.searcher()
        try:
            res = searcher.search(
                text, mode=mode, limit=limit, explain=explain, include_alternates=include_alternates
            )
        except ProviderUnavailable as exc:
            res = searcher.search(
                text,
                mode="keyword",
                limit=limit,
                explain=explain,
                include_alternates=include_alternates,
            )
            return SearchResult(
                res.query,
                res.hits,
                res.took_ms,
                (*res.notes, f"semantic search failed ({exc}); keyword results"),
            )
        if self.notices and mode not in (None, "keyword"):
            return SearchResult(res.query, res.hits, res.took_ms, (*self.notices, *res.notes))
        return res

    def status(self) -> dict[str, Any]:
        """Provider, spaces and chunk/vector counts, JSON-ready."""
        vs = VectorStore(self.store)
        emb = self.embedder
        return {
            "provider": self.config.embed.provider,
            "model": emb.name if emb else None,
            "space": emb.fingerprint if emb else None,
            **vs.counts(),
            "spaces": vs.spaces(),
            "notices": list(self.notices),
        }

    def check(self) -> list[str]:
        """Problems of the chunk and vector tables (``[]`` = fine); also counts chunks
        lacking a vector when the embedder is already loaded (no model is loaded here)."""
        emb = self._embedder
        space = emb.fingerprint if emb is not None and emb is not _UNSET else None
        return VectorStore(self.store).integrity_check(space)

    # --- evaluation -------------------------------------------------------------------
    def evaluate(
        self,
        folder: str | Path,
        *,
        modes: Sequence[str] = ("keyword", "semantic", "hybrid"),
        split: str = "test",
        progress: Callable[[int, int, str], None] | None = None,
    ) -> EvalReport:
        """Index a BEIR folder into a throwaway store and measure each mode
        (:func:`cairn.search.eval.evaluate`) with this service's embedder and settings.

        Raises:
            CairnError: the folder is not a BEIR data set.
        """
        return evaluate(
            folder,
            self.embedder,
            modes=modes,
            split=split,
            search_config=self.search_config,
            fusion=self.config.fusion,
            chunk_config=self.config.chunking,
            progress=progress,
        )
