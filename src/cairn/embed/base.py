"""The :class:`Embedder` protocol and helpers shared by providers (DESIGN.md, Embeddings)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cairn.errors import ProviderUnavailable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
else:
    Matrix = object


NO_EMBEDDER_NOTICE = "embeddings are off (no embedding model available): search uses keywords only"
"""What a run or a search says when no embedding model can be had."""


@runtime_checkable

class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    Attributes:
        name: a short human name (``static:minilm-l6-static``, ``http:nomic-embed-text``).
        dim: the vector dimension.
        fingerprint: identifies the embedding space: the same text under the same
            fingerprint always gives the same vector (model weights, pooling, dim).
            Vectors of different fingerprints are never compared or mixed.

    An embedder may also have ``fusion``: the fusion settings its model recommends
    (:func:`read_fusion`; a weak model's list weighs less), read with ``getattr``.
    """

    name: str
    dim: int
    fingerprint: str

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Embed ``texts``; returns a float32 array of shape ``[len(texts), dim]`` whose
        rows have L2 norm 1 (a zero row for a text that has no embedding)."""
        ...


def l2_normalize(x: Matrix) -> Matrix:
    """Rows of ``x`` scaled to unit L2 norm, as C-contiguous float32 (zero rows stay zero)."""
    import numpy as np

    arr = np.ascontiguousarray(x, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Matrix = (arr / norms).astype(np.float32, copy=False)
    return out


def file_fingerprint(*paths: Path, extra: str = "") -> str:
    """A 16-hex-digit hash over files' sizes and contents (first and last MiB) and ``extra``.

    Reading only the ends keeps it fast for 90 MB weight files while still changing
    whenever a different model is put in place.
    """
    import hashlib  # here: a keyword search loads no hash (start-up, bench/startup.py)

    h = hashlib.sha256(extra.encode())
    for p in paths:
        size = p.stat().st_size
        h.update(f"{p.name}:{size}".encode())
        with p.open("rb") as f:
            h.update(f.read(1 << 20))
            if size > 2 << 20:
                f.seek(-(1 << 20), 2)
                h.update(f.read())
    return h.hexdigest()[:16]


FUSION_FILE = "fusion.json"
"""A model folder's recommended fusion settings (not part of its fingerprint: they
change the ranking, not the vectors)."""


def read_fusion(folder: Path) -> dict[str, Any] | None:
    """The fusion settings a model folder recommends (``fusion.json``: a JSON object
    with any of ``weights`` ``{"semantic": w}``, ``rrf_k``, ``min_similarity``,
    plus free-form notes), or ``None`` when it has none.

    Raises:
        ProviderUnavailable: the file exists but is not a JSON object (the message
            names the file and the reason).
    """
    import json

    path = folder / FUSION_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ProviderUnavailable(f"{path}: not readable JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ProviderUnavailable(f"{path}: must hold a JSON object")
    return data


def require(module: str, extra: str | None) -> None:
    """Raise :class:`ProviderUnavailable` when ``module`` is missing, saying how to get it:
    ``pip install 'cairn[<extra>]'``, or (``extra=None``, a core dependency) reinstalling
    cairn."""
    import importlib.util

    from cairn.errors import ProviderUnavailable

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        how = f"pip install 'cairn[{extra}]'" if extra else "pip install --force-reinstall cairn"
        raise ProviderUnavailable(
            f"the {module!r} package is not installed; install it with: {how}"
        )


def sigmoid(x: float) -> float:
    """The logistic function, a logit → (0, 1), without overflow."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def squash(x: float) -> float:
    """An endpoint's score as a relevance: kept when already in [0, 1], else taken as
    a logit (:func:`sigmoid`)."""
    return x if 0.0 <= x <= 1.0 else sigmoid(x)
