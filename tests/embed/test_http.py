"""The OpenAI-compatible HTTP provider against a real tiny server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import numpy as np
import pytest

from cairn.embed.http import HttpEmbedder
from cairn.embed.registry import EmbedConfig, make_embedder
from cairn.errors import ConfigError, ProviderUnavailable

DIM = 8


def _vec(text: str) -> list[float]:
    h = hashlib.sha256(text.encode()).digest()
    return [b - 128.0 for b in h[:DIM]]  # deterministic, not normalised


class _Handler(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
        )
        if self.path != "/v1/embeddings":
            self.send_error(404, "no such endpoint")
            return
        if body.get("model") == "broken":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"model exploded")
            return
        data = [
            {"object": "embedding", "index": i, "embedding": _vec(t)}
            for i, t in enumerate(body["input"])
        ]
        data.reverse()  # servers may answer out of order; "index" says where each goes
        out = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.requests = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    finally:
        srv.shutdown()
        srv.server_close()


def test_embeds_in_batches_in_order_with_key(server: str) -> None:
    emb = HttpEmbedder(server, "tiny-embed", api_key="sekret", batch_size=2)
    assert emb.dim == DIM  # probed once
    texts = ["alpha", "beta", "gamma", "delta", "epsilon"]
    v = emb.embed(texts)
    assert v.shape == (5, DIM) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    for i, t in enumerate(texts):
        want = np.asarray(_vec(t), dtype=np.float32)
        assert np.allclose(v[i], want / np.linalg.norm(want), atol=1e-6)
    reqs = _Handler.requests[1:]  # after the probe
    assert [len(r["body"]["input"]) for r in reqs] == [2, 2, 1]
    assert all(r["auth"] == "Bearer sekret" and r["body"]["model"] == "tiny-embed" for r in reqs)
    assert all(r["path"] == "/v1/embeddings" for r in reqs)


def test_fingerprint_depends_on_model_and_endpoint(server: str) -> None:
    a = HttpEmbedder(server, "tiny-embed", dim=DIM)
    b = HttpEmbedder(server, "other-model", dim=DIM)
    c = HttpEmbedder(server + "/embeddings", "tiny-embed", dim=DIM)
    assert a.fingerprint != b.fingerprint
    assert a.fingerprint == c.fingerprint
    assert _Handler.requests == []  # dim given: no probe


def test_errors_are_provider_unavailable(server: str) -> None:
    with pytest.raises(ProviderUnavailable, match="HTTP 500"):
        HttpEmbedder(server, "broken")
    with pytest.raises(ProviderUnavailable, match="HTTP 404"):
        HttpEmbedder(server.replace("/v1", "/nope"), "tiny-embed")
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    port = srv.server_address[1]
    srv.server_close()  # nothing listens there now
    with pytest.raises(ProviderUnavailable, match="cannot reach"):
        HttpEmbedder(f"http://127.0.0.1:{port}/v1", "tiny-embed", timeout=2)


def test_registry_builds_http_with_key_from_env(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TINY_KEY", "from-env")
    cfg = EmbedConfig.from_mapping(
        {
            "provider": "http",
            "url": server,
            "model": "tiny-embed",
            "api_key_env": "TINY_KEY",
            "batch_size": 3,
        }
    )
    emb = make_embedder(cfg)
    assert emb is not None and emb.dim == DIM
    emb.embed(["x"])
    assert _Handler.requests[-1]["auth"] == "Bearer from-env"
    with pytest.raises(ConfigError):
        make_embedder(EmbedConfig(provider="http"))
    with pytest.raises(ConfigError):
        EmbedConfig.from_mapping({"provider": "quantum"})
