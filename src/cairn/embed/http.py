"""Any OpenAI-compatible ``/v1/embeddings`` endpoint (Ollama, vLLM, LM Studio, hosted).

Standard library only (``urllib``). Request: ``POST {base_url}/embeddings`` with
``{"model": ..., "input": [...]}`` and, when a key is set, ``Authorization: Bearer``.
Response: ``{"data": [{"index": i, "embedding": [...]}, ...]}`` (OpenAI embeddings API).
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from collections.abc import Sequence

from cairn.embed.base import Matrix, l2_normalize
from cairn.errors import ProviderUnavailable


class HttpEmbedder:
    """Embeds through an OpenAI-compatible HTTP endpoint.

    Args:
        url: the API base, e.g. ``http://127.0.0.1:11434/v1`` (``/embeddings`` is
            appended unless the URL already ends with it).
        model: the model name sent in each request.
        api_key: sent as ``Authorization: Bearer <key>`` when given.
        dim: the vector size; ``None`` asks the endpoint once (embedding ``"dim"``).
        batch_size: texts per request.
        timeout: seconds per request.

    Raises:
        ProviderUnavailable: the endpoint cannot be reached or answers with an error
            or a malformed body (raised by the constructor's probe and by :meth:`embed`).
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
    ) -> None:
        base = url.rstrip("/")
        self.endpoint = base if base.endswith("/embeddings") else base + "/embeddings"
        self.model = model
        self.api_key = api_key
        self.batch_size = max(1, batch_size)
        self.timeout = timeout
        self.name = f"http:{model}"
        self.dim = dim if dim else int(self._request(["dim"]).shape[1])
        ident = f"{self.endpoint}|{model}|{self.dim}"
        self.fingerprint = "http-" + hashlib.sha256(ident.encode()).hexdigest()[:16]

    def _request(self, texts: list[str]) -> Matrix:
        import numpy as np

        body = json.dumps({"model": self.model, "input": texts}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.endpoint, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                payload = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode("utf-8", "replace")
            raise ProviderUnavailable(
                f"{self.endpoint}: HTTP {exc.code} {exc.reason}: {detail}"
            ) from exc
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            raise ProviderUnavailable(f"{self.endpoint}: cannot reach endpoint: {exc}") from exc
        except ValueError as exc:
            raise ProviderUnavailable(f"{self.endpoint}: response is not JSON: {exc}") from exc
        try:
            items = sorted(payload["data"], key=lambda d: int(d.get("index", 0)))
            arr = np.asarray([d["embedding"] for d in items], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise ProviderUnavailable(
                f"{self.endpoint}: malformed embeddings response: {exc}"
            ) from exc
        if arr.ndim != 2 or arr.shape[0] != len(texts):
            raise ProviderUnavailable(
                f"{self.endpoint}: expected {len(texts)} embeddings, got shape {arr.shape}"
            )
        return arr

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Unit vectors ``float32[len(texts), dim]``, ``batch_size`` texts per request.

        Raises:
            ProviderUnavailable: as for the constructor, or a vector of the wrong size.
        """
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i in range(0, len(texts), self.batch_size):
            part = self._request([t if t.strip() else " " for t in texts[i : i + self.batch_size]])
            if part.shape[1] != self.dim:
                raise ProviderUnavailable(
                    f"{self.endpoint}: got {part.shape[1]}-d vectors, expected {self.dim}"
                )
            out[i : i + len(part)] = part
        return l2_normalize(out)
