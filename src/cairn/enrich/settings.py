"""``[enrich]`` of ``cairn.toml``: which model to ask, and how.

Example::

    [enrich]
    provider = "openai"            # any OpenAI-compatible /v1/chat/completions, or "anthropic"
    url = "http://localhost:11434/v1"
    model = "llama3.2"
    api_key_env = "OPENAI_API_KEY"  # the variable holding the key (none for a local server)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cairn.errors import ConfigError

PROVIDERS = ("openai", "anthropic")
DEFAULT_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}


@dataclass(frozen=True, slots=True)
class EnrichSettings:
    """The ``[enrich]`` table, checked.

    Attributes:
        provider: ``openai`` (any OpenAI-compatible chat endpoint) or ``anthropic``;
            ``None``: enrichment is not configured.
        url: the API's base URL (``…/v1`` for OpenAI-compatible servers).
        model: the model name sent with each request.
        api_key_env: the environment variable holding the API key (none: no key).
        timeout: seconds one request may take.
        max_tokens: the longest reply asked for, in tokens.
        max_chars: the most characters of one conversation sent (longer ones are cut
            in the middle).
        similarity: cosine similarity of two conversations' embeddings at which they
            become a candidate pair for relation typing.
        max_pairs: candidate pairs per conversation (its most similar ones).
        min_confidence: a relation label below this confidence makes no edge.
        retries: attempts after a rate limit (HTTP 429) or a timeout.
        retry_after_max: the longest wait (seconds) a ``Retry-After`` header may ask.
        price_input / price_output: US dollars per million input / output tokens, for
            the estimate printed before a run.
        tag_aliases: ``{alias: tag}`` mapped onto the user's tags.
        max_tags: the most vocabulary tags shown to the model.
    """

    provider: str | None = None
    url: str = ""
    model: str = ""
    api_key_env: str | None = None
    timeout: float = 120.0
    max_tokens: int = 800
    max_chars: int = 24_000
    similarity: float = 0.75
    max_pairs: int = 3
    min_confidence: float = 0.5
    retries: int = 3
    retry_after_max: float = 60.0
    price_input: float = 0.0
    price_output: float = 0.0
    tag_aliases: Mapping[str, str] = field(default_factory=dict)
    max_tags: int = 200

    @property
    def configured(self) -> bool:
        """Whether a provider is configured."""
        return self.provider is not None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> EnrichSettings:
        """Check and build from the ``[enrich]`` table (empty: not configured).

        Raises:
            ConfigError: an unknown provider, a missing model, or a value of the wrong
                type or range (the message names the key).
        """
        if not data:
            return cls()
        provider = data.get("provider")
        if provider is None:
            raise ConfigError(
                f"[enrich] needs provider = one of {', '.join(PROVIDERS)} (or remove the table)"
            )
        if provider not in PROVIDERS:
            raise ConfigError(
                f"[enrich] provider = {provider!r}: not one of {', '.join(PROVIDERS)} "
                "(\"openai\" also covers Ollama, vLLM, LM Studio and llama.cpp servers)"
            )
        model = data.get("model")
        if not isinstance(model, str) or not model.strip():
            raise ConfigError("[enrich] model must name the model to ask (a string)")

        def num(key: str, default: float, lo: float, hi: float) -> float:
            v = data.get(key, default)
            if isinstance(v, bool) or not isinstance(v, int | float) or not lo <= v <= hi:
                raise ConfigError(f"[enrich] {key} must be a number from {lo:g} to {hi:g}")
            return float(v)

        aliases = data.get("tag_aliases", {})
        if not isinstance(aliases, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in aliases.items()
        ):
            raise ConfigError('[enrich] tag_aliases must be a table of strings (ml = "ai")')
        key_env = data.get("api_key_env")
        if key_env is not None and not isinstance(key_env, str):
            raise ConfigError("[enrich] api_key_env must name an environment variable")
        url = data.get("url", DEFAULT_URLS[provider])
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError("[enrich] url must be an http:// or https:// URL")
        return cls(
            provider=provider,
            url=url.rstrip("/"),
            model=model,
            api_key_env=key_env,
            timeout=num("timeout", 120.0, 0.1, 3600),
            max_tokens=int(num("max_tokens", 800, 16, 100_000)),
            max_chars=int(num("max_chars", 24_000, 500, 2_000_000)),
            similarity=num("similarity", 0.75, -1, 1),
            max_pairs=int(num("max_pairs", 3, 0, 100)),
            min_confidence=num("min_confidence", 0.5, 0, 1),
            retries=int(num("retries", 3, 0, 20)),
            retry_after_max=num("retry_after_max", 60.0, 0, 3600),
            price_input=num("price_input", 0.0, 0, 10_000),
            price_output=num("price_output", 0.0, 0, 10_000),
            tag_aliases={k.casefold(): v for k, v in aliases.items()},
            max_tags=int(num("max_tags", 200, 0, 10_000)),
        )

