"""Static models (model2vec format): a token table and a tokenizer, no network at run time.

A static model looks every token up in a table and takes the mean, so it embeds
thousands of chunks a second on one CPU core. ``minilm-l6-static`` ships in package
data: all-MiniLM-L6-v2 distilled by vocabulary averaging (``bench/distill_static.py``),
then trained tokenlearn-style on licensed corpus texts (``bench/train_static.py``,
:mod:`cairn.embed.train`; 256 dimensions, int8, 7.7 MB; see its README.md). The fast
profile (``[embed] provider = "fast"``) is such a model trained on one's own index by
``cairn embed --train-static`` (:mod:`cairn.ingest.static_training`), loaded from
``<index>.models/fast``; any other folder loads with ``[embed] model``.

A folder holds ``model.safetensors`` (``embeddings`` ``[V, d]`` in float16/float32/int8,
optional ``weights`` ``[V]`` and ``mapping`` ``[V]`` as model2vec writes them),
``tokenizer.json`` and ``config.json``. The safetensors file is read here directly (its
format is an 8-byte header length, a JSON header and the raw arrays), so loading needs
only numpy and ``tokenizers``. Encoding follows model2vec's ``StaticModel.encode``: no
special tokens, ``[UNK]`` dropped, at most ``max_length`` tokens, the mean of the
(weighted) token vectors, L2-normalised (the mean's 1/n vanishes in the normalisation).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cairn.embed.base import Matrix, file_fingerprint, l2_normalize, read_fusion, require
from cairn.embed.locator import ModelLocator, ModelSpec
from cairn.errors import ProviderUnavailable

STATIC_SPEC = ModelSpec(
    name="minilm-l6-static",
    required=("model.safetensors", "tokenizer.json", "config.json"),
    repo_id=None,
)

_DTYPES = {"F16": "<f2", "F32": "<f4", "I8": "i1", "I64": "<i8", "I32": "<i4", "F64": "<f8"}


def read_safetensors(path: Path) -> dict[str, Any]:
    """The arrays of a ``.safetensors`` file, as numpy arrays (``{name: array}``).

    Raises:
        ProviderUnavailable: the file is not a readable safetensors file (the message
            names it and the reason).
    """
    import numpy as np

    try:
        data = path.read_bytes()
        (n,) = struct.unpack("<Q", data[:8])
        header = json.loads(data[8 : 8 + n])
        out: dict[str, Any] = {}
        for name, meta in header.items():
            if name == "__metadata__":
                continue
            start, end = meta["data_offsets"]
            dt = np.dtype(_DTYPES[meta["dtype"]])
            arr = np.frombuffer(
                data, dtype=dt, count=(end - start) // dt.itemsize, offset=8 + n + start
            )
            out[name] = arr.reshape(meta["shape"])
        return out
    except (OSError, ValueError, KeyError, TypeError, struct.error) as exc:
        raise ProviderUnavailable(f"{path}: not a readable safetensors file: {exc}") from exc


def write_safetensors(path: Path, arrays: dict[str, Any]) -> None:
    """Write numpy arrays as a ``.safetensors`` file (the inverse of
    :func:`read_safetensors`; little-endian, C order, offsets in the JSON header)."""
    import numpy as np

    names = {np.dtype(v).name: k for k, v in _DTYPES.items()}
    header: dict[str, Any] = {}
    blobs: list[bytes] = []
    offset = 0
    for name, arr in arrays.items():
        a = np.ascontiguousarray(arr)
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        raw = a.tobytes()
        header[name] = {
            "dtype": names[a.dtype.name],
            "shape": list(a.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    path.write_bytes(struct.pack("<Q", len(head)) + head + b"".join(blobs))


def save_static(
    folder: Path,
    vectors: Any,
    tokenizer_json: Path,
    *,
    quantize: str = "float16",
    config: dict[str, Any] | None = None,
) -> Path:
    """Save a token table as a model2vec-format folder that :class:`StaticEmbedder` and
    model2vec's ``StaticModel`` load.

    Args:
        folder: created if missing; ``model.safetensors``, ``tokenizer.json`` and
            ``config.json`` are (over)written.
        vectors: ``float[V, d]``, one row per token of the tokenizer.
        tokenizer_json: the tokenizer to copy (the one the table was trained with).
        quantize: ``float32``, ``float16``, or ``int8`` (rows scaled to ±127, the
            scales kept as model2vec's per-token ``weights``).
        config: extra ``config.json`` entries (model name, method, …).

    Raises:
        ValueError: an unknown ``quantize``.
    """
    import shutil

    import numpy as np

    x = np.asarray(vectors, dtype=np.float32)
    arrays: dict[str, Any]
    if quantize == "int8":
        scale = np.abs(x).max(axis=1) / 127.0
        scale[scale == 0] = 1.0
        arrays = {
            "embeddings": np.clip(np.rint(x / scale[:, None]), -127, 127).astype(np.int8),
            "weights": scale.astype(np.float32),
        }
    elif quantize in ("float16", "float32"):
        arrays = {"embeddings": x.astype(quantize)}
    else:
        raise ValueError(f"quantize must be float32, float16 or int8, not {quantize!r}")
    folder.mkdir(parents=True, exist_ok=True)
    write_safetensors(folder / "model.safetensors", arrays)
    shutil.copyfile(tokenizer_json, folder / "tokenizer.json")
    cfg = {
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "hidden_dim": int(x.shape[1]),
        "embedding_dtype": quantize,
        "max_length": 512,
        "normalize": True,
        "pooling": "mean",
        **(config or {}),
    }
    (folder / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    return folder


class StaticEmbedder:
    """Embeds with a static (model2vec-format) model.

    Args:
        locator: where to look for the model (default: package data, then cache).
        spec: which model folder to load.
        folder: load this folder instead of locating ``spec``.

    Raises:
        ProviderUnavailable: ``tokenizers`` is missing, or the model is missing or
            unreadable.
    """

    def __init__(
        self,
        locator: ModelLocator | None = None,
        spec: ModelSpec = STATIC_SPEC,
        *,
        folder: Path | None = None,
    ) -> None:
        require("tokenizers", None)
        if folder is not None and not (folder / "model.safetensors").is_file():
            raise ProviderUnavailable(
                f"static model folder {folder}: no model.safetensors there (make one with "
                "bench/train_static.py, or leave [embed] model unset for the shipped model)"
            )
        if folder is None:
            folder, self.origin = (locator or ModelLocator()).locate(spec)
            label = spec.name
        else:
            self.origin = "folder"
            label = folder.name
        try:
            from tokenizers import Tokenizer

            cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            tensors = read_safetensors(folder / "model.safetensors")
            tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except ProviderUnavailable:
            raise
        except Exception as exc:
            raise ProviderUnavailable(f"cannot load static model from {folder}: {exc}") from exc
        self._setup(tok, tensors, cfg)
        self.fusion = read_fusion(folder)
        self.path = folder
        self.name = f"static:{label}"
        self.fingerprint = "static-" + file_fingerprint(
            *(folder / r for r in STATIC_SPEC.required), extra="model2vec-mean"
        )

    def _setup(self, tok: Any, tensors: dict[str, Any], cfg: dict[str, Any]) -> None:
        import numpy as np

        emb = np.asarray(tensors["embeddings"]).astype(np.float32)
        mapping = tensors.get("mapping")
        table = emb[np.asarray(mapping, dtype=np.int64)] if mapping is not None else emb
        weights = tensors.get("weights")
        if weights is not None:
            table = table * np.asarray(weights, dtype=np.float32)[:, None]
        self._table = np.ascontiguousarray(table, dtype=np.float32)
        tok.no_padding()
        tok.no_truncation()
        self._tok = tok
        unk = tok.token_to_id("[UNK]")
        self._unk = -1 if unk is None else int(unk)
        self.max_length = int(cfg.get("max_length") or 512)
        self.dim = int(self._table.shape[1])

    def token_ids(self, texts: Sequence[str]) -> list[Any]:
        """Per text, its token ids as model2vec reads them: ``int64`` arrays without
        special tokens and ``[UNK]``, at most ``max_length`` long (possibly empty)."""
        import numpy as np

        out = []
        for enc in self._tok.encode_batch_fast(list(texts), add_special_tokens=False):
            ids = np.asarray(enc.ids, dtype=np.int64)
            if self._unk >= 0:
                ids = ids[ids != self._unk]
            out.append(ids[: self.max_length])
        return out

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Unit vectors ``float32[len(texts), dim]`` (see :class:`cairn.embed.Embedder`);
        a text with no known token gets a zero row."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        table = self._table
        for j, ids in enumerate(self.token_ids(texts)):
            if len(ids):
                # one gather and sum per text: faster than a segmented reduction
                out[j] = table[ids].sum(axis=0)
        return l2_normalize(out)
