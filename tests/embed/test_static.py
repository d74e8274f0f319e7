"""The static model's own loader, writer and encoder (no model2vec needed at run time)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cairn.embed.locator import PACKAGE_MODELS
from cairn.embed.static import (
    StaticEmbedder,
    read_safetensors,
    save_static,
    write_safetensors,
)
from cairn.errors import ProviderUnavailable

SHIPPED = PACKAGE_MODELS / "minilm-l6-static"
TEXTS = [
    "Spiking neurons fire when the membrane potential crosses a threshold.",
    "An org-mode agenda lists TODO items by deadline.",
    "x",
]


def test_safetensors_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    arrays = {
        "embeddings": rng.standard_normal((7, 5)).astype(np.float16),
        "weights": rng.random(7).astype(np.float32),
        "codes": rng.integers(-127, 127, (3, 4)).astype(np.int8),
        "mapping": np.arange(7, dtype=np.int64),
    }
    path = tmp_path / "m.safetensors"
    write_safetensors(path, arrays)
    back = read_safetensors(path)
    assert set(back) == set(arrays)
    for k, v in arrays.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape
        assert np.array_equal(back[k], v)


def test_unreadable_model_file_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "model.safetensors"
    bad.write_bytes(b"\xff" * 20)
    with pytest.raises(ProviderUnavailable, match=r"model\.safetensors"):
        read_safetensors(bad)


def test_matches_model2vec_on_the_shipped_model() -> None:
    model2vec = pytest.importorskip("model2vec")
    ours = StaticEmbedder(folder=SHIPPED)
    theirs = model2vec.StaticModel.from_pretrained(str(SHIPPED))
    a = ours.embed(TEXTS)
    b = theirs.encode(TEXTS, show_progress_bar=False, use_multiprocessing=False)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    assert a.dtype == np.float32 and a.shape == (3, ours.dim)
    assert np.all((a * b).sum(axis=1) > 0.999)


def test_saved_table_loads_back_in_each_precision(tmp_path: Path) -> None:
    base = StaticEmbedder(folder=SHIPPED)
    ref = base.embed(TEXTS)
    sizes = {}
    for q in ("float32", "float16", "int8"):
        out = save_static(tmp_path / q, base._table, SHIPPED / "tokenizer.json", quantize=q)
        emb = StaticEmbedder(folder=out)
        assert emb.dim == base.dim and emb.name == f"static:{q}"
        got = emb.embed(TEXTS)
        assert np.all((got * ref).sum(axis=1) > 0.999), q
        sizes[q] = (out / "model.safetensors").stat().st_size
    assert sizes["int8"] < sizes["float16"] < sizes["float32"]
    fingerprints = {StaticEmbedder(folder=tmp_path / q).fingerprint for q in sizes}
    assert len(fingerprints) == 3  # different files, different spaces
    with pytest.raises(ValueError, match="quantize"):
        save_static(tmp_path / "bad", base._table, SHIPPED / "tokenizer.json", quantize="int4")


def test_texts_without_known_tokens_get_zero_rows() -> None:
    emb = StaticEmbedder(folder=SHIPPED)
    v = emb.embed(["", "   ", TEXTS[0]])
    assert v.shape == (3, emb.dim)
    assert not v[0].any() and not v[1].any()
    assert abs(float(np.linalg.norm(v[2])) - 1.0) < 1e-5
    assert emb.embed([]).shape == (0, emb.dim)


def test_long_texts_are_cut_at_max_length() -> None:
    emb = StaticEmbedder(folder=SHIPPED)
    ids = emb.token_ids(["word " * 5000])
    assert len(ids[0]) == emb.max_length
    head = " ".join(["word"] * emb.max_length)
    assert np.allclose(emb.embed(["word " * 5000])[0], emb.embed([head])[0], atol=1e-6)


def test_training_makes_text_means_predict_the_teacher() -> None:
    from cairn.embed.train import TrainConfig, pca_reduce, train_table

    rng = np.random.default_rng(3)
    vocab, d, dim_out = 60, 8, 12
    hidden = rng.standard_normal((vocab, dim_out)).astype(np.float32)
    base = rng.standard_normal((vocab, d)).astype(np.float32)  # unrelated to the teacher
    tokens = [rng.integers(0, vocab, rng.integers(3, 15)) for _ in range(600)]
    targets = np.stack([hidden[t].mean(axis=0) for t in tokens])
    seen: list[tuple[int, float, float]] = []
    res = train_table(
        tokens,
        targets,
        base,
        TrainConfig(epochs=30, batch_size=32, lr=0.02, patience=3, validation=0.1),
        progress=lambda e, tr, va: seen.append((e, tr, va)),
    )
    assert res.vectors.shape == (vocab, dim_out) and res.epochs == len(seen)
    assert res.val_loss[-1] < 0.5 * res.val_loss[0]  # it learned, on held-out texts
    pred = np.stack([res.vectors[t].mean(axis=0) for t in tokens[:50]])
    cos = (pred * targets[:50]).sum(1) / (
        np.linalg.norm(pred, axis=1) * np.linalg.norm(targets[:50], axis=1)
    )
    assert float(cos.mean()) > 0.8
    assert pca_reduce(res.vectors, 4).shape == (vocab, 4)
    with pytest.raises(ValueError, match="target"):
        train_table(tokens[:30], targets[:29], base)


def test_embed_model_names_a_static_folder(tmp_path: Path) -> None:
    from cairn.embed.registry import EmbedConfig, make_embedder

    base = StaticEmbedder(folder=SHIPPED)
    out = save_static(tmp_path / "mine", base._table, SHIPPED / "tokenizer.json")
    emb = make_embedder(EmbedConfig(provider="static", model=str(out)))
    assert emb is not None and emb.name == "static:mine" and emb.dim == base.dim
    assert emb.fingerprint != base.fingerprint  # a different file, its own space
    with pytest.raises(ProviderUnavailable, match=r"no model\.safetensors"):
        make_embedder(EmbedConfig(provider="static", model=str(tmp_path / "missing")))
