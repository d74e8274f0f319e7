"""Train the fast profile's static model on corpus texts the int8 MiniLM embedded.

    python bench/train_static.py --index A.db [--index B.db …] --out FOLDER
        [--base FOLDER] [--dims 256] [--quantize int8] [--epochs 12] [--embed-missing]

tokenlearn's method (Minish Lab; :mod:`cairn.embed.train` does the training in numpy):
every live chunk of each index — its embedded text, metadata prefix + window, exactly
as the index pass embeds it — is a training text, and its vector in the int8 MiniLM's
space (``onnx8-…``, already in the index when it was built with the default model) is
the target. The token table starts from ``--base`` (default: the shipped
``minilm-l6-static``, itself trained this way from the vocabulary-averaged model
``bench/distill_static.py`` makes; see its README.md), is trained so a text's mean predicts its
teacher vector, reduced by PCA to ``--dims`` and saved in model2vec's format
(``--quantize int8``: 8-bit rows with a per-row scale).

Only corpus texts are read: never a benchmark's queries (SciFact's test queries are not
in any index; ``bench/beir.py`` indexes the corpus alone). ``--embed-missing`` embeds
chunks that have no teacher vector yet with the int8 MiniLM first (slow: ~25 chunks/s
on 2 cores). Prints per-epoch losses, the time, and the files written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from cairn.embed.onnx import OnnxEmbedder
from cairn.embed.static import StaticEmbedder
from cairn.embed.train import TrainConfig, fit_static
from cairn.ingest.embedding import embed_pass, unit_prefix
from cairn.store import open_store

SHIPPED = Path(__file__).resolve().parents[1] / "src" / "cairn" / "data" / "models"


def units_under(db: Path, prefixes: list[str]) -> set[str] | None:
    """Ids of the units in documents whose root-relative path starts with one of
    ``prefixes`` (``None``: no restriction)."""
    if not prefixes:
        return None
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT u.id, d.path FROM units u JOIN documents d ON d.id = u.document_id"
        )
        return {uid for uid, path in rows if any(path.startswith(p) for p in prefixes)}
    finally:
        con.close()


def teacher_pairs(
    db: Path, teacher: OnnxEmbedder, embed_missing: bool, only: list[str] | None = None
) -> tuple[list[str], Any]:
    """``(texts, float32[n, 384] teacher vectors)`` of every live chunk of index ``db``
    that has a vector in the teacher's space (distinct texts once), only in documents
    under the path prefixes ``only`` when given."""
    import numpy as np

    allowed = units_under(db, only or [])

    store = open_store(db)
    try:
        if embed_missing:
            embed_pass(store, teacher)
        space = teacher.fingerprint
        texts: list[str] = []
        vecs: list[Any] = []
        seen: set[str] = set()
        for chunk, unit in store.vectors.chunks_missing_vectors("bench-no-such-space"):
            if chunk.hash in seen or (allowed is not None and unit.unit_id not in allowed):
                continue
            v = store.vectors.vector(space, chunk.hash)
            if v is None:
                continue
            seen.add(chunk.hash)
            texts.append(unit_prefix(unit) + unit.body[chunk.window_start : chunk.window_end])
            vecs.append(np.asarray(v, dtype=np.float32))
    finally:
        store.close()
    return texts, np.stack(vecs) if vecs else np.zeros((0, teacher.dim), np.float32)


def main(argv: list[str] | None = None) -> int:
    """Gather, train, reduce, save (see the module docstring)."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--index", type=Path, action="append", required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--base", type=Path, default=SHIPPED / "minilm-l6-static")
    ap.add_argument("--dims", type=int, default=256)
    ap.add_argument("--quantize", default="int8", choices=("float32", "float16", "int8"))
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--embed-missing", action="store_true")
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        help="train only on documents under this root-relative path prefix (repeatable)",
    )
    a = ap.parse_args(argv)
    import numpy as np

    t0 = time.perf_counter()
    teacher = OnnxEmbedder()
    base = StaticEmbedder(folder=a.base)
    texts: list[str] = []
    targets: list[Any] = []
    for db in a.index:
        tx, ys = teacher_pairs(db, teacher, a.embed_missing, a.only)
        print(f"{db}: {len(tx)} texts with teacher vectors", file=sys.stderr)
        texts += tx
        targets.append(ys)
    y = np.concatenate(targets)
    print(f"{len(texts)} texts; training", file=sys.stderr)

    def progress(epoch: int, train: float, val: float) -> None:
        print(
            f"epoch {epoch}: train {train:.6f} val {val:.6f} ({time.perf_counter() - t0:.0f} s)",
            file=sys.stderr,
            flush=True,
        )

    cfg = TrainConfig(epochs=a.epochs, lr=a.lr, batch_size=a.batch_size)
    fit = fit_static(
        texts,
        y,
        base,
        a.out,
        dims=a.dims,
        quantize=a.quantize,
        config=cfg,
        progress=progress,
        meta={
            "teacher": "onnx:all-MiniLM-L6-v2-int8",
            "base": a.base.name,
            "indexes": [p.name for p in a.index],
            "only": a.only,
        },
    )
    epochs, val_loss = fit.epochs, fit.val_loss
    print(
        json.dumps(
            {
                "out": str(a.out),
                "seconds": round(time.perf_counter() - t0, 1),
                "epochs": epochs,
                "val_loss": val_loss,
            }
        )
    )
    for p in sorted(a.out.iterdir()):
        print(f"{p.name}\t{p.stat().st_size}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
