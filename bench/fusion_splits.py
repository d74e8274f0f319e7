"""Hybrid fusion settings side by side on the dev and test splits of the judged notes
and of SciFact, beside keyword, semantic and the plain FTS5 file baseline, in one run.

    HF_HUB_OFFLINE=1 python bench/fusion_splits.py --notes-db /tmp/n.db --scifact-db /tmp/s.db
        [--set ../w7/bench/notes] [--variants '{"name": {"rrf_k": 60, ...}}']
        [--split dev|test|both]

Each variant replaces fields of the ranker's :class:`cairn.search.fusion.FusionConfig`
(default: the fusion before, RRF k 60 with keyword 0.6 / semantic 0.4, and the current
default). Notes: nDCG@10 per query kind on ``dev`` and ``test`` (ids up to ``n64`` are
the first set, later ones the second), read as ``bench/notes_eval.py`` reads them; the
index in ``--notes-db`` is built from ``../shared/corpus`` when missing. SciFact: its
300 test queries split by query id parity (odd: ``dev``, even: ``test``), nDCG@10; the
store in ``--scifact-db`` must already be indexed and embedded (``bench/beir.py`` builds
one as ``DIR/quality.db``). Tune on ``dev`` only (``--split dev`` runs only it; ``all``
of SciFact is given when both splits run).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import notes_eval as ne
from cairn.config import SearchConfig
from cairn.embed.registry import EmbedConfig, make_embedder
from cairn.evaluation import load_beir, measure, run_queries
from cairn.search.rank import Ranker
from cairn.store import open_store

BEFORE = {"rrf_k": 60.0, "weights": {"keyword": 0.6, "semantic": 0.4}}
SCIFACT = ne.HERE.parent.parent / "shared" / "bench" / "beir" / "scifact"


def per_kind(runs: dict[str, list[str]], queries: dict[str, dict[str, str]],
             qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    """Mean nDCG@10 per query kind (and ``all``) of ``queries``."""
    kinds = sorted({q["kind"] for q in queries.values()})
    out: dict[str, float] = {}
    for kind in (*kinds, "all"):
        ids = [i for i in queries if kind in ("all", queries[i]["kind"])]
        if ids:
            out[kind] = round(sum(ne.ndcg10(runs[i], qrels.get(i, {})) for i in ids) / len(ids), 3)
    return out


def notes(db: Path, folder: Path, variants: dict[str, dict[str, Any]],
          splits: tuple[str, ...] = ("dev", "test")) -> dict[str, Any]:
    """nDCG@10 per kind of each mode and variant on the notes' ``splits``."""
    cairn, _ = ne.open_index(db, ne.CORPUS)
    ranker = cairn.semantic.ranker()
    default = ranker.fusion
    base = ne.FileBaseline(ne.CORPUS)
    out: dict[str, Any] = {}
    try:
        for split in splits:
            queries, qrels = ne.load_set(split, folder)

            def ask(mode: str, qs: dict[str, dict[str, str]] = queries,
                    qr: dict[str, dict[str, int]] = qrels) -> dict[str, list[str]]:
                return {i: ne.keys_of_hits(cairn.search(q["text"], mode=mode, limit=30).hits,
                                           qr.get(i, {})) for i, q in qs.items()}

            runs = {"baseline": {i: ne.keys_of_files(base.search(q["text"], 20), qrels.get(i, {}))
                                 for i, q in queries.items()},
                    "keyword": ask("keyword"), "semantic": ask("semantic")}
            for name, fields in variants.items():
                ranker.fusion = replace(default, **fields)
                runs[name] = ask("hybrid")
            ranker.fusion = default
            for mode, run in runs.items():
                out[f"notes {split}|{mode}"] = per_kind(run, queries, qrels)
                for part, first in (("first set", True), ("second set", False)):
                    sub = {i: q for i, q in queries.items() if (int(i[1:]) <= 64) == first}
                    if sub:
                        out[f"notes {split} {part}|{mode}"] = per_kind(run, sub, qrels)
    finally:
        cairn.close()
    return out


def scifact(db: Path, variants: dict[str, dict[str, Any]],
            splits: tuple[str, ...] = ("dev", "test")) -> dict[str, Any]:
    """SciFact nDCG@10 of each mode and variant on the parity split (``splits`` of it)
    and on the queries of those splits together (``all`` when both)."""
    data = load_beir(SCIFACT)
    store = open_store(db)
    out: dict[str, Any] = {}
    try:
        embedder = make_embedder(EmbedConfig())
        keyword = Ranker(store, SearchConfig(), None)
        ranker = Ranker(store, SearchConfig(), embedder)
        default = ranker.fusion
        whole: dict[str, dict[str, dict[str, float]]] = {}
        for split, parity in (("dev", 1), ("test", 0)):
            if split not in splits:
                continue
            qs = {q: t for q, t in data.queries.items() if int(q) % 2 == parity}
            qr = {q: r for q, r in data.qrels.items() if q in qs}
            runs = {"keyword": run_queries(keyword, qs, "keyword")[0],
                    "semantic": run_queries(ranker, qs, "semantic")[0]}
            for name, fields in variants.items():
                ranker.fusion = replace(default, **fields)
                runs[name] = run_queries(ranker, qs, "hybrid")[0]
            ranker.fusion = default
            for name, run in runs.items():
                whole.setdefault(name, {}).update(run)
                out[f"scifact {split}|{name}"] = round(measure(run, qr)[0], 4)
        if len(splits) == 2:
            for name, run in whole.items():
                out[f"scifact all|{name}"] = round(measure(run, data.qrels)[0], 4)
    finally:
        store.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """Run both sets; prints one line per (set, split, mode) and optionally JSON."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--notes-db", type=Path, required=True)
    ap.add_argument("--scifact-db", type=Path, default=None)
    ap.add_argument("--set", type=Path, default=ne.SET, dest="judged")
    ap.add_argument("--variants", default=None, help="JSON: name -> FusionConfig fields")
    ap.add_argument("--split", choices=("dev", "test", "both"), default="both",
                    help="the splits measured (tune on dev; run test once)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    variants = (json.loads(a.variants) if a.variants
                else {"before (RRF k 60, 0.6/0.4)": BEFORE, "default": {}})
    splits = ("dev", "test") if a.split == "both" else (a.split,)
    out = notes(a.notes_db, a.judged, variants, splits)
    if a.scifact_db is not None:
        out.update(scifact(a.scifact_db, variants, splits))
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        for key, value in out.items():
            print(key, value)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
