"""Every embedding variant on SciFact and on the judged notes set, in one run.

    python bench/fast_profile.py --scifact-db Q.db --notes-db N.db
        [--variant NAME=PROVIDER_OR_FOLDER ...] [--split all]

For each variant (``onnx`` = the int8 MiniLM, ``static`` = the shipped
vocabulary-averaged model, or any static-model folder such as one made by
``bench/train_static.py``):

- SciFact (``Q.db``, a ``bench/beir.py`` quality store: the 5,183 abstracts indexed,
  test queries never indexed): nDCG@10 of keyword, semantic and hybrid search, with
  the fusion search uses (the model folder's ``fusion.json`` where it has one, else
  cairn's default; ``bench/fusion_weights.py`` compares fusions);
- the judged notes set (``bench/notes``; ``N.db`` an index of ``../shared/corpus``):
  nDCG@10 of the same three modes, read as ``bench/notes_eval.py`` reads them;
- speed: chunks/s inside the model during the embedding step over the notes index's
  chunks (the texts the index pass embeds, in its batches), and the model file's size.

``--train NAME=SAMPLE[:EPOCHS[:DIMS]]`` adds the fast profile as a user gets it: on each
store, ``cairn.training.train`` (``cairn embed --train-static --sample
SAMPLE``) trains a static model on SAMPLE random chunks of that store's own corpus —
SciFact's abstracts for SciFact, the shared corpus for the notes set; never a query —
from the shipped model, and the variant is evaluated with it. Its cost is reported
beside the default model's: the teacher's share (``SAMPLE`` ÷ the int8 MiniLM's chunks/s
on the same machine, measured once over ``--sample`` chunks, so stored teacher vectors
do not flatter it), the training's wall time, and the static embedding of every chunk.

Both stores are copied to ``--work`` first and each variant's vectors are added to the
copies, so the originals stay as they were, and a variant whose vectors are already
stored (the int8 MiniLM's, usually) is not embedded again: its speed is then read from a
sample (``--sample`` chunks). Prints a Markdown table; ``--json`` writes the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, str(Path(__file__).resolve().parent))

import notes_eval
from cairn.config import SearchConfig, load_config
from cairn.embed.base import Embedder
from cairn.embed.registry import EmbedConfig, make_embedder
from cairn.embed.static import StaticEmbedder
from cairn.evaluation import load_beir, measure, run_queries
from cairn.ingest.embedding import embed_pass, unit_prefix
from cairn.search.rank import Ranker
from cairn.store import Store, open_store

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "bench" / "beir" / "scifact"


def make(spec: str) -> Embedder:
    """An embedder from a variant spec: ``onnx``, ``static`` or a static-model folder."""
    if spec == "onnx":
        emb = make_embedder(EmbedConfig(provider="minilm-onnx"))
    elif spec == "static":
        emb = make_embedder(EmbedConfig(provider="static"))
    else:
        emb = StaticEmbedder(folder=Path(spec))
    assert emb is not None
    return emb


def model_bytes(emb: Embedder) -> int:
    """Bytes of the model's weight files."""
    folder = Path(getattr(emb, "path", "."))
    return sum(p.stat().st_size for p in folder.iterdir() if p.suffix in (".onnx", ".safetensors"))


def speed(store: Store, emb: Embedder, sample: int, batch: int = 64) -> float:
    """Chunks/s embedding the first ``sample`` chunk texts of ``store`` (sorted by
    length, ``batch`` per call, as the index pass does)."""
    pending = store.vectors.chunks_missing_vectors("bench-no-such-space")[:sample]
    texts = sorted(
        (unit_prefix(u) + u.body[c.window_start : c.window_end] for c, u in pending), key=len
    )
    emb.embed(texts[:8])
    t0 = time.perf_counter()
    for i in range(0, len(texts), batch):
        emb.embed(texts[i : i + batch])
    return len(texts) / (time.perf_counter() - t0)


def train_on(db: Path, spec: str, out: Path) -> dict[str, Any]:
    """Train the fast profile's model on the store ``db`` (``SAMPLE[:EPOCHS[:DIMS]]``)
    with ``Cairn.training.train``, move it to ``out``; its figures."""
    from cairn.app import Cairn

    parts = [int(x) for x in spec.split(":")]
    sample, epochs, dims = (parts + [12, 256][len(parts) - 1 :])[:3]
    conf = db.parent / "static.toml"
    conf.write_text('[embed]\nprovider = "static"\n', encoding="utf-8")
    cairn = Cairn(load_config(db=str(db), config_file=conf))
    try:
        res = cairn.training.train(sample, epochs=epochs, dims=dims)
    finally:
        cairn.close()
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(res.folder).rename(out)
    return {
        "sample": res.sample,
        "chunks": res.chunks,
        "epochs": res.epochs,
        "train_seconds": res.train_seconds,
        "teacher_embedded_now": res.teacher_embedded,
    }


def scifact(store: Store, emb: Embedder | None, data: Any) -> dict[str, float]:
    """nDCG@10 per mode on SciFact (keyword alone when ``emb`` is None)."""
    modes = ("keyword",) if emb is None else ("semantic", "hybrid")
    rk = Ranker(store, SearchConfig(), emb)
    out = {}
    for m in modes:
        run, _ = run_queries(rk, data.queries, m)
        out[m] = measure(run, data.qrels)[0]
    return out


def notes(db: Path, emb: Embedder | None, split: str) -> dict[str, float]:
    """nDCG@10 per mode on the judged notes set (keyword alone when ``emb`` is None)."""
    from cairn.app import Cairn

    queries, qrels = notes_eval.load_set(split)
    empty = db.parent / "empty.toml"
    empty.write_text("", encoding="utf-8")
    cairn = Cairn(load_config(db=str(db), config_file=empty), embedder=emb)
    modes = ("keyword",) if emb is None else ("semantic", "hybrid")
    out = {}
    try:
        for m in modes:
            total = 0.0
            for qid, q in queries.items():
                rels = qrels.get(qid, {})
                res = cairn.search(q["text"], mode=m, limit=30)
                total += notes_eval.ndcg10(notes_eval.keys_of_hits(res.hits, rels), rels)
            out[m] = total / len(queries)
    finally:
        cairn.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """Run every variant; print the table."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--scifact-db", type=Path, required=True)
    ap.add_argument("--notes-db", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=SCIFACT)
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--work", type=Path, default=Path("/tmp/cairn-bench-fast"))
    ap.add_argument("--split", default="all", choices=("dev", "test", "all"))
    ap.add_argument("--sample", type=int, default=400)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--train",
        action="append",
        default=[],
        metavar="NAME=SAMPLE[:EPOCHS[:DIMS]]",
        help="a fast-profile variant trained on each store's own corpus (repeatable)",
    )
    a = ap.parse_args(argv)
    default = [] if a.train else ["onnx=onnx", "static=static"]
    variants = dict(v.split("=", 1) for v in (a.variant or default))
    trains = dict(v.split("=", 1) for v in a.train)
    a.work.mkdir(parents=True, exist_ok=True)
    sdb, ndb = a.work / "scifact.db", a.work / "notes.db"
    for src, dst in ((a.scifact_db, sdb), (a.notes_db, ndb)):
        if not dst.exists():
            shutil.copy(src, dst)
    data = load_beir(a.data)
    sstore = open_store(sdb)
    rows: list[dict[str, Any]] = []
    kw = {"scifact": scifact(sstore, None, data)["keyword"], "notes": notes(ndb, None, a.split)}
    rows.append(
        {
            "variant": "keyword",
            "scifact_keyword": kw["scifact"],
            "notes_keyword": kw["notes"]["keyword"],
        }
    )
    print(f"keyword: {rows[-1]}", file=sys.stderr, flush=True)
    for name, spec in variants.items():
        emb = make(spec)
        rep_s = embed_pass(sstore, emb)
        nstore = open_store(ndb)
        rep_n = embed_pass(nstore, emb)
        if rep_n.embedded >= 1000 and rep_n.embed_seconds:
            cps = rep_n.embedded / rep_n.embed_seconds
        else:
            cps = speed(nstore, emb, a.sample)
        nstore.close()
        sq = scifact(sstore, emb, data)
        nq = notes(ndb, emb, a.split)
        rows.append(
            {
                "variant": name,
                "model": emb.name,
                "dim": emb.dim,
                "model_bytes": model_bytes(emb),
                "chunks_per_s": cps,
                "scifact_semantic": sq["semantic"],
                "scifact_hybrid": sq["hybrid"],
                "notes_semantic": nq["semantic"],
                "notes_hybrid": nq["hybrid"],
                "embedded_now": rep_s.embedded + rep_n.embedded,
            }
        )
        print(f"{name}: {rows[-1]}", file=sys.stderr, flush=True)
    teacher_cps = 0.0
    if trains:
        nstore = open_store(ndb)
        teacher_cps = speed(nstore, make("onnx"), a.sample)
        nstore.close()
        print(f"teacher: {teacher_cps:.1f} chunks/s", file=sys.stderr, flush=True)
    for name, spec in trains.items():
        sstore.close()
        fits = {
            "scifact": train_on(sdb, spec, a.work / "models" / f"{name}-scifact"),
            "notes": train_on(ndb, spec, a.work / "models" / f"{name}-notes"),
        }
        sstore = open_store(sdb)
        row: dict[str, Any] = {"variant": name, "train": spec, "fits": fits}
        for which, db in (("scifact", sdb), ("notes", ndb)):
            emb = make(str(a.work / "models" / f"{name}-{which}"))
            st = sstore if which == "scifact" else open_store(db)
            rep = embed_pass(st, emb)
            if which == "notes":
                row["chunks_per_s"] = (
                    rep.embedded / rep.embed_seconds
                    if rep.embedded >= 1000 and rep.embed_seconds
                    else speed(st, emb, a.sample)
                )
                row["notes_embed_seconds"] = rep.embed_seconds
                st.close()
                q = notes(db, emb, a.split)
            else:
                row["scifact_embed_seconds"] = rep.embed_seconds
                q = scifact(st, emb, data)
            row[f"{which}_semantic"], row[f"{which}_hybrid"] = q["semantic"], q["hybrid"]
            fit = fits[which]
            row[f"{which}_cost_seconds"] = (
                fit["sample"] / teacher_cps + fit["train_seconds"] + rep.embed_seconds
            )
            row[f"{which}_default_seconds"] = fit["chunks"] / teacher_cps
            row.update(model=emb.name, dim=emb.dim, model_bytes=model_bytes(emb))
        rows.append(row)
        print(f"{name}: {rows[-1]}", file=sys.stderr, flush=True)
    sstore.close()
    load = os.getloadavg()[0]
    print(
        f"\nload average {load:.1f}; SciFact keyword {kw['scifact']:.3f}, notes keyword "
        f"{kw['notes']['keyword']:.3f} (nDCG@10, split {a.split})\n"
    )
    print(
        "| variant | dim | MB | chunks/s | SciFact sem | SciFact hybrid | notes sem "
        "| notes hybrid |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows[1:]:
        print(
            f"| {r['variant']} | {r['dim']} | {r['model_bytes'] / 1e6:.1f} | "
            f"{r['chunks_per_s']:.0f} | {r['scifact_semantic']:.3f} | {r['scifact_hybrid']:.3f} |"
            f" {r['notes_semantic']:.3f} | {r['notes_hybrid']:.3f} |"
        )
    if trains:
        print(
            f"\nfast profile trained on each store's own corpus; teacher {teacher_cps:.1f} "
            "chunks/s (cost = sample ÷ teacher + training + static embedding of all chunks; "
            "default = all chunks ÷ teacher)\n"
        )
        print(
            "| variant | sample:epochs:dims | SciFact cost s (default s) | notes cost s "
            "(default s) |"
        )
        print("|---|---|---|---|")
        for r in rows[1:]:
            if "train" in r:
                print(
                    f"| {r['variant']} | {r['train']} | {r['scifact_cost_seconds']:.0f} "
                    f"({r['scifact_default_seconds']:.0f}) | {r['notes_cost_seconds']:.0f} "
                    f"({r['notes_default_seconds']:.0f}) |"
                )
    if a.json:
        a.json.write_text(json.dumps({"load": load, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
