"""Embeddings: the :class:`Embedder` protocol, providers, model locator and index step.

Providers are imported lazily (each lives in its own module and imports its heavy
library inside its constructor), so ``import cairn.embed`` costs nothing and a missing
extra surfaces as :class:`cairn.errors.ProviderUnavailable`, never ``ImportError``.

* ``static`` — :class:`cairn.embed.static.StaticEmbedder`: a static (model2vec-format)
  model taught by all-MiniLM-L6-v2, shipped in ``cairn/data/models/minilm-l6-static``
  (or the folder ``[embed] model`` names);
* ``minilm`` — :class:`cairn.embed.sbert.SentenceTransformerEmbedder`: all-MiniLM-L6-v2
  through sentence-transformers (extra ``cairn[sbert]``; install torch first);
* ``minilm-onnx`` — :class:`cairn.embed.onnx.OnnxEmbedder`: all-MiniLM-L6-v2 as int8
  ONNX through onnxruntime, shipped in package data (rebuilt
  with ``python -m cairn.embed.onnx``);
* ``http`` — :class:`cairn.embed.http.HttpEmbedder`: any OpenAI-compatible
  ``/v1/embeddings`` endpoint (standard library only).

``auto`` (the default) is ``minilm-onnx`` when its model is found, else ``static``.
Use :func:`cairn.embed.registry.make_embedder` to build one by name.
"""

from cairn.embed.base import Embedder, l2_normalize

__all__ = ["Embedder", "l2_normalize"]
