"""Our own judged set over real notes: nDCG@10, Recall@10 and MRR@10 per query kind and
per search mode, beside a plain file-level FTS5 BM25 baseline run in the same script.

The set lives in ``bench/notes/`` in BEIR layout: ``queries.jsonl`` (``{"_id", "text",
"kind", "split"}``; kinds ``keyword``, ``paraphrase``, ``heading``, ``structured``,
``multihop``, ``okf``, ``chat``) and ``qrels/<split>.tsv`` (``query-id corpus-id score``,
graded 1–2). The corpus is ``../shared/corpus`` itself: a doc id is a file's path
relative to it, ``path#Heading`` where the judgment is about one heading (unit anchor).
The queries were written by reading the files. ``structured`` asks in plain words for
what a filter would name (a TODO state, a tag, a property's value, a month, a type);
``multihop`` names one note's topic while the answer is in a note it links to. ``dev``
is the split ranking changes may be tuned on; ``test`` is held back. n01–n64: every
third query (n01, n04, …); n65–n118, written later by someone who had not seen the
ranking code: within each kind, in file order, the 1st, 4th, 7th … query.

How a ranked list is read: a cairn hit in a unit whose title or outline names a judged
anchor of its file counts as ``path#anchor`` and then ``path``; any other hit as
``path``; repeats are dropped. The baseline ranks whole files (every ``.md``, ``.org``
and ``.json`` file, raw text, FTS5 ``porter unicode61``, the query's words OR-ed), and a
file it returns counts as each judged anchor inside it and then itself — generous to
the baseline.

Usage::

    python bench/notes_eval.py                 # index ../shared/corpus into a temp store
    python bench/notes_eval.py --db /tmp/n.db  # reuse (or build) this index
    python bench/notes_eval.py --split test --modes keyword,hybrid --json
    python bench/notes_eval.py --db /tmp/n.db --drop markdown/kepano-obsidian/Templates/
    python bench/notes_eval.py --db /tmp/n.db --ids n65-n118 --split test

``--drop PREFIX`` leaves out hits (and baseline files) whose path starts with it, as if
that folder were not indexed (how skipping a vault's template folders would score).
``--ids`` keeps only the queries named (``n65-n118``, ``n01-n64,n70``); ``--json`` also
prints each query's nDCG@10 per mode.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SET = HERE / "notes"
CORPUS = HERE.parent.parent / "shared" / "corpus"
KINDS = ("keyword", "paraphrase", "heading", "structured", "multihop", "okf", "chat")
_FIELD = re.compile(r"^-?[a-z]+:(?:[a-z_]+=)?")


def load_set(split: str, folder: Path = SET
             ) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, int]]]:
    """``(queries {id: {"text", "kind", "split"}}, qrels {id: {doc id: grade}})`` of a
    split (``dev``, ``test`` or ``all``) of the judged set in ``folder``."""
    queries: dict[str, dict[str, str]] = {}
    for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            if split in ("all", q["split"]):
                queries[q["_id"]] = q
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for name in ("dev", "test"):
        if split not in ("all", name):
            continue
        with (folder / "qrels" / f"{name}.tsv").open(encoding="utf-8") as fh:
            rows = list(csv.reader(fh, delimiter="\t"))[1:]
        for qid, doc, grade in rows:
            qrels[qid][doc] = int(grade)
    return queries, dict(qrels)


def in_ids(qid: str, spec: str) -> bool:
    """Whether ``qid`` is named by ``spec``: comma-separated ids or ranges ``n65-n118``
    (a range compares the number after the ids' shared letters)."""
    def num(x: str) -> tuple[str, int]:
        m = re.fullmatch(r"(\D*)(\d+)", x.strip())
        if not m:
            raise ValueError(f"not a query id: {x!r}")
        return m.group(1), int(m.group(2))

    q = num(qid)
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        a, b = num(lo), num(hi or lo)
        if a[0] == q[0] == b[0] and a[1] <= q[1] <= b[1]:
            return True
    return False


def ndcg10(ranked: Sequence[str], rels: Mapping[str, int]) -> float:
    """nDCG@10 with graded gains and discount ``1/log2(rank+1)``."""
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(rels.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall10(ranked: Sequence[str], rels: Mapping[str, int]) -> float:
    """Judged documents found in the top 10 over all judged ones."""
    rel = {d for d, g in rels.items() if g > 0}
    return len(rel & set(ranked[:10])) / len(rel) if rel else 0.0


def mrr10(ranked: Sequence[str], rels: Mapping[str, int]) -> float:
    """``1/rank`` of the first judged document in the top 10 (0 if none)."""
    for i, d in enumerate(ranked[:10]):
        if rels.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def _anchors(rels: Mapping[str, int]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for d in sorted(rels, key=lambda d: -rels[d]):
        path, _, anchor = d.partition("#")
        if anchor:
            out[path].append(anchor)
    return out


def keys_of_hits(hits: Sequence[Any], rels: Mapping[str, int]) -> list[str]:
    """A cairn hit list as judged doc ids (see the module docstring)."""
    anchors = _anchors(rels)
    out: list[str] = []
    for h in hits:
        names = {h.title, *h.outline_path}
        for a in anchors.get(h.path, []):
            if a in names:
                out.append(f"{h.path}#{a}")
                break
        out.append(h.path)
    return list(dict.fromkeys(out))


def keys_of_files(files: Sequence[str], rels: Mapping[str, int]) -> list[str]:
    """A file list as judged doc ids: each file's judged anchors, then the file."""
    anchors = _anchors(rels)
    out: list[str] = []
    for f in files:
        out.extend(f"{f}#{a}" for a in anchors.get(f, []))
        out.append(f)
    return list(dict.fromkeys(out))


class FileBaseline:
    """Plain file-level BM25: one FTS5 row per whole file (raw text)."""

    def __init__(self, corpus: Path) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            "CREATE VIRTUAL TABLE f USING fts5(path UNINDEXED, body, "
            "tokenize='porter unicode61 remove_diacritics 2')"
        )
        rows = []
        for p in sorted(corpus.rglob("*")):
            if p.is_file() and p.suffix.lower() in (".md", ".org", ".json"):
                text = p.read_bytes().decode("utf-8", "replace")
                rows.append((p.relative_to(corpus).as_posix(), text))
        self.db.executemany("INSERT INTO f(path, body) VALUES (?, ?)", rows)
        self.files = len(rows)

    def search(self, text: str, limit: int = 10) -> list[str]:
        """Paths of the best files for the query's words (operators' prefixes dropped)."""
        words: list[str] = []
        for tok in text.split():
            tok = _FIELD.sub("", tok)
            words.extend(w for w in re.findall(r"\w+", tok) if w)
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.db.execute(
            "SELECT path FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT ?", (match, limit)
        )
        return [r[0] for r in rows]


def open_index(db: Path | None, corpus: Path, config: Path | None = None) -> tuple[Any, float]:
    """A :class:`cairn.app.Cairn` over ``corpus`` (indexed now unless ``db`` holds it),
    and the seconds indexing took (0 when reused)."""
    from cairn.app import Cairn
    from cairn.config import load_config

    path = db or Path(tempfile.mkdtemp(prefix="cairn-notes-")) / "notes.db"
    fresh = not path.exists()
    cairn = Cairn(load_config(db=str(path), config_file=config))
    t0 = time.perf_counter()
    if fresh or not cairn.roots():

        def progress(done: int, total: int, rel: str) -> None:
            if done % 250 == 0 or done == total:
                print(f"indexing {done}/{total}", file=sys.stderr, flush=True)

        cairn.index([str(corpus)], progress=progress)
        return cairn, time.perf_counter() - t0
    return cairn, 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--db", type=Path, default=None, help="index to reuse or build")
    ap.add_argument("--config", type=Path, default=None, help="a cairn.toml to search with")
    ap.add_argument("--set", type=Path, default=SET, dest="judged",
                    help="the judged set's folder (queries.jsonl, qrels/)")
    ap.add_argument("--split", default="all", choices=("dev", "test", "all"))
    ap.add_argument("--modes", default="keyword,semantic,hybrid")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--show", action="store_true", help="print each query's top 3 per mode")
    ap.add_argument("--drop", action="append", default=[], metavar="PREFIX",
                    help="leave out hits whose path starts with PREFIX (repeatable)")
    ap.add_argument("--ids", default="", metavar="RANGES",
                    help="only these queries: ids or ranges, comma-separated (n65-n118)")
    args = ap.parse_args(argv)
    drop = tuple(args.drop)
    corpus = args.corpus.resolve()
    queries, qrels = load_set(args.split, args.judged)
    if args.ids:
        queries = {i: q for i, q in queries.items() if in_ids(i, args.ids)}
    cairn, index_s = open_index(args.db, corpus, args.config)
    base = FileBaseline(corpus)
    modes = [m for m in args.modes.split(",") if m]
    runs: dict[str, dict[str, list[str]]] = {m: {} for m in ["baseline", *modes]}
    lat: dict[str, list[float]] = defaultdict(list)
    for qid, q in queries.items():
        rels = qrels.get(qid, {})
        t0 = time.perf_counter()
        files = [f for f in base.search(q["text"], 20 + 60 * bool(drop)) if not f.startswith(drop)]
        runs["baseline"][qid] = keys_of_files(files[:20], rels)
        lat["baseline"].append((time.perf_counter() - t0) * 1000)
        for m in modes:
            t0 = time.perf_counter()
            res = cairn.search(q["text"], mode=m, limit=30)  # a larger limit ranks otherwise
            lat[m].append((time.perf_counter() - t0) * 1000)
            hits = [h for h in res.hits if not (drop and h.path.startswith(drop))]
            runs[m][qid] = keys_of_hits(hits, rels)
    table: dict[str, dict[str, dict[str, float]]] = {}
    for m, run in runs.items():
        per: dict[str, dict[str, float]] = {}
        for kind in (*KINDS, "all"):
            ids = [i for i in queries if kind in ("all", queries[i]["kind"])]
            if not ids:
                continue
            per[kind] = {
                "ndcg10": sum(ndcg10(run[i], qrels.get(i, {})) for i in ids) / len(ids),
                "recall10": sum(recall10(run[i], qrels.get(i, {})) for i in ids) / len(ids),
                "mrr10": sum(mrr10(run[i], qrels.get(i, {})) for i in ids) / len(ids),
                "queries": len(ids),
            }
        ms = sorted(lat[m])
        per["all"]["p50_ms"] = ms[len(ms) // 2]
        per["all"]["p95_ms"] = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
        table[m] = per
    if args.show:
        for qid, q in queries.items():
            print(f"{qid} [{q['kind']}] {q['text']}")
            for m in runs:
                top = runs[m][qid][:3]
                mark = ["*" if qrels.get(qid, {}).get(d, 0) else " " for d in top]
                print(
                    f"   {m:9} "
                    + " | ".join(f"{s}{d[-50:]}" for s, d in zip(mark, top, strict=True))
                )
    if args.json:
        out = {
            "split": args.split,
            "queries": len(queries),
            "index_seconds": index_s,
            "baseline_files": base.files,
            "table": table,
            "per_query": {
                qid: {"kind": q["kind"], "split": q["split"]}
                | {m: round(ndcg10(runs[m][qid], qrels.get(qid, {})), 4) for m in runs}
                for qid, q in queries.items()
            },
        }
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"split={args.split} queries={len(queries)} baseline files={base.files} "
        f"index={index_s:.0f}s"
    )
    for metric in ("ndcg10", "recall10", "mrr10"):
        print(f"\n{metric:10} " + " ".join(f"{k:>10}" for k in (*KINDS, "all")))
        for m, per in table.items():
            cells = [f"{per[k][metric]:10.3f}" if k in per else " " * 10 for k in (*KINDS, "all")]
            print(f"{m:10} " + " ".join(cells))
    print(
        "\nlatency ms p50/p95: "
        + ", ".join(
            f"{m} {per['all']['p50_ms']:.1f}/{per['all']['p95_ms']:.1f}" for m, per in table.items()
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
