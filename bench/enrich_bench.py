"""Requests, tokens and time of ``cairn enrich`` over the shared chat corpus, against
the replaying OpenAI-compatible server of the tests (issue 18).

    python bench/enrich_bench.py [--chats ../shared/corpus/chats] [--no-relations]

Indexes the chat exports into a throwaway index (with the static embedding model, so
relation candidates exist), starts ``tests/enrich/replay.py`` on loopback (hand-written
replies, answered at once — the time measured is cairn's own: prompts, redaction,
HTTP, validation, cache and index writes, not a model's), then runs ``cairn enrich
--dry-run`` (the estimate), ``cairn enrich`` and ``cairn enrich`` again (the cache).
Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "enrich"))

from enrich_replay import replay_server  # noqa: E402

from cairn.app import Cairn  # noqa: E402
from cairn.config import load_config  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chats", type=Path, default=ROOT.parent / "shared" / "corpus" / "chats")
    ap.add_argument("--no-relations", action="store_true")
    ap.add_argument("--similarity", type=float, default=0.75)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, replay_server("openai") as server:
        base = Path(tmp)
        cfg = base / "cairn.toml"
        cfg.write_text(
            '[embed]\nprovider = "static"\n'
            f'[enrich]\nprovider = "openai"\nurl = "{server.url}"\nmodel = "replay-1"\n'
            f"similarity = {args.similarity}\nprice_input = 0.15\nprice_output = 0.60\n",
            encoding="utf-8",
        )
        with Cairn(load_config(db=base / "i.db", config_file=cfg, env={})) as c:
            t0 = time.perf_counter()
            run = c.index([args.chats])
            index_s = time.perf_counter() - t0
            dry = c.enrich.run(dry_run=True, relations=not args.no_relations)
            first = c.enrich.run(relations=not args.no_relations)
            n_bodies = len(server.bodies)
            second = c.enrich.run(relations=not args.no_relations)
        sent_chars = sum(len(r) for r in server.raw[:n_bodies])
        print(json.dumps({
            "chats": str(args.chats),
            "files": run.seen, "index_seconds": round(index_s, 2),
            "conversations": first.conversations,
            "estimate": dry.estimate.__dict__ if dry.estimate else None,
            "first_run": {
                "requests": first.requests, "answered": first.answered,
                "skipped": len(first.skipped), "pairs": first.pairs,
                "relations": first.relations, "insights": first.insights,
                "input_tokens": first.input_tokens, "output_tokens": first.output_tokens,
                "request_bytes": sent_chars, "seconds": first.seconds,
                "pair_estimate": first.pair_estimate.__dict__ if first.pair_estimate else None,
            },
            "second_run": {"requests": second.requests, "cached": second.cached,
                           "server_requests_after": len(server.bodies) - n_bodies,
                           "seconds": second.seconds},
        }, indent=2))


if __name__ == "__main__":
    main()
