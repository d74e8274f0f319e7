"""The shipped static model: model2vec, distilled from all-MiniLM-L6-v2.

A static model looks every token up in a table and mean-pools, so it embeds thousands
of chunks a second on one CPU core with no neural network at run time. The weights
(``cairn/data/models/minilm-l6-static``, 256 dimensions, float16, about 15 MB) were
distilled once with ``bench/distill_static.py``; see the folder's README.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from cairn.embed.base import Matrix, file_fingerprint, l2_normalize, require
from cairn.embed.locator import ModelLocator, ModelSpec
from cairn.errors import ProviderUnavailable

STATIC_SPEC = ModelSpec(
    name="minilm-l6-static",
    required=("model.safetensors", "tokenizer.json", "config.json"),
    repo_id=None,
)


class StaticEmbedder:
    """Embeds with a model2vec static model.

    Args:
        locator: where to look for the model (default: package data, then cache).
        spec: which model folder to load.

    Raises:
        ProviderUnavailable: ``model2vec`` is not installed, or the model is missing.
    """

    def __init__(self, locator: ModelLocator | None = None, spec: ModelSpec = STATIC_SPEC) -> None:
        require("model2vec", None)
        folder, self.origin = (locator or ModelLocator()).locate(spec)
        try:
            from model2vec import StaticModel

            self._model = StaticModel.from_pretrained(str(folder))
        except Exception as exc:
            raise ProviderUnavailable(f"cannot load static model from {folder}: {exc}") from exc
        self.path = folder
        self.name = f"static:{spec.name}"
        self.dim = int(self._model.dim)
        self.fingerprint = "static-" + file_fingerprint(
            *(folder / r for r in spec.required), extra="model2vec-mean"
        )

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Unit vectors ``float32[len(texts), dim]`` (see :class:`cairn.embed.Embedder`)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self._model.encode(list(texts), show_progress_bar=False, use_multiprocessing=False)
        return l2_normalize(np.asarray(vecs, dtype=np.float32))
