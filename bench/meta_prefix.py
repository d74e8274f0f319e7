"""Does metadata in the embedded text help? An experiment on a copy of an index.

Each chunk is embedded as ``prefix + window``; the prefix today is the document title,
outline path and tags (:func:`cairn.ingest.embedding.unit_prefix`). This script
re-chunks and re-embeds a *copy* of an index with another prefix and runs
``bench/notes_eval.py`` on it, so variants are compared on the same units:

* ``outline`` — today's prefix (vectors already in the copy's space are reused);
* ``none`` — no prefix, the window alone;
* ``meta`` — today's prefix plus the unit's ``meta`` FTS text (frontmatter keys and
  values, Org properties, TODO keyword, priority, tags; at most ``--meta-chars``);
* ``meta-only`` — title line kept, and the ``meta`` text instead of the tags.

Usage::

    CAIRN_EMBED=static python bench/meta_prefix.py --db /tmp/q/st.db --work /tmp/mp \\
        --variants outline,none,meta

The source index is never written; each variant gets ``WORK/<variant>.db``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _meta_lookup(db: Path) -> dict[str, str]:
    """unit id -> its ``meta`` FTS text (only units that have one)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT u.id, t.meta FROM units u JOIN units_fts_text t ON t.rowid = u.rowid "
            "WHERE t.meta IS NOT NULL AND t.meta != ''"
        ).fetchall()
    finally:
        con.close()
    return {str(a): str(b) for a, b in rows}


def make_variant(src: Path, dst: Path, variant: str, meta_chars: int) -> dict[str, float]:
    """Copy ``src`` to ``dst`` and re-chunk and re-embed it with the variant's prefix."""
    import cairn.ingest.embedding as emb_mod
    from cairn.app import Cairn
    from cairn.config import load_config
    from cairn.ingest.chunking import metadata_prefix

    for suffix in ("", "-wal", "-shm"):
        if Path(str(src) + suffix).exists():
            shutil.copyfile(str(src) + suffix, str(dst) + suffix)
    meta = _meta_lookup(dst)
    original = emb_mod.unit_prefix

    def prefix(unit: object) -> str:
        u = unit  # a ChunkSource
        base = original(u)  # type: ignore[arg-type]
        if variant == "outline":
            return base
        if variant == "none":
            return ""
        text = " ".join(meta.get(u.unit_id, "").split())[:meta_chars]  # type: ignore[attr-defined]
        if variant == "meta-only":
            outline = u.outline_path  # type: ignore[attr-defined]
            base = metadata_prefix(u.doc_title, outline, ())  # type: ignore[attr-defined]
        return base + (text + "\n" if text else "")

    emb_mod.unit_prefix = prefix  # type: ignore[assignment]
    t0 = time.perf_counter()
    try:
        c = Cairn(load_config(db=str(dst)))
        try:
            with c.store.transaction():
                c.store.vectors.reset_chunks("meta-prefix-" + variant)
            emb_mod.embed_pass(c.store, c.semantic.embedder)
        finally:
            c.close()
    finally:
        emb_mod.unit_prefix = original
    return {"seconds": time.perf_counter() - t0, "units_with_meta": float(len(meta))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", type=Path, required=True, help="an index of ../shared/corpus")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--variants", default="outline,none,meta")
    ap.add_argument("--meta-chars", type=int, default=240)
    ap.add_argument("--modes", default="semantic,hybrid")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    out: dict[str, object] = {}
    for v in [x for x in args.variants.split(",") if x]:
        dst = args.work / f"{v}.db"
        info = make_variant(args.db.resolve(), dst, v, args.meta_chars)
        print(f"{v}: built in {info['seconds']:.0f}s", file=sys.stderr, flush=True)
        figures = {}
        for split in ("dev", "test", "all"):
            res = subprocess.run(
                [sys.executable, str(HERE / "notes_eval.py"), "--db", str(dst), "--split",
                 split, "--modes", args.modes, "--json"],
                capture_output=True, text=True, env=dict(os.environ), check=True)
            figures[split] = json.loads(res.stdout)["table"]
        out[v] = {"build": info, "figures": figures}
        for split in ("dev", "test", "all"):
            cells = ", ".join(f"{m} {figures[split][m]['all']['ndcg10']:.3f}"
                              for m in args.modes.split(","))
            print(f"  {v:10} {split:5} nDCG@10: {cells}", flush=True)
    (args.work / "results.json").write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
