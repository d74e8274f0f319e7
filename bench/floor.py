"""Calibrate ``[fusion] min_similarity`` (the semantic floor) from score distributions.

    python bench/floor.py --notes-db FILE [--beir-db /tmp/cairn-bench-beir/quality.db]

For each index given, with the default embedder (``auto``: the int8 ONNX MiniLM):

* the cosine of every *judged relevant* unit the semantic list finds in its top 100
  (the notes set ``bench/notes/``, all splits; SciFact's test queries), and
* the best cosine of each of 40 nonsense queries (random letter strings, seeded, such
  as ``xyzzyplugh``): what a query that means nothing gets,

and prints their percentiles and, for candidate floors, the share of relevant hits a
floor would drop and the share of nonsense queries it would leave with no semantic
hit at all. A floor is worth setting only where it drops (almost) no relevant hit.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import string
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CANDIDATES = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)


def nonsense(n: int = 40, seed: int = 15) -> list[str]:
    """``n`` random lower-case strings of 7–12 letters, the first ``xyzzyplugh``."""
    rnd = random.Random(seed)
    out = ["xyzzyplugh"]
    while len(out) < n:
        out.append("".join(rnd.choice(string.ascii_lowercase) for _ in range(rnd.randint(7, 12))))
    return out


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile (``nan`` for no values)."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))]


def semantic(rk: Any, text: str) -> list[tuple[str, float]]:
    """``[(unit id, cosine)]`` of the semantic list's top 100 (``rk`` has no floor)."""
    ranking = rk.rank(text, mode="semantic", limit=100)
    return [(f.key, float(f.raw.get("cosine", f.score))) for f in ranking.fused]


def notes_scores(db: Path) -> tuple[list[float], list[float]]:
    """(relevant cosines, nonsense top-1 cosines) over the notes set."""
    from cairn.app import Cairn
    from cairn.config import load_config
    from notes_eval import keys_of_hits, load_set

    queries, qrels = load_set("all")
    rel: list[float] = []
    from cairn.search.fusion import FusionConfig
    from cairn.search.rank import Ranker

    with Cairn(load_config(db=str(db)), create=False) as cairn:
        rk = Ranker(
            cairn.store, cairn.config.search, cairn.semantic.embedder,
            FusionConfig(min_similarity=-1.0),
        )
        for qid, q in queries.items():
            rels = qrels.get(qid, {})
            found = semantic(rk, q["text"])
            units = cairn.store.hit_units([u for u, _ in found])
            seen: set[str] = set()
            for u, cos in found:
                hu = units.get(u)
                if hu is None:
                    continue

                hit = SimpleNamespace(path=hu.path, title=hu.title, outline_path=hu.outline_path)
                for key in keys_of_hits([hit], rels):
                    if rels.get(key, 0) > 0 and key not in seen:
                        seen.add(key)
                        rel.append(cos)
                        break
        bad = [max((c for _, c in semantic(rk, t)), default=0.0) for t in nonsense()]
    return rel, bad


def beir_scores(db: Path, data: Path) -> tuple[list[float], list[float]]:
    """(relevant cosines, nonsense top-1 cosines) over SciFact's test queries."""
    from cairn.config import SearchConfig
    from cairn.embed.registry import EmbedConfig, make_embedder
    from cairn.evaluation import load_beir
    from cairn.search.rank import Ranker
    from cairn.store import open_store

    beir = load_beir(data)
    store = open_store(db)
    emb = make_embedder(EmbedConfig(provider="minilm-onnx"))
    from cairn.search.fusion import FusionConfig

    rk = Ranker(store, SearchConfig(), emb, FusionConfig(min_similarity=-1.0))
    rel: list[float] = []
    for qid, text in beir.queries.items():
        rels = beir.qrels.get(qid, {})
        for f in rk.rank(text, mode="semantic", limit=100).fused:
            if rels.get(f.key, 0) > 0:
                rel.append(float(f.raw["cosine"]))
    bad = [
        max((float(f.raw["cosine"]) for f in rk.rank(t, mode="semantic", limit=5).fused),
            default=0.0)
        for t in nonsense()
    ]
    store.close()
    return rel, bad


def report(name: str, rel: list[float], bad: list[float]) -> dict[str, Any]:
    """Print and return one index's distributions and the candidate floors."""
    print(f"\n### {name}: {len(rel)} relevant hits, {len(bad)} nonsense queries\n")
    print("| percentile | relevant cosine | nonsense top-1 cosine |")
    print("|---|---|---|")
    for p in (1, 5, 10, 25, 50, 75, 90, 99):
        print(f"| {p} | {pct(rel, p):.3f} | {pct(bad, p):.3f} |")
    print("\n| floor | relevant hits dropped | nonsense queries left with no hit |")
    print("|---|---|---|")
    rows = []
    for f in CANDIDATES:
        drop = sum(1 for c in rel if c < f) / max(1, len(rel))
        empty = sum(1 for c in bad if c < f) / max(1, len(bad))
        rows.append({"floor": f, "relevant_dropped": drop, "nonsense_empty": empty})
        print(f"| {f:.2f} | {drop:.1%} | {empty:.1%} |")
    return {"relevant": rel, "nonsense": bad, "floors": rows}


def main(argv: list[str] | None = None) -> int:
    """Measure the indexes given; ``--json`` writes every value to a file too."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--notes-db", type=Path, default=None)
    ap.add_argument("--beir-db", type=Path, default=None)
    ap.add_argument(
        "--beir-data", type=Path,
        default=HERE.parent.parent / "shared" / "bench" / "beir" / "scifact",
    )
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    out: dict[str, Any] = {}
    if a.notes_db:
        out["notes"] = report("notes (bench/notes, all splits)", *notes_scores(a.notes_db))
    if a.beir_db:
        out["scifact"] = report("SciFact test", *beir_scores(a.beir_db, a.beir_data))
    if a.json:
        a.json.write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
