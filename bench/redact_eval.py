"""Recall per kind on a seeded corpus and false positives on the shared corpus (issue 18).

    python bench/redact_seed.py /tmp/redact-seeded --per-kind 20
    python bench/redact_eval.py /tmp/redact-seeded [--index] [--fp-details]

Recall: a planted value counts as found when a finding of its kind in its file has that
value (JSON escaping undone). ``--index`` also indexes the seeded corpus with
``[redact] on_ingest = "mask"`` into a throwaway index and counts planted values still
present anywhere in the index file's SQL dump (documents, units, FTS, chunks, runs).
False positives: every finding on the unmodified shared corpus, per kind (the shared
corpus holds no planted values; whether a finding there is a real value or a false
positive is judged by reading them: ``--fp-details`` prints each one with its context).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from cairn.redact import KINDS, find

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus"


def _text(p: Path) -> str:
    return p.read_text(encoding="utf-8", errors="replace")


def recall(seeded: Path) -> dict[str, tuple[int, int]]:
    planted = [json.loads(line) for line in (seeded / "planted.jsonl").open(encoding="utf-8")]
    by_file: dict[str, set[tuple[str, str]]] = {}
    for rel in {p["file"] for p in planted}:
        text = _text(seeded / rel)
        found = set()
        for f in find(text):
            v = f.value
            if rel.endswith(".json"):
                with contextlib.suppress(ValueError):
                    v = json.loads(f'"{v}"')
            found.add((f.kind, v))
        by_file[rel] = found
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for p in planted:
        out[p["kind"]][1] += 1
        if (p["kind"], p["value"]) in by_file[p["file"]]:
            out[p["kind"]][0] += 1
        else:
            print(f"  missed {p['kind']}: {p['value'][:60]!r} in {p['file']}", file=sys.stderr)
    return {k: (v[0], v[1]) for k, v in out.items()}


def leaks(seeded: Path) -> tuple[int, int, float]:
    from cairn.app import Cairn
    from cairn.config import load_config

    planted = [json.loads(line) for line in (seeded / "planted.jsonl").open(encoding="utf-8")]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "cairn.toml"
        cfg.write_text('[redact]\non_ingest = "mask"\n[embed]\nprovider = "none"\n')
        db = Path(tmp) / "i.db"
        t0 = time.perf_counter()
        with Cairn(load_config(db=db, config_file=cfg)) as c:
            c.index([seeded / "chats", seeded / "notes"], embed=False)
        seconds = time.perf_counter() - t0
        con = sqlite3.connect(db)
        dump = "\n".join(con.iterdump())
        con.close()
    left = sum(1 for p in planted if p["value"] in dump)
    return left, len(planted), seconds


def false_positives(details: bool) -> tuple[Counter[str], float, float]:
    """Findings per kind on the shared corpus, its size (MB) and the detectors' seconds."""
    counts: Counter[str] = Counter()
    mb = seconds = 0.0
    for p in sorted(SHARED.rglob("*")):
        if not p.is_file() or p.suffix in {".png", ".jpg", ".zip", ".pdf", ".gif"}:
            continue
        text = _text(p)
        mb += len(text.encode("utf-8")) / 1e6
        t0 = time.perf_counter()
        found = find(text)
        seconds += time.perf_counter() - t0
        for f in found:
            counts[f.kind] += 1
            if details:
                ctx = text[max(0, f.start - 40) : f.end + 20].replace("\n", " ")
                print(f"{f.kind}\t{f.value!r}\t{ctx!r}\t{p.relative_to(SHARED)}")
    return counts, mb, seconds


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("seeded", type=Path)
    ap.add_argument("--index", action="store_true", help="also index it and look for leaks")
    ap.add_argument("--fp-details", action="store_true")
    args = ap.parse_args()
    rec = recall(args.seeded)
    fps, mb, secs = false_positives(args.fp_details)
    print(f"{'kind':16} {'recall':>8} {'found/planted':>14} {'shared-corpus findings':>24}")
    for kind in KINDS:
        got, total = rec.get(kind, (0, 0))
        r = f"{got / total:.1%}" if total else "-"
        print(f"{kind:16} {r:>8} {f'{got}/{total}':>14} {fps.get(kind, 0):>24}")
    got = sum(v[0] for v in rec.values())
    total = sum(v[1] for v in rec.values())
    print(f"{'all':16} {got / total:>8.1%} {f'{got}/{total}':>14} {sum(fps.values()):>24}")
    print(f"detectors: {mb:.1f} MB of the shared corpus in {secs:.1f} s ({mb / secs:.1f} MB/s)")
    if args.index:
        left, n, secs = leaks(args.seeded)
        print(
            f"indexed with on_ingest=mask in {secs:.1f} s: "
            f"{left} of {n} planted values left in the index file"
        )


if __name__ == "__main__":
    main()
