"""A ``/rerank`` HTTP endpoint as a :class:`cairn.embed.rerank.Reranker`.

Standard library only (``urllib``). Two request shapes, one per server family, chosen
by the URL:

* Hugging Face Text Embeddings Inference (TEI): ``POST {url}/rerank`` with
  ``{"query": ..., "texts": [...], "raw_scores": false}``; the answer is
  ``[{"index": i, "score": s}, ...]``.
* Cohere / Jina / vLLM / LocalAI (the "OpenAI-compatible" rerank API): a URL ending in
  ``/v1`` or ``/v1/rerank`` gets ``POST …/v1/rerank`` with ``{"model": ..., "query":
  ..., "documents": [...], "top_n": n}``; the answer is ``{"results": [{"index": i,
  "relevance_score": s}, ...]}``.

Either answer is accepted from either server; scores outside [0, 1] are taken as
logits (:func:`cairn.embed.base.squash`). A passage the answer leaves out scores 0.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from cairn.embed.base import squash
from cairn.errors import ProviderUnavailable

MAX_RESPONSE = 8 << 20
"""Bytes of an answer read at most (a reranker's answer is a few numbers)."""


def endpoint_of(url: str) -> tuple[str, bool]:
    """``(endpoint, cohere_style)`` for a configured URL (see the module docstring)."""
    base = url.rstrip("/")
    if base.endswith("/v1/rerank"):
        return base, True
    if base.endswith("/v1"):
        return base + "/rerank", True
    if base.endswith("/rerank"):
        return base, False
    return base + "/rerank", False


class HttpReranker:
    """Reranks through a TEI or Cohere/Jina-compatible ``/rerank`` endpoint.

    Args:
        url: the server (``http://127.0.0.1:8080``: TEI) or API base
            (``http://127.0.0.1:8000/v1``: Cohere-style).
        model: the model name sent in Cohere-style requests (TEI serves one model).
        api_key: sent as ``Authorization: Bearer <key>`` when given.
        timeout: seconds per request.

    No request is made until :meth:`score` (a search that does not rerank never
    touches the endpoint).
    """

    def __init__(
        self,
        url: str,
        model: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ProviderUnavailable(f"[rerank] url must start with http:// or https://: {url!r}")
        self.endpoint, self.cohere = endpoint_of(url)
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.name = f"http:{model or self.endpoint}"

    def _post(self, body: dict[str, Any]) -> Any:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = json.dumps(body).encode()
        req = urllib.request.Request(self.endpoint, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read(MAX_RESPONSE + 1)
        except urllib.error.HTTPError as exc:
            detail = exc.read(300).decode("utf-8", "replace")
            raise ProviderUnavailable(
                f"{self.endpoint}: HTTP {exc.code} {exc.reason}: {detail}"
            ) from exc
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            raise ProviderUnavailable(f"{self.endpoint}: cannot reach endpoint: {exc}") from exc
        if len(raw) > MAX_RESPONSE:
            raise ProviderUnavailable(f"{self.endpoint}: answer larger than {MAX_RESPONSE} bytes")
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError as exc:
            raise ProviderUnavailable(f"{self.endpoint}: answer is not JSON: {exc}") from exc

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Relevances in [0, 1], in passage order (see :class:`cairn.embed.rerank.Reranker`).

        Raises:
            ProviderUnavailable: the endpoint is unreachable, answers with an HTTP
                error, or its answer is not a list of ``(index, score)`` items.
        """
        if not passages:
            return []
        texts = [p if p.strip() else " " for p in passages]
        body: dict[str, Any]
        if self.cohere:
            body = {"query": query, "documents": texts, "top_n": len(texts)}
            if self.model:
                body["model"] = self.model
        else:
            body = {"query": query, "texts": texts, "raw_scores": False, "truncate": True}
        payload = self._post(body)
        items = payload.get("results") if isinstance(payload, dict) else payload
        out = [0.0] * len(texts)
        try:
            assert isinstance(items, list)
            for it in items:
                i = int(it["index"])
                s = it["relevance_score"] if "relevance_score" in it else it["score"]
                if not 0 <= i < len(texts):
                    raise ValueError(f"index {i} out of range")
                out[i] = squash(float(s))
        except (AssertionError, KeyError, TypeError, ValueError) as exc:
            raise ProviderUnavailable(
                f"{self.endpoint}: malformed rerank answer ({exc!r}): expected "
                '[{"index": i, "score": s}] or {"results": [{"index": i, "relevance_score": s}]}'
            ) from exc
        return out
