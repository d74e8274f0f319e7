"""Build an :class:`cairn.embed.Embedder` by provider name, from configuration.

``cairn.toml``::

    [embed]
    provider = "auto"          # auto | static | fast | minilm | minilm-onnx | http | none
    batch_size = 64
    # for provider = "static": a model2vec-format folder instead of the shipped model
    # model = "~/models/my-static"
    # provider = "fast": the static model `cairn embed --train-static` trained on this
    # index (<index>.models/fast, which cairn.app passes as `model`), else the shipped one
    # for provider = "http":
    url = "http://127.0.0.1:11434/v1"
    model = "nomic-embed-text"
    api_key_env = "OPENAI_API_KEY"   # the key is read from this variable, never the file
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cairn.embed.base import Embedder
from cairn.embed.locator import ModelLocator
from cairn.errors import ConfigError, ProviderUnavailable

PROVIDERS = ("auto", "static", "fast", "minilm", "minilm-onnx", "http", "none")
DEFAULT_PROVIDER = "auto"
AUTO_ORDER = ("minilm-onnx", "static")
"""``auto`` takes the first of these that can be loaded without a download: the int8
ONNX MiniLM (best hybrid quality at usable speed, see ``bench/beir.py``), else the
shipped static model."""


@dataclass(frozen=True, slots=True)
class EmbedConfig:
    """Embedding settings (``[embed]`` in ``cairn.toml``).

    Attributes:
        provider: one of :data:`PROVIDERS`; ``none`` turns embeddings off; ``auto``
            (the default) picks the first loadable of :data:`AUTO_ORDER`.
        batch_size: texts per embedder call while indexing.
        url / model / api_key_env / dim: for ``http``; ``model`` is also, for
            ``static``, a static-model folder to load instead of the shipped one.
        threads: CPU threads for local models while indexing (``None``: library default;
            the int8 MiniLM runs that many one-thread sessions side by side, by default
            one per core).
    """

    provider: str = DEFAULT_PROVIDER
    batch_size: int = 64
    url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    dim: int | None = None
    threads: int | None = None

    @property
    def signature(self) -> str:
        """What identifies the configured model (not how fast it runs): a change means
        every chunk is embedded again, into the new model's space."""
        return "|".join(str(x) for x in (self.provider, self.model, self.url, self.dim))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> EmbedConfig:
        """Read an ``[embed]`` table.

        Raises:
            ConfigError: an unknown provider or a value of the wrong type.
        """
        provider = str(data.get("provider", DEFAULT_PROVIDER))
        if provider not in PROVIDERS:
            raise ConfigError(f"[embed] provider must be one of {', '.join(PROVIDERS)}")
        try:
            return cls(
                provider=provider,
                batch_size=int(data.get("batch_size", 64)),
                url=str(data["url"]) if "url" in data else None,
                model=str(data["model"]) if "model" in data else None,
                api_key_env=str(data["api_key_env"]) if "api_key_env" in data else None,
                dim=int(data["dim"]) if "dim" in data else None,
                threads=int(data["threads"]) if "threads" in data else None,
            )
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"[embed] has a value of the wrong type: {exc}") from exc


_DEFAULT_THREADS: dict[str, int | None] = {"threads": None}


def set_default_threads(threads: int | None) -> None:
    """The CPU threads of local models built from now on whose ``[embed] threads`` is
    not set (``None``: the library's default, every core). Servers ask for 1: their
    index runs then embed on the indexing thread alone instead of a pool of spinning
    threads competing with the requests for the cores (``bench/serve.py``)."""
    _DEFAULT_THREADS["threads"] = threads


def make_embedder(config: EmbedConfig, locator: ModelLocator | None = None) -> Embedder | None:
    """The configured embedder, or ``None`` for provider ``none``.

    Raises:
        ProviderUnavailable: the provider's extra is not installed, its model cannot
            be found, or (``http``) the endpoint cannot be reached.
        ConfigError: ``http`` without ``url`` or ``model``.
    """
    p = config.provider
    threads = config.threads if config.threads is not None else _DEFAULT_THREADS["threads"]
    if p == "none":
        return None
    if p == "auto":
        from dataclasses import replace

        reasons: list[str] = []
        for cand in AUTO_ORDER:
            try:
                no_hub = ModelLocator(allow_download=False) if locator is None else locator
                return make_embedder(replace(config, provider=cand), no_hub)
            except ProviderUnavailable as exc:
                reasons.append(f"{cand}: {exc}")
        raise ProviderUnavailable("no embedding model available (" + "; ".join(reasons) + ")")
    if p in ("static", "fast"):
        from pathlib import Path

        from cairn.embed.static import StaticEmbedder

        if config.model:  # a static-model folder, e.g. one bench/train_static.py made
            return StaticEmbedder(folder=Path(config.model).expanduser())
        return StaticEmbedder(locator)
    if p == "minilm":
        from cairn.embed.sbert import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(
            locator, batch_size=config.batch_size, threads=threads
        )
    if p == "minilm-onnx":
        from cairn.embed.onnx import OnnxEmbedder

        return OnnxEmbedder(locator, batch_size=config.batch_size, threads=threads)
    if p == "http":
        if not config.url or not config.model:
            raise ConfigError("[embed] provider 'http' needs url and model")
        key = os.environ.get(config.api_key_env) if config.api_key_env else None
        return HttpEmbedderFactory.make(config, key)
    raise ProviderUnavailable(f"unknown embedding provider {p!r}")


class HttpEmbedderFactory:
    """Builds :class:`cairn.embed.http.HttpEmbedder` (kept apart so tests can swap it)."""

    @staticmethod
    def make(config: EmbedConfig, key: str | None) -> Embedder:
        """An HTTP embedder for ``config`` (see :func:`make_embedder`)."""
        from cairn.embed.http import HttpEmbedder

        assert config.url and config.model
        return HttpEmbedder(
            config.url, config.model, api_key=key, dim=config.dim, batch_size=config.batch_size
        )
