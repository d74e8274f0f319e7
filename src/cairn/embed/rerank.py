"""Rerankers: score (query, passage) pairs for the re-rank of a search's top hits.

The same provider pattern as embeddings (:mod:`cairn.embed.registry`): a protocol,
providers, and :func:`make_reranker` from the ``[rerank]`` section of ``cairn.toml``::

    [rerank]
    provider = "none"     # none | onnx | http
    enabled = false       # rerank every search (else only with --rerank / rerank=True)
    top_k = 30            # how many of the fused results are re-scored
    max_tokens = 256      # query + passage tokens per pair (onnx)
    threads = 1           # CPU threads of the onnx model
    # provider = "onnx": a cross-encoder exported to ONNX, in a folder holding
    # model.onnx (or model_int8.onnx) and tokenizer.json:
    path = "~/models/ms-marco-MiniLM-L-6-v2-onnx"
    # provider = "http": a TEI / Cohere / Jina-compatible /rerank endpoint:
    url = "http://127.0.0.1:8080"
    model = "BAAI/bge-reranker-base"
    api_key_env = "RERANK_API_KEY"

No cross-encoder ships in a Python package that can be installed offline (none of the
packaged rerankers carries its weights), so none is on by default: ``onnx`` loads one
a user exported (``optimum-cli export onnx --model cross-encoder/ms-marco-MiniLM-L-6-v2
DIR``), ``http`` calls a server. Scores are relevances in [0, 1]: the sigmoid of a
single-logit cross-encoder, the softmax of the "relevant" class of a two-logit one, or
an endpoint's own score (a raw logit is squashed the same way).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from cairn.embed.base import file_fingerprint, require, sigmoid
from cairn.errors import ConfigError, ProviderUnavailable

RERANK_PROVIDERS = ("none", "onnx", "http")
DEFAULT_TOP_K = 30
MODEL_FILES = ("model.onnx", "model_int8.onnx", "model_quantized.onnx")
"""The ONNX file names looked for in an ``onnx`` reranker's folder, in this order."""


@runtime_checkable
class Reranker(Protocol):
    """Scores how well each passage answers a query.

    Attributes:
        name: a short human name (``onnx:ms-marco-MiniLM-L-6-v2``, ``http:bge-reranker``).
    """

    name: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Relevance of each passage to ``query``, in [0, 1], in passage order.

        Raises:
            ProviderUnavailable: the model failed or the endpoint cannot be used.
        """
        ...


@dataclass(frozen=True, slots=True)
class RerankConfig:
    """Reranking settings (``[rerank]`` in ``cairn.toml``; see the module docstring).

    Attributes:
        provider: one of :data:`RERANK_PROVIDERS`.
        enabled: rerank every search, not only those that ask.
        top_k: fused results re-scored (the rest keep their order below them).
        path: the ``onnx`` model folder.
        max_tokens: tokens per (query, passage) pair for ``onnx``.
        threads: the ``onnx`` model's CPU threads.
        url / model / api_key_env: for ``http``.
        timeout: seconds per ``http`` request.
    """

    provider: str = "none"
    enabled: bool = False
    top_k: int = DEFAULT_TOP_K
    path: str | None = None
    max_tokens: int = 256
    threads: int = 1
    url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout: float = 30.0

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> RerankConfig:
        """Read a ``[rerank]`` table.

        Raises:
            ConfigError: an unknown provider, a ``top_k`` below 1, or a value of the
                wrong type.
        """
        provider = str(data.get("provider", "none"))
        if provider not in RERANK_PROVIDERS:
            raise ConfigError(
                f"[rerank] provider must be one of {', '.join(RERANK_PROVIDERS)}, "
                f"not {provider!r}"
            )
        enabled = data.get("enabled", False)
        if not isinstance(enabled, bool):
            raise ConfigError("[rerank] enabled must be true or false")
        try:
            out = cls(
                provider=provider,
                enabled=enabled,
                top_k=int(data.get("top_k", DEFAULT_TOP_K)),
                path=str(data["path"]) if "path" in data else None,
                max_tokens=int(data.get("max_tokens", 256)),
                threads=int(data.get("threads", 1)),
                url=str(data["url"]) if "url" in data else None,
                model=str(data["model"]) if "model" in data else None,
                api_key_env=str(data["api_key_env"]) if "api_key_env" in data else None,
                timeout=float(data.get("timeout", 30.0)),
            )
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"[rerank] has a value of the wrong type: {exc}") from exc
        if out.top_k < 1:
            raise ConfigError(f"[rerank] top_k must be 1 or more, not {out.top_k}")
        if out.max_tokens < 8:
            raise ConfigError(f"[rerank] max_tokens must be 8 or more, not {out.max_tokens}")
        return out


def make_reranker(config: RerankConfig) -> Reranker | None:
    """The configured reranker, or ``None`` for provider ``none``.

    Raises:
        ProviderUnavailable: onnxruntime/tokenizers are missing, the model folder or
            its files are missing or unreadable, or the endpoint is unusable.
        ConfigError: ``onnx`` without ``path``, ``http`` without ``url``.
    """
    if config.provider == "none":
        return None
    if config.provider == "onnx":
        if not config.path:
            raise ConfigError("[rerank] provider 'onnx' needs path (the model folder)")
        return OnnxCrossEncoder(
            Path(config.path).expanduser(), max_tokens=config.max_tokens, threads=config.threads
        )
    if config.provider == "http":
        if not config.url:
            raise ConfigError("[rerank] provider 'http' needs url")
        from cairn.embed.rerank_http import HttpReranker

        key = os.environ.get(config.api_key_env) if config.api_key_env else None
        return HttpReranker(config.url, config.model, api_key=key, timeout=config.timeout)
    raise ProviderUnavailable(f"unknown rerank provider {config.provider!r}")


def model_file(folder: Path) -> Path:
    """The ONNX file of a cross-encoder folder (first of :data:`MODEL_FILES`).

    Raises:
        ProviderUnavailable: the folder or its files are missing.
    """
    if not folder.is_dir():
        raise ProviderUnavailable(f"reranker model folder {folder} does not exist")
    if not (folder / "tokenizer.json").is_file():
        raise ProviderUnavailable(f"reranker model folder {folder} has no tokenizer.json")
    for name in MODEL_FILES:
        if (folder / name).is_file():
            return folder / name
    raise ProviderUnavailable(
        f"reranker model folder {folder} has none of {', '.join(MODEL_FILES)}"
    )


class OnnxCrossEncoder:
    """A BERT-style cross-encoder exported to ONNX, run with onnxruntime on CPU.

    Each (query, passage) pair is tokenised as ``[CLS] query [SEP] passage [SEP]``
    (the tokenizer's own pair template), truncated to ``max_tokens`` (the passage
    first), padded per batch; the model's ``logits`` (``[batch, 1]`` or ``[batch, 2]``)
    become relevances by :func:`sigmoid` or a softmax.

    Args:
        folder: holds ``tokenizer.json`` and one of :data:`MODEL_FILES`; inputs named
            ``input_ids``, ``attention_mask`` and optionally ``token_type_ids``.
        max_tokens: tokens per pair.
        threads: intra-op threads (default 1: a search runs beside other work).
        batch_size: pairs per session run.

    Raises:
        ProviderUnavailable: onnxruntime or tokenizers is missing, or the model cannot
            be loaded (the message names the folder).
    """

    def __init__(
        self, folder: Path, *, max_tokens: int = 256, threads: int = 1, batch_size: int = 16
    ) -> None:
        require("onnxruntime", None)
        require("tokenizers", None)
        model = model_file(folder)
        try:
            ort = importlib.import_module("onnxruntime")
            Tokenizer = importlib.import_module("tokenizers").Tokenizer
            self._tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
            self._tok.enable_truncation(max_tokens, strategy="only_second")
            self._tok.no_padding()
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = max(1, threads)
            opts.inter_op_num_threads = 1
            self._session = ort.InferenceSession(
                str(model), opts, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise ProviderUnavailable(f"cannot load reranker model from {folder}: {exc}") from exc
        self._inputs = {i.name for i in self._session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self._inputs
        if missing:
            raise ProviderUnavailable(
                f"reranker model {model} lacks the inputs {', '.join(sorted(missing))}"
            )
        self.path = folder
        self.batch_size = max(1, batch_size)
        self.max_tokens = max_tokens
        self.name = f"onnx:{folder.name}"
        self.fingerprint = "xenc-" + file_fingerprint(model, extra=f"pair/{max_tokens}")

    def _logits(self, query: str, passages: Sequence[str]) -> Any:
        import numpy as np

        encs = self._tok.encode_batch([(query, p if p.strip() else " ") for p in passages])
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for i, e in enumerate(encs):
            n = len(e.ids)
            ids[i, :n] = e.ids
            mask[i, :n] = 1
            types[i, :n] = e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = types
        out = np.asarray(self._session.run(None, feed)[0], dtype=np.float64)
        return out.reshape(len(encs), -1)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Relevances in [0, 1] (see :class:`Reranker`), ``batch_size`` pairs per run.

        Raises:
            ProviderUnavailable: the session failed (the message names the model).
        """
        import numpy as np

        out: list[float] = []
        for i in range(0, len(passages), self.batch_size):
            part = passages[i : i + self.batch_size]
            try:
                logits = self._logits(query, part)
            except Exception as exc:
                raise ProviderUnavailable(f"reranker {self.path} failed: {exc}") from exc
            if logits.shape[1] == 1:
                out.extend(sigmoid(float(x)) for x in logits[:, 0])
            else:  # two or more classes: the last is "relevant"
                z = np.exp(logits - logits.max(axis=1, keepdims=True))
                out.extend(float(v) for v in (z[:, -1] / z.sum(axis=1)))
        return out
