"""Language model providers behind one protocol: any OpenAI-compatible chat endpoint
(``POST {url}/chat/completions``: OpenAI, Ollama, vLLM, LM Studio, llama.cpp) and
Anthropic (``POST {url}/v1/messages``). Standard library HTTP (``urllib``), no SDK.

A provider sends one prompt and returns the reply's text with its token counts; a
rate limit (HTTP 429) is waited out as its ``Retry-After`` asks (up to a limit), a
timeout or a server error is retried, and what still fails raises
:class:`RequestFailed`. Texts reach a provider only through
:class:`cairn.enrich.pipeline.Pipeline`, which redacts them first.
"""

from __future__ import annotations

import email.utils
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from cairn.enrich.settings import EnrichSettings
from cairn.errors import ConfigError, ProviderUnavailable


class RequestFailed(ProviderUnavailable):
    """A request that failed after its retries (``reason`` says why: ``timeout``,
    ``rate limited``, ``HTTP 500`` …); the item is skipped, not cached, and tried again
    by the next run."""


@dataclass(frozen=True, slots=True)
class Completion:
    """A reply: its ``text`` and the tokens the server counted (``0`` when it did not
    say)."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0


class Provider(Protocol):
    """A chat model: one prompt in, one reply out."""

    name: str
    model: str
    requests: int
    """HTTP requests made so far (retries included)."""

    def complete(self, system: str, user: str, *, max_tokens: int) -> Completion:
        """Ask once (with the provider's retries).

        Raises:
            RequestFailed: timeouts, rate limits or server errors beyond the retries,
                or a reply that is not the API's JSON.
        """
        ...


def retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait: delta-seconds or an HTTP date;
    ``None`` when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class HttpProvider:
    """What both APIs share: the POST, the retries and the waits.

    Args:
        settings: the ``[enrich]`` settings (url, model, timeout, retries, …).
        api_key: the key sent with each request (``None``: none).
        sleep: how to wait (tests pass their own to record the waits).
    """

    name = "http"

    def __init__(
        self,
        settings: EnrichSettings,
        api_key: str | None,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        self.model = settings.model
        self.api_key = api_key
        self.sleep = sleep
        self.requests = 0
        self.waits: list[float] = []
        """Seconds waited for each rate limit (``Retry-After``)."""

    def endpoint(self) -> str:
        """The URL requests go to."""
        raise NotImplementedError

    def headers(self) -> dict[str, str]:
        """Headers of each request (the key included)."""
        raise NotImplementedError

    def body(self, system: str, user: str, max_tokens: int) -> dict[str, Any]:
        """The JSON request body."""
        raise NotImplementedError

    def parse(self, payload: Mapping[str, Any]) -> Completion:
        """The reply's text and token counts from the API's JSON.

        Raises:
            KeyError / TypeError / IndexError: not the API's shape.
        """
        raise NotImplementedError

    def complete(self, system: str, user: str, *, max_tokens: int) -> Completion:
        """See :meth:`Provider.complete`."""
        url = self.endpoint()
        data = json.dumps(self.body(system, user, max_tokens)).encode("utf-8")
        s = self.settings
        attempts = s.retries + 1
        last = "no attempt"
        for attempt in range(attempts):
            self.requests += 1
            req = urllib.request.Request(url, data=data, headers=self.headers(), method="POST")
            try:
                with urllib.request.urlopen(req, timeout=s.timeout) as resp:
                    raw = resp.read()
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:200].decode("utf-8", "replace")
                if exc.code == 429:
                    wait = retry_after(exc.headers.get("Retry-After"))
                    wait = min(s.retry_after_max, 2.0 ** attempt if wait is None else wait)
                    last = f"rate limited (HTTP 429) {attempts} times"
                    if attempt + 1 < attempts:
                        self.waits.append(wait)
                        self.sleep(wait)
                    continue
                if exc.code >= 500:
                    last = f"HTTP {exc.code} {exc.reason}: {detail}"
                    continue
                raise RequestFailed(f"{url}: HTTP {exc.code} {exc.reason}: {detail}") from exc
            except TimeoutError:
                last = f"timed out after {s.timeout:g} s"
                continue
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, TimeoutError):
                    last = f"timed out after {s.timeout:g} s"
                    continue
                raise RequestFailed(f"{url}: cannot reach the server: {exc.reason}") from exc
            except OSError as exc:
                last = f"connection failed: {exc}"
                continue
            try:
                return self.parse(json.loads(raw.decode("utf-8")))
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                raise RequestFailed(f"{url}: the reply is not the API's JSON: {exc}") from exc
        raise RequestFailed(f"{url}: {last}")


class OpenAIProvider(HttpProvider):
    """An OpenAI-compatible ``/chat/completions`` endpoint (temperature 0)."""

    name = "openai"

    def endpoint(self) -> str:
        """``{url}/chat/completions`` (a URL ending so is taken as it is)."""
        u = self.settings.url
        return u if u.endswith("/chat/completions") else u + "/chat/completions"

    def headers(self) -> dict[str, str]:
        """JSON, and ``Authorization: Bearer`` when there is a key."""
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            h["Authorization"] = f"Bearer {self.api_key}"
        return h

    def body(self, system: str, user: str, max_tokens: int) -> dict[str, Any]:
        """A system and a user message."""
        return {
            "model": self.model,
            "messages": [{"role": "system", "content": system},
                         {"role": "user", "content": user}],
            "temperature": 0,
            "max_tokens": max_tokens,
        }

    def parse(self, payload: Mapping[str, Any]) -> Completion:
        """``choices[0].message.content`` and ``usage``."""
        text = payload["choices"][0]["message"]["content"]
        usage = payload.get("usage") or {}
        return Completion(str(text or ""), int(usage.get("prompt_tokens", 0) or 0),
                          int(usage.get("completion_tokens", 0) or 0))


class AnthropicProvider(HttpProvider):
    """Anthropic's Messages API (``anthropic-version: 2023-06-01``)."""

    name = "anthropic"

    def endpoint(self) -> str:
        """``{url}/v1/messages``."""
        u = self.settings.url
        if u.endswith("/messages"):
            return u
        return u + ("/messages" if u.endswith("/v1") else "/v1/messages")

    def headers(self) -> dict[str, str]:
        """JSON, the version, and ``x-api-key`` when there is a key."""
        h = {"Content-Type": "application/json", "Accept": "application/json",
             "anthropic-version": "2023-06-01"}
        if self.api_key:
            h["x-api-key"] = self.api_key
        return h

    def body(self, system: str, user: str, max_tokens: int) -> dict[str, Any]:
        """The system prompt apart, one user message."""
        return {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": 0,
            "system": system,
            "messages": [{"role": "user", "content": user}],
        }

    def parse(self, payload: Mapping[str, Any]) -> Completion:
        """The text blocks of ``content`` and ``usage``."""
        blocks = payload["content"]
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        usage = payload.get("usage") or {}
        return Completion(text, int(usage.get("input_tokens", 0) or 0),
                          int(usage.get("output_tokens", 0) or 0))


def make_provider(
    settings: EnrichSettings,
    *,
    env: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> HttpProvider:
    """The provider ``[enrich]`` names.

    Raises:
        ConfigError: not configured, or ``api_key_env`` names a variable that is unset.
    """
    if settings.provider is None:
        raise ConfigError("[enrich] is not configured (no provider)")
    environ = os.environ if env is None else env
    key: str | None = None
    if settings.api_key_env:
        key = environ.get(settings.api_key_env)
        if not key:
            raise ConfigError(
                f"[enrich] api_key_env = {settings.api_key_env!r}, but that variable is not set"
            )
    cls = AnthropicProvider if settings.provider == "anthropic" else OpenAIProvider
    return cls(settings, key, sleep=sleep)
