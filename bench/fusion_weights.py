"""The semantic list's RRF weight (and similarity floor) per embedding model: tuned on
the judged notes set's ``dev`` queries, checked on its ``test`` queries and on SciFact.

    python bench/fusion_weights.py --scifact-db Q.db --notes-db N.db
        [--variant NAME=PROVIDER_OR_FOLDER ...] [--weights 0.4,0.3,0.2,0.1]
        [--floors 0] [--ks 60,20,10,5] [--json F] [--write]

A weak model's list should weigh less in the fusion: with the default keyword 0.6 /
semantic 0.4, the static model's hybrid nDCG@10 is below keyword alone. For each variant
(``onnx``, ``static`` or a static-model folder, as in ``bench/fast_profile.py``) and each
(semantic weight, ``min_similarity``, RRF ``k``) this prints hybrid nDCG@10 on notes ``dev``,
notes ``test`` and SciFact (test queries, never used to choose), beside keyword alone.
The setting chosen is the best on notes ``dev`` (ties to the higher weight); it is what
a model folder's ``fusion.json`` states (``--write`` writes it into each folder
variant; :func:`cairn.embed.base.read_fusion`), and search uses it wherever
``cairn.toml``'s ``[fusion]`` sets nothing.

Both stores are copied to ``--work`` first (as ``bench/fast_profile.py`` does, and the
copies are shared with it); vectors a variant lacks are added to the copies.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, str(Path(__file__).resolve().parent))

import notes_eval
from cairn.config import SearchConfig, load_config
from cairn.embed.base import Embedder
from cairn.evaluation import load_beir, measure, run_queries
from cairn.ingest.embedding import embed_pass
from cairn.search.fusion import FusionConfig
from cairn.search.rank import Ranker
from cairn.store import open_store
from fast_profile import SCIFACT, make

Setting = tuple[float, float, float]
"""``(semantic weight, min_similarity, rrf_k)``."""


def fusion(s: Setting) -> FusionConfig:
    """The default fusion with this semantic weight, similarity floor and RRF k."""
    w, floor, k = s
    return FusionConfig(weights={"keyword": 0.6, "semantic": w}, min_similarity=floor, rrf_k=k)


def notes_ndcg(cairn: Any, queries: dict[str, Any], qrels: dict[str, Any], mode: str) -> float:
    """Mean nDCG@10 over ``queries`` (read as ``bench/notes_eval.py`` reads them)."""
    total = 0.0
    for qid, q in queries.items():
        rels = qrels.get(qid, {})
        res = cairn.search(q["text"], mode=mode, limit=30)
        total += notes_eval.ndcg10(notes_eval.keys_of_hits(res.hits, rels), rels)
    return total / max(1, len(queries))


def notes_grid(
    db: Path, emb: Embedder | None, grid: list[Setting]
) -> dict[Setting, dict[str, float]]:
    """``{setting: {"dev", "test"}}`` hybrid nDCG@10 (keyword alone for ``None``, under
    the key ``(0, 0, 0)``)."""
    from cairn.app import Cairn

    sets = {s: notes_eval.load_set(s) for s in ("dev", "test")}
    empty = db.parent / "empty.toml"
    empty.write_text("", encoding="utf-8")
    cairn = Cairn(load_config(db=str(db), config_file=empty), embedder=emb)
    out: dict[Setting, dict[str, float]] = {}
    try:
        if emb is None:
            out[(0.0, 0.0, 0.0)] = {
                s: notes_ndcg(cairn, q, r, "keyword") for s, (q, r) in sets.items()
            }
            return out
        for g in grid:
            ranker = cairn.semantic.ranker()
            ranker.fusion = fusion(g)
            out[g] = {s: notes_ndcg(cairn, q, r, "hybrid") for s, (q, r) in sets.items()}
            print(f"  notes {g}: {out[g]}", file=sys.stderr, flush=True)
    finally:
        cairn.close()
    return out


def write_fusion(folder: Path, best: dict[str, Any], kw: dict[str, float]) -> None:
    """Write the chosen setting as the model folder's ``fusion.json`` (what
    :func:`cairn.embed.base.read_fusion` reads), with the figures it was chosen on."""
    data: dict[str, Any] = {"weights": {"semantic": best["weight"]}, "rrf_k": best["rrf_k"]}
    if best["floor"]:
        data["min_similarity"] = best["floor"]
    data["tuned"] = {
        "by": "bench/fusion_weights.py: the best hybrid nDCG@10 on bench/notes dev",
        "hybrid_ndcg10": {k: round(best[k], 4) for k in ("dev", "test", "scifact")},
        "keyword_ndcg10": {k: round(v, 4) for k, v in kw.items()},
    }
    (folder / "fusion.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {folder / 'fusion.json'}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the grid for every variant; print the tables."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--scifact-db", type=Path, required=True)
    ap.add_argument("--notes-db", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=SCIFACT)
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--weights", default="0.4,0.3,0.25,0.2,0.15,0.1")
    ap.add_argument("--floors", default="0")
    ap.add_argument("--ks", default="60", help="RRF k values")
    ap.add_argument("--work", type=Path, default=Path("/tmp/cairn-bench-fast"))
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--write",
        action="store_true",
        help="write each folder variant's chosen setting to its fusion.json",
    )
    a = ap.parse_args(argv)
    variants = dict(v.split("=", 1) for v in (a.variant or ["static=static"]))
    grid: list[Setting] = [
        (float(w), float(f), float(k))
        for w in a.weights.split(",")
        for f in a.floors.split(",")
        for k in a.ks.split(",")
    ]
    a.work.mkdir(parents=True, exist_ok=True)
    sdb, ndb = a.work / "scifact.db", a.work / "notes.db"
    for src, dst in ((a.scifact_db, sdb), (a.notes_db, ndb)):
        if not dst.exists():
            shutil.copy(src, dst)
    data = load_beir(a.data)
    sstore = open_store(sdb)
    kw_run, _ = run_queries(Ranker(sstore, SearchConfig(), None), data.queries, "keyword")
    kw = {
        "scifact": measure(kw_run, data.qrels)[0],
        **notes_grid(ndb, None, [])[(0.0, 0.0, 0.0)],
    }
    print(f"keyword alone: {kw}", file=sys.stderr, flush=True)
    result: dict[str, Any] = {"load": os.getloadavg()[0], "keyword": kw, "variants": {}}
    for name, spec in variants.items():
        emb = make(spec)
        embed_pass(sstore, emb)
        nstore = open_store(ndb)
        embed_pass(nstore, emb)
        nstore.close()
        rows = []
        ngrid = notes_grid(ndb, emb, grid)
        for g in grid:
            rk = Ranker(sstore, SearchConfig(), emb, fusion(g))
            run, _ = run_queries(rk, data.queries, "hybrid")
            w, f, k = g
            rows.append(
                {
                    "weight": w,
                    "floor": f,
                    "rrf_k": k,
                    **ngrid[g],
                    "scifact": measure(run, data.qrels)[0],
                }
            )
            print(f"  {name} {rows[-1]}", file=sys.stderr, flush=True)
        best = max(rows, key=lambda r: (round(r["dev"], 4), r["weight"], -r["floor"], r["rrf_k"]))
        result["variants"][name] = {"model": emb.name, "rows": rows, "chosen": best}
        if a.write and Path(spec).is_dir():
            write_fusion(Path(spec), best, kw)
        print(f"\n{name} ({emb.name}); load {os.getloadavg()[0]:.1f}")
        print(
            f"keyword alone: notes dev {kw['dev']:.3f}, test {kw['test']:.3f}; "
            f"SciFact {kw['scifact']:.3f}"
        )
        print("| semantic weight | floor | rrf_k | notes dev | notes test | SciFact |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            mark = " ←" if r is best else ""
            print(
                f"| {r['weight']} | {r['floor']} | {r['rrf_k']:g} | "
                f"{r['dev']:.3f} | {r['test']:.3f} | "
                f"{r['scifact']:.3f}{mark} |"
            )
    sstore.close()
    if a.json:
        result["variants"] = {k: {**v, "rows": v["rows"]} for k, v in result["variants"].items()}
        a.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
