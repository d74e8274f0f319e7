"""Reranking: the position-aware blend, the ONNX cross-encoder (a tiny model built
here with the ``onnx`` package, run by onnxruntime), the TEI and Cohere-style ``/rerank``
endpoints (a real HTTP server on loopback), configuration, and the search service,
``Cairn.search`` and ``cairn search --rerank`` end to end."""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import Config, load_config
from cairn.embed.base import sigmoid, squash
from cairn.embed.rerank import OnnxCrossEncoder, RerankConfig, make_reranker
from cairn.embed.rerank_http import HttpReranker, endpoint_of
from cairn.errors import ConfigError, ProviderUnavailable
from cairn.search.fusion import Fused
from cairn.search.hits import summands_add_up
from cairn.search.rerank import rerank_fused, retrieval_weight

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "garden", "compost", "answer", "bread",
         "cat", "dog", "budget", "the", "a", "is", "here"]
WEIGHTS = {"answer": 4.0, "compost": 1.5}
BIAS = -2.0


def build_tiny_cross_encoder(folder: Path) -> Path:
    """A real (tiny) cross-encoder: WordLevel tokenizer with BERT's pair template, and
    an ONNX graph whose logit is ``BIAS + Σ weight(token)`` over the *passage* tokens
    (token type 1) that the attention mask keeps."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {w: i for i, w in enumerate(VOCAB)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tok.save(str(folder / "tokenizer.json"))
    table = [[WEIGHTS.get(w, 0.0)] for w in VOCAB]
    nodes = [
        helper.make_node("Gather", ["E", "input_ids"], ["tok"], axis=0),  # [B,T,1]
        helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["token_type_ids"], ["t"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["m", "t"], ["mt"]),
        helper.make_node("Unsqueeze", ["mt", "ax2"], ["mt3"]),
        helper.make_node("Mul", ["tok", "mt3"], ["kept"]),
        helper.make_node("ReduceSum", ["kept", "ax1"], ["s"], keepdims=0),  # [B,1]
        helper.make_node("Add", ["s", "b"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-xenc",
        [
            helper.make_tensor_value_info(n, TensorProto.INT64, ["B", "T"])
            for n in ("input_ids", "attention_mask", "token_type_ids")
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["B", 1])],
        initializer=[
            helper.make_tensor("E", TensorProto.FLOAT, [len(VOCAB), 1], [row[0] for row in table]),
            helper.make_tensor("b", TensorProto.FLOAT, [1], [BIAS]),
            helper.make_tensor("ax1", TensorProto.INT64, [1], [1]),
            helper.make_tensor("ax2", TensorProto.INT64, [1], [2]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    return folder


def expected(passage: str) -> float:
    words = [w.lower() for w in passage.split()]
    return sigmoid(BIAS + sum(WEIGHTS.get(w, 0.0) for w in words))


@pytest.fixture(scope="module")
def xenc_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("xenc") / "tiny-xenc")


# --- the blend ------------------------------------------------------------------------
class Fixed:
    """A reranker answering fixed relevances by passage text."""

    name = "fixed"

    def __init__(self, rel: dict[str, float]) -> None:
        self.rel = rel
        self.seen: list[tuple[str, list[str]]] = []

    def score(self, query: str, passages: Any) -> list[float]:
        self.seen.append((query, list(passages)))
        return [self.rel.get(p, 0.0) for p in passages]


def test_retrieval_weight_bands() -> None:
    assert [retrieval_weight(r) for r in (1, 3, 4, 10, 11, 30)] == [
        0.75, 0.75, 0.60, 0.60, 0.40, 0.40
    ]


def _fused(n: int) -> list[Fused]:
    return [
        Fused(f"u{i}", 1 / (60 + i), {"keyword": 1 / (60 + i)}, {"keyword": i}, {"keyword": 9 - i})
        for i in range(1, n + 1)
    ]


class _Unit:
    def __init__(self, key: str) -> None:
        self.title, self.body = "", key


def test_blend_reorders_the_top_k_and_keeps_the_rest_below() -> None:
    fused = _fused(40)
    units: Any = {f.key: _Unit(f.key) for f in fused}
    # u12 is a perfect passage at fused rank 12; u1 is irrelevant
    r = Fixed({"u12": 1.0, "u2": 0.9, "u35": 1.0})
    out = rerank_fused(r, "q", fused, units, top_k=30)
    assert len(out) == 40 and {f.key for f in out} == {f.key for f in fused}
    assert len(r.seen[0][1]) == 30  # only the top 30 are scored (u35 never is)
    order = [f.key for f in out]
    # u2: 0.75/2 + 0.25·0.9 = 0.6 beats u1: 0.75
    assert order[:2] == ["u1", "u2"] or order.index("u2") < order.index("u3")
    s12 = 0.40 / 12 + 0.60 * 1.0
    assert next(f for f in out if f.key == "u12").score == pytest.approx(s12)
    assert order.index("u12") < order.index("u3")  # 0.634 > 0.75/3 = 0.25
    # past the top-k: fused order, below every re-scored result
    assert order[30:] == [f"u{i}" for i in range(31, 41)]
    for f in out:
        assert math.isclose(math.fsum(f.summands.values()), f.score)
        assert f.ranks["fused"] >= 1 and "fused" in f.raw
    u35 = next(f for f in out if f.key == "u35")
    assert "rerank" not in u35.raw and u35.summands == {"retrieval": 0.40 / 35}


def test_blend_is_stable_for_a_flat_reranker() -> None:
    fused = _fused(12)
    out = rerank_fused(Fixed({}), "q", fused, {}, top_k=30)
    assert [f.key for f in out] == [f.key for f in fused]


# --- the ONNX cross-encoder -----------------------------------------------------------
def test_onnx_cross_encoder_scores_as_its_graph_says(xenc_dir: Path) -> None:
    xe = OnnxCrossEncoder(xenc_dir)
    passages = ["the answer is here", "a garden", "compost compost", "", "cat dog answer"]
    got = xe.score("garden answer", passages)
    want = [expected(p) for p in passages]
    assert got == pytest.approx(want, abs=1e-6)
    # the query's tokens (type 0) do not count, only the passage's
    assert xe.score("answer answer answer", ["a"]) == pytest.approx([sigmoid(BIAS)])
    assert xe.name == "onnx:tiny-xenc" and xe.fingerprint.startswith("xenc-")
    # batches of different padding give the same scores
    xe2 = OnnxCrossEncoder(xenc_dir, batch_size=2)
    assert xe2.score("garden answer", passages) == pytest.approx(want, abs=1e-6)


def test_onnx_cross_encoder_errors_name_the_folder(tmp_path: Path, xenc_dir: Path) -> None:
    with pytest.raises(ProviderUnavailable, match="does not exist"):
        OnnxCrossEncoder(tmp_path / "nowhere")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "tokenizer.json").write_text((xenc_dir / "tokenizer.json").read_text())
    with pytest.raises(ProviderUnavailable, match=r"model\.onnx"):
        OnnxCrossEncoder(tmp_path / "half")
    (tmp_path / "half" / "model.onnx").write_bytes(b"not a model")
    with pytest.raises(ProviderUnavailable, match=re.escape(str(tmp_path / "half"))):
        OnnxCrossEncoder(tmp_path / "half")


# --- configuration --------------------------------------------------------------------
def test_config_reads_and_refuses(tmp_path: Path, xenc_dir: Path) -> None:
    assert RerankConfig.from_mapping({}).provider == "none"
    assert make_reranker(RerankConfig()) is None
    with pytest.raises(ConfigError, match="provider must be one of"):
        RerankConfig.from_mapping({"provider": "cohere"})
    with pytest.raises(ConfigError, match="top_k"):
        RerankConfig.from_mapping({"top_k": 0})
    with pytest.raises(ConfigError, match="enabled"):
        RerankConfig.from_mapping({"enabled": "yes"})
    with pytest.raises(ConfigError, match="needs path"):
        make_reranker(RerankConfig(provider="onnx"))
    with pytest.raises(ConfigError, match="needs url"):
        make_reranker(RerankConfig(provider="http"))
    cfg = RerankConfig.from_mapping({"provider": "onnx", "path": str(xenc_dir), "top_k": 5})
    assert isinstance(make_reranker(cfg), OnnxCrossEncoder)
    toml = tmp_path / "cairn.toml"
    toml.write_text(f'[rerank]\nprovider = "onnx"\npath = "{xenc_dir}"\nenabled = true\n')
    assert load_config(config_file=toml, db=tmp_path / "i.db").rerank["enabled"] is True
    toml.write_text("[rerank]\ntopk = 3\n")
    with pytest.raises(ConfigError, match="top_k"):
        load_config(config_file=toml, db=tmp_path / "i.db")


# --- the HTTP endpoint ----------------------------------------------------------------
class _RerankHandler(BaseHTTPRequestHandler):
    mode = "tei"
    requests: ClassVar[list[tuple[str, dict[str, Any], str | None]]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append((self.path, body, self.headers.get("Authorization")))
        docs = body.get("texts") or body.get("documents") or []
        scores = [expected(d) for d in docs]
        if type(self).mode == "broken":
            payload: Any = {"oops": 1}
        elif type(self).mode == "error":
            self.send_response(503)
            self.end_headers()
            self.wfile.write(b"model loading")
            return
        elif self.path.endswith("/v1/rerank"):
            ranked = sorted(range(len(docs)), key=lambda i: -scores[i])
            payload = {"results": [{"index": i, "relevance_score": scores[i]} for i in ranked]}
        else:  # TEI: raw logits when asked, sorted by score
            ranked = sorted(range(len(docs)), key=lambda i: -scores[i])
            payload = [{"index": i, "score": scores[i]} for i in ranked]
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def rerank_server() -> Iterator[str]:
    _RerankHandler.mode = "tei"
    _RerankHandler.requests = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _RerankHandler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def test_endpoint_shapes() -> None:
    assert endpoint_of("http://h:8080") == ("http://h:8080/rerank", False)
    assert endpoint_of("http://h:8080/rerank/") == ("http://h:8080/rerank", False)
    assert endpoint_of("http://h/v1") == ("http://h/v1/rerank", True)
    assert endpoint_of("http://h/v1/rerank") == ("http://h/v1/rerank", True)
    assert squash(0.3) == 0.3 and squash(2.0) == pytest.approx(sigmoid(2.0))
    with pytest.raises(ProviderUnavailable, match="http"):
        HttpReranker("file:///etc/passwd")


def test_http_reranker_tei_and_cohere(rerank_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    passages = ["a garden", "the answer is here", "compost"]
    tei = HttpReranker(rerank_server)
    assert tei.score("q", passages) == pytest.approx([expected(p) for p in passages])
    path, body, _ = _RerankHandler.requests[-1]
    assert path == "/rerank" and body["texts"] == passages and body["query"] == "q"
    monkeypatch.setenv("RR_KEY", "s3cret")
    cfg = RerankConfig(provider="http", url=rerank_server + "/v1", model="bge-rr",
                       api_key_env="RR_KEY")
    co = make_reranker(cfg)
    assert co is not None
    assert co.score("q", passages) == pytest.approx([expected(p) for p in passages])
    path, body, auth = _RerankHandler.requests[-1]
    assert path == "/v1/rerank" and body["documents"] == passages and body["model"] == "bge-rr"
    assert auth == "Bearer s3cret"
    assert co.score("q", []) == []


def test_http_reranker_failures_are_clear(rerank_server: str) -> None:
    r = HttpReranker(rerank_server)
    _RerankHandler.mode = "broken"
    with pytest.raises(ProviderUnavailable, match="malformed rerank answer"):
        r.score("q", ["a"])
    _RerankHandler.mode = "error"
    with pytest.raises(ProviderUnavailable, match="HTTP 503"):
        r.score("q", ["a"])
    gone = HttpReranker("http://127.0.0.1:9", timeout=5)
    with pytest.raises(ProviderUnavailable, match="cannot reach"):
        gone.score("q", ["a"])


# --- search end to end ----------------------------------------------------------------
NOTES = {
    "garden.md": "# Garden\n\nThe garden garden needs water and a garden plan.\n",
    "compost.md": "# Heap\n\nTurn the compost in the garden weekly.\n",
    "faq.md": "# Questions\n\nThe answer is here: a garden thrives on compost.\n",
    "bread.md": "# Bread\n\nFeed the starter before baking bread.\n",
}


PLAIN = ["garden.md", "compost.md", "faq.md"]
RERANKED = ["garden.md", "faq.md", "compost.md"]


def _paths(res: Any) -> list[str]:
    return [h.path for h in res.hits]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _config(tmp_path: Path, rerank: dict[str, Any]) -> Config:
    return Config(db_path=tmp_path / "i.db", rerank=rerank)


def test_search_reranks_and_explains(tmp_path: Path, vault: Path, xenc_dir: Path) -> None:
    cfg = _config(tmp_path, {"provider": "onnx", "path": str(xenc_dir)})
    with Cairn(cfg) as cairn:
        cairn.index([vault])
        plain = cairn.search("garden", mode="keyword", explain=True)
        assert [h.path for h in plain.hits] == PLAIN  # BM25: most "garden"s first
        assert "rerank" not in plain.hits[0].explain
        rr = cairn.search("garden", mode="keyword", explain=True, rerank=True)
        paths = [h.path for h in rr.hits]
        # "answer" + "compost" (4 + 1.5) lift faq.md over compost.md; the exact title
        # and the 0.75 weight of rank 1 keep garden.md first
        assert paths == RERANKED, paths
        for h in rr.hits:
            assert summands_add_up(h.explain)
            sec = h.explain["rerank"]
            assert sec["model"] == "onnx:tiny-xenc" and sec["rank_before"] >= 1
            assert 0 <= sec["relevance"] <= 1
        top = rr.hits[1].explain["rerank"]
        # the passage is title + body: "answer" and "compost" count, "here:" splits
        assert top["rank_before"] == 3
        assert top["relevance"] == pytest.approx(sigmoid(BIAS + 4.0 + 1.5), abs=1e-6)
        assert not rr.notes


def test_search_reranks_by_config_and_says_when_it_cannot(
    tmp_path: Path, vault: Path, xenc_dir: Path
) -> None:
    on = _config(tmp_path, {"provider": "onnx", "path": str(xenc_dir), "enabled": True})
    with Cairn(on) as cairn:
        cairn.index([vault])
        assert _paths(cairn.search("garden", mode="keyword")) == RERANKED
        assert _paths(cairn.search("garden", mode="keyword", rerank=False)) == PLAIN
    with Cairn(_config(tmp_path, {})) as cairn:
        res = cairn.search("garden", mode="keyword", rerank=True)
        assert _paths(res) == PLAIN
        assert any("not reranked: no reranker configured" in n for n in res.notes)
    bad = _config(tmp_path, {"provider": "onnx", "path": str(tmp_path / "missing")})
    with Cairn(bad) as cairn:
        res = cairn.search("garden", mode="keyword", rerank=True)
        assert res.hits and any("not reranked" in n and "missing" in n for n in res.notes)


def test_search_survives_a_failing_endpoint(
    tmp_path: Path, vault: Path, rerank_server: str
) -> None:
    cfg = _config(tmp_path, {"provider": "http", "url": rerank_server})
    with Cairn(cfg) as cairn:
        cairn.index([vault])
        ok = cairn.search("garden", mode="keyword", rerank=True)
        assert _paths(ok) == RERANKED and not ok.notes
        _RerankHandler.mode = "error"
        res = cairn.search("garden", mode="keyword", rerank=True)
        assert _paths(res) == PLAIN
        assert any(n.startswith("reranking failed") and "HTTP 503" in n for n in res.notes)


def test_cli_rerank_flag(tmp_path: Path, vault: Path, xenc_dir: Path) -> None:
    from cairn.interfaces.cli import app

    toml = tmp_path / "cairn.toml"
    toml.write_text(f'[rerank]\nprovider = "onnx"\npath = "{xenc_dir}"\n')
    env = {"CAIRN_CONFIG": str(toml), "CAIRN_DB": str(tmp_path / "i.db"), "CAIRN_EMBED": "none"}
    runner = CliRunner()
    assert runner.invoke(app, ["index", str(vault)], env=env).exit_code == 0
    plain = runner.invoke(app, ["search", "garden", "--json"], env=env)
    assert plain.exit_code == 0, plain.output
    assert [h["path"] for h in json.loads(plain.output)["hits"]] == PLAIN
    rr = runner.invoke(app, ["search", "garden", "--rerank", "--json", "--explain"], env=env)
    assert rr.exit_code == 0, rr.output
    data = json.loads(rr.output)
    assert [h["path"] for h in data["hits"]] == RERANKED
    assert data["hits"][1]["explain"]["rerank"]["model"] == "onnx:tiny-xenc"
    text = runner.invoke(app, ["search", "garden", "--rerank", "--explain"], env=env)
    assert text.exit_code == 0, text.output
    assert text.output.index("faq.md") < text.output.index("compost.md")
    assert "rerank (onnx:tiny-xenc)" in text.output and "fused rank" in text.output


# --- the doors: HTTP API (a real uvicorn on loopback) and MCP (the SDK's client) ------
@pytest.fixture
def indexed(tmp_path: Path, vault: Path, xenc_dir: Path) -> Iterator[Cairn]:
    cfg = _config(tmp_path, {"provider": "onnx", "path": str(xenc_dir)})
    with Cairn(cfg) as cairn:
        cairn.index([vault])
        yield cairn


def test_http_api_reranks(indexed: Cairn) -> None:
    pytest.importorskip("fastapi")
    uvicorn = pytest.importorskip("uvicorn")
    # port 0: the kernel picks a free port; the policy must name the real one, so the
    # socket is bound first and handed to uvicorn
    import socket
    import time
    import urllib.request

    from cairn.interfaces.api.app import create_app
    from cairn.interfaces.api.security import Policy

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(indexed, Policy.for_bind("127.0.0.1", port, token=None))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    t = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    t.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert time.monotonic() < deadline and t.is_alive(), "uvicorn did not start"
            time.sleep(0.02)

        def post(body: dict[str, Any]) -> Any:
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/search", data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"}, method="POST",
            )
            with urllib.request.urlopen(req, timeout=30) as resp:
                return json.loads(resp.read())

        base = {"query": "garden", "mode": "keyword"}
        assert [h["path"] for h in post(base)["hits"]] == PLAIN
        got = post({**base, "rerank": True, "explain": True})
        assert [h["path"] for h in got["hits"]] == RERANKED
        assert got["hits"][1]["explain"]["rerank"]["rank_before"] == 3
    finally:
        server.should_exit = True
        t.join(10)
        sock.close()


def test_mcp_search_reranks(indexed: Cairn) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from cairn.interfaces.mcp.server import build_server

    async def main() -> tuple[Any, Any, Any]:
        async with Client(build_server(indexed)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            plain = await client.call_tool("search", {"query": "garden", "mode": "keyword"})
            rr = await client.call_tool(
                "search", {"query": "garden", "mode": "keyword", "rerank": True}
            )
            return tools["search"], plain.structured_content, rr.structured_content

    tool, plain, rr = anyio.run(main)
    assert tool.input_schema["properties"]["rerank"]["description"]
    assert [h["path"] for h in plain["hits"]] == PLAIN
    assert [h["path"] for h in rr["hits"]] == RERANKED
