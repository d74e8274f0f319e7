"""Train a static embedding model on a corpus the teacher has embedded (tokenlearn's method).

A static model (model2vec) embeds a text as the weighted mean of its tokens' vectors.
Distillation gives every token the teacher's vector of that token *alone*; tokenlearn
(Minish Lab, ``tokenlearn`` 0.2) goes further: it trains the token table so that the
mean over a real text's tokens predicts the teacher's vector of the whole text. This
module is that training, in numpy only (no torch), so it can run on a user's machine
over the vectors an index already holds (``cairn embed --train-static``) as well as in
``bench/train_static.py``.

The model, per text with WordPiece tokens ``t_1..t_n`` (no special tokens):

    pooled = (1/n) Σ w[t_i] · E[t_i]            (d dimensions)
    pred   = pooled · W + b                     (the teacher's D dimensions)
    loss   = mean((pred − teacher)²)

``E`` starts as the base model's unit-length rows, ``w`` as their norms (tokenlearn's
initialisation), ``W`` and ``b`` at random/zero; Adam on the rows a batch touches.
The result keeps the map: each token's vector becomes ``w[t] · E[t] · W`` (mean pooling
commutes with a linear map, so a text's mean is the trained prediction up to ``b``),
then PCA to ``dims`` and zipf (SIF) re-weighting ``w_rank = 1 / log(2 + rank)`` is
optional, as model2vec does at distillation.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Array = npt.NDArray[np.float32]
else:
    Array = Any

TrainProgress = Callable[[int, float, float], None]
"""``progress(epoch, train loss, validation loss)`` after each epoch."""


@dataclass(frozen=True, slots=True)
class TrainConfig:
    """Training settings.

    Attributes:
        epochs: at most this many passes over the texts (early stop on validation loss).
        batch_size: texts per Adam step.
        lr: Adam's learning rate.
        patience: epochs without a validation improvement before stopping.
        validation: share of texts held out for early stopping (at most 10,000).
        max_tokens: tokens read per text (the rest is cut, as at run time).
        seed: the random seed (shuffling, the map's initialisation).
    """

    epochs: int = 12
    batch_size: int = 256
    lr: float = 1e-3
    patience: int = 2
    validation: float = 0.05
    max_tokens: int = 512
    seed: int = 0


@dataclass(frozen=True, slots=True)
class TrainResult:
    """What :func:`train_table` produced.

    Attributes:
        vectors: ``float32[V, D]``: each token's trained vector in the teacher's space
            (before PCA).
        train_loss / val_loss: per epoch, mean squared error.
        epochs: epochs run; ``seconds``: wall time.
    """

    vectors: Array
    train_loss: tuple[float, ...]
    val_loss: tuple[float, ...]
    epochs: int
    seconds: float


def _pool(parts: Sequence[Any], e: Array, w: Array) -> Array:
    """``float32[len(parts), d]``: per text the mean of ``w[t] · e[t]`` over its tokens
    (every part non-empty)."""
    mix, uniq = _mixing(parts)
    out: Array = mix @ (e[uniq] * w[uniq][:, None])
    return out


def _mixing(parts: Sequence[Any]) -> tuple[Array, Any]:
    """``(A float32[len(parts), U], uniq int64[U])``: the distinct tokens of ``parts``
    and ``A[j, u]`` = (occurrences of ``uniq[u]`` in part ``j``) / len(part ``j``), so
    that a batch's mean pooling is the matrix product ``A @ table[uniq]`` and its
    gradient ``A.T @ grad`` (dense BLAS products: many times faster in numpy than a
    per-text loop, ``np.add.at`` or ``np.add.reduceat``)."""
    import numpy as np

    lens = np.fromiter((len(p) for p in parts), dtype=np.int64, count=len(parts))
    flat = np.concatenate(parts).astype(np.int64)
    seg = np.repeat(np.arange(len(parts)), lens)
    uniq, inv = np.unique(flat, return_inverse=True)
    n_u = len(uniq)
    weights = (1.0 / lens)[seg]
    mix = np.bincount(seg * n_u + inv, weights=weights, minlength=len(parts) * n_u)
    return mix.reshape(len(parts), n_u).astype(np.float32), uniq


def train_table(
    tokens: Sequence[Any],
    targets: Array,
    base: Array,
    config: TrainConfig | None = None,
    progress: TrainProgress | None = None,
) -> TrainResult:
    """Train token vectors so a text's mean predicts its teacher vector.

    Args:
        tokens: per text, its token ids (``int`` arrays, no special tokens, non-empty).
        targets: ``float32[len(tokens), D]`` the teacher's vectors of the same texts.
        base: ``float32[V, d]`` the base static model's token vectors (weights applied).
        config: training settings.
        progress: called after each epoch.

    Returns:
        A :class:`TrainResult`; ``vectors`` is ``float32[V, D]``.

    Raises:
        ValueError: ``tokens`` and ``targets`` differ in length, or fewer than 20 texts.
    """
    import numpy as np

    cfg = config or TrainConfig()
    if len(tokens) != len(targets):
        raise ValueError(f"{len(tokens)} token lists but {len(targets)} target vectors")
    if len(tokens) < 20:
        raise ValueError(f"too few texts to train on ({len(tokens)}; at least 20)")
    t_start = time.perf_counter()
    rng = np.random.default_rng(cfg.seed)
    y_all = np.ascontiguousarray(targets, dtype=np.float32)
    norms = np.linalg.norm(base, axis=1).astype(np.float32)
    e = (base / np.maximum(norms, 1e-12)[:, None]).astype(np.float32)
    w = norms.copy()
    d, dim_out = e.shape[1], y_all.shape[1]
    big_w = (rng.standard_normal((d, dim_out)) / math.sqrt(d)).astype(np.float32)
    b = np.zeros(dim_out, dtype=np.float32)
    params = [e, w, big_w, b]
    m1 = [np.zeros_like(p) for p in params]
    m2 = [np.zeros_like(p) for p in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    order = rng.permutation(len(tokens))
    n_val = min(10_000, max(1, int(len(tokens) * cfg.validation)))
    val_idx, train_idx = order[:n_val], order[n_val:]
    step = 0

    def adam(k: int, grad: Array, rows: Array | None = None) -> None:
        lr_t = cfg.lr * math.sqrt(1 - beta2**step) / (1 - beta1**step)
        p, a, s = params[k], m1[k], m2[k]
        if rows is None:
            a *= beta1
            a += (1 - beta1) * grad
            s *= beta2
            s += (1 - beta2) * grad * grad
            p -= lr_t * a / (np.sqrt(s) + eps)
        else:
            a[rows] = beta1 * a[rows] + (1 - beta1) * grad
            s[rows] = beta2 * s[rows] + (1 - beta2) * grad * grad
            p[rows] -= lr_t * a[rows] / (np.sqrt(s[rows]) + eps)

    def loss_of(idx: Any) -> float:
        total = 0.0
        for i in range(0, len(idx), 1024):
            part = idx[i : i + 1024]
            diff = _pool([tokens[k] for k in part], e, w) @ big_w + b - y_all[part]
            total += float((diff * diff).sum())
        return float(total / (len(idx) * dim_out))

    best = loss_of(val_idx)
    best_params = [p.copy() for p in params]
    train_hist: list[float] = []
    val_hist: list[float] = []
    waited = 0
    epochs = 0
    for epoch in range(cfg.epochs):
        epochs = epoch + 1
        rng.shuffle(train_idx)
        seen = 0.0
        for i in range(0, len(train_idx), cfg.batch_size):
            part = train_idx[i : i + cfg.batch_size]
            parts = [tokens[k] for k in part]
            mix, uniq = _mixing(parts)
            e_u, w_u = e[uniq], w[uniq]
            pooled = mix @ (e_u * w_u[:, None])
            diff = pooled @ big_w + b - y_all[part]
            seen += float((diff * diff).sum())
            dout = (2.0 / (len(part) * dim_out)) * diff
            g_big_w = pooled.T @ dout
            g_b = dout.sum(axis=0)
            g_we = mix.T @ (dout @ big_w.T)  # d loss / d (w_t e_t), per distinct token
            g_e = g_we * w_u[:, None]
            g_w = (g_we * e_u).sum(axis=1)
            step += 1
            adam(0, g_e.astype(np.float32), uniq)
            adam(1, g_w.astype(np.float32), uniq)
            adam(2, g_big_w.astype(np.float32))
            adam(3, g_b.astype(np.float32))
        train_hist.append(seen / (len(train_idx) * dim_out))
        val = loss_of(val_idx)
        val_hist.append(val)
        if progress:
            progress(epochs, train_hist[-1], val)
        if val < best - 1e-6:
            best, waited = val, 0
            best_params = [p.copy() for p in params]
        else:
            waited += 1
            if waited >= cfg.patience:
                break
    e, w, big_w, b = best_params
    vectors = ((e * w[:, None]) @ big_w).astype(np.float32)
    return TrainResult(
        vectors=vectors,
        train_loss=tuple(train_hist),
        val_loss=tuple(val_hist),
        epochs=epochs,
        seconds=time.perf_counter() - t_start,
    )


def pca_reduce(vectors: Array, dims: int) -> Array:
    """``vectors`` centred and projected onto their first ``dims`` principal axes
    (``float32[V, dims]``; unchanged when ``dims`` is not smaller than the width).

    The axes are the top eigenvectors of the ``D × D`` covariance (``numpy.linalg.eigh``),
    the same subspace as an SVD of the rows up to each axis' sign, which no cosine
    sees; it decomposes a ``D × D`` matrix rather than the ``V × D`` table, which for a
    vocabulary of tens of thousands of tokens is far cheaper.
    """
    import numpy as np

    if dims >= vectors.shape[1]:
        return vectors.astype(np.float32)
    x = vectors.astype(np.float64)
    x -= x.mean(axis=0)
    _, axes = np.linalg.eigh(x.T @ x)  # eigenvalues ascending
    out: Array = (x @ axes[:, ::-1][:, :dims]).astype(np.float32)
    return out


@dataclass(frozen=True, slots=True)
class FitReport:
    """What :func:`fit_static` did.

    Attributes:
        folder: the model folder written.
        texts / tokens: training texts (those with at least one known token) and their
            tokens.
        epochs: epochs run (early stopping may end before ``TrainConfig.epochs``).
        val_loss: validation mean squared error per epoch.
        seconds: wall time of tokenising, training, PCA and saving.
    """

    folder: str
    texts: int
    tokens: int
    epochs: int
    val_loss: tuple[float, ...]
    seconds: float


def fit_static(
    texts: Sequence[str],
    targets: Array,
    base: Any,
    out: Any,
    *,
    dims: int = 256,
    quantize: str = "int8",
    config: TrainConfig | None = None,
    progress: TrainProgress | None = None,
    meta: dict[str, Any] | None = None,
) -> FitReport:
    """Train a static model on ``texts`` and their teacher vectors, starting from the
    static model ``base``, and save it as a model2vec folder at ``out``.

    The whole of tokenlearn's recipe in one call: tokenise with ``base``'s tokenizer (as
    :class:`cairn.embed.static.StaticEmbedder` embeds), :func:`train_table`,
    :func:`pca_reduce` to ``dims``, :func:`cairn.embed.static.save_static`.

    Args:
        texts: the training texts (chunk texts exactly as the index embeds them).
        targets: ``float32[len(texts), D]`` the teacher's unit vectors of ``texts``.
        base: a loaded :class:`cairn.embed.static.StaticEmbedder` (its tokenizer and
            token table are the starting point).
        out: a :class:`pathlib.Path`; created or overwritten (``model.safetensors``,
            ``tokenizer.json``, ``config.json``).
        dims: output dimensions (PCA); ``quantize``: ``int8``, ``float16``, ``float32``.
        config: training settings; ``progress``: called after each epoch.
        meta: extra entries under ``cairn_training`` in ``config.json``.

    Returns:
        A :class:`FitReport`.

    Raises:
        ValueError: lengths differ, or fewer than 20 texts have a known token.
    """
    import numpy as np

    from cairn.embed.static import save_static

    t0 = time.perf_counter()
    if len(texts) != len(targets):
        raise ValueError(f"{len(texts)} texts but {len(targets)} target vectors")
    ids = base.token_ids(texts)
    keep = [i for i, x in enumerate(ids) if len(x)]
    tokens = [ids[i] for i in keep]
    y = np.asarray(targets, dtype=np.float32)[keep]
    res = train_table(tokens, y, base._table, config, progress)
    vectors = pca_reduce(res.vectors, dims)
    n_tok = int(sum(len(x) for x in tokens))
    save_static(
        out,
        vectors,
        base.path / "tokenizer.json",
        quantize=quantize,
        config={
            "model_name": "cairn-static-trained",
            "tokenizer_name": "sentence-transformers/all-MiniLM-L6-v2",
            "apply_pca": dims,
            "cairn_training": {
                "method": "tokenlearn (cairn.embed.train)",
                "base": base.name,
                "texts": len(tokens),
                "tokens": n_tok,
                "epochs": res.epochs,
                "val_loss": [round(v, 7) for v in res.val_loss],
                **(meta or {}),
            },
        },
    )
    return FitReport(
        folder=str(out),
        texts=len(tokens),
        tokens=n_tok,
        epochs=res.epochs,
        val_loss=res.val_loss,
        seconds=time.perf_counter() - t0,
    )
