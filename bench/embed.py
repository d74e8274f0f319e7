"""The model's ceiling beside the indexing pipeline's embedding rate, on SciFact and on
the shared corpus, in one run.

Usage: python bench/embed.py [--docs N] [--files N] [--provider P] [--threads T] [--json F]

Two inputs, each indexed by :meth:`cairn.app.Cairn.index` into a throwaway index:

- ``scifact``: the first ``--docs`` abstracts (default 300) of
  ``../shared/bench/beir/scifact``, written as Markdown notes (``# title`` + text);
- ``corpus``: the first ``--files`` files (default 150; ``0``: all of it, about 25,000
  chunks) of ``../shared/corpus`` in path order, copied to a temporary folder.

For each input, rows of chunks/s and tokens/s (tokens as the model sees them: the
int8 MiniLM's WordPiece tokens, truncated at ``MAX_TOKENS``, special tokens included):

- ``ceiling``: the model alone (``embed`` timed and nothing else) on exactly the
  distinct texts the pipeline embedded, in the same batches;
- ``pipeline``: the whole embedding step of the index run (chunking, cache look-ups,
  the model, vector writes and commits): its rate as a share of the ceiling's, and the
  share of the step's time spent inside the model in the same run (under a fluctuating
  load the second is the steadier figure: both sides are timed together);
- what the pipeline avoided embedding: chunks whose text is a duplicate (embedded
  once), and the tokens sent to the model against the tokens of the source text
  (metadata prefixes and overlap windows add tokens; duplicates remove them).

``--provider`` picks the model (``minilm-onnx``, the default; ``static``; or a
static-model folder such as the fast profile's). Needs ``onnxruntime``/``tokenizers``.
Not part of the test suite; the machine's load counts (the load average is printed;
under load every rate is lower, the ratios much less so).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from cairn.app import Cairn
from cairn.config import load_config
from cairn.embed.base import Embedder
from cairn.embed.onnx import MAX_TOKENS
from cairn.embed.registry import EmbedConfig, make_embedder
from cairn.embed.static import StaticEmbedder

HERE = Path(__file__).resolve().parent
SCIFACT = HERE.parents[1] / "shared" / "bench" / "beir" / "scifact"
CORPUS = HERE.parents[1] / "shared" / "corpus"
TOKENIZER = (
    HERE.parent / "src" / "cairn" / "data" / "models" / "all-MiniLM-L6-v2-onnx" / "tokenizer.json"
)


class Counting:
    """An embedder that records the batches it is given and the seconds spent in the
    wrapped one."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name, self.dim, self.fingerprint = inner.name, inner.dim, inner.fingerprint
        self.batches: list[list[str]] = []
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> Any:
        """Embed with the wrapped embedder, recording."""
        self.batches.append(list(texts))
        t0 = time.perf_counter()
        out = self.inner.embed(texts)
        self.seconds += time.perf_counter() - t0
        return out

    def embed_query(self, texts: Sequence[str]) -> Any:
        """Query-time encoding (not counted)."""
        fn = getattr(self.inner, "embed_query", self.inner.embed)
        return fn(texts)


def scifact_notes(folder: Path, n: int, dest: Path) -> None:
    """The first ``n`` SciFact abstracts as Markdown notes in ``dest``."""
    with (folder / "corpus.jsonl").open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i >= n:
                break
            d = json.loads(line)
            text = f"# {d.get('title', '')}\n\n{d.get('text', '')}\n"
            (dest / f"{d['_id']}.md").write_text(text, encoding="utf-8")


def corpus_sample(folder: Path, n: int, dest: Path) -> None:
    """The first ``n`` files of ``folder`` in path order (all when ``n`` is 0), copied."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
    for p in files[:n] if n else files:
        out = dest / p.relative_to(folder)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, out)


def measure(name: str, notes: Path, model: Embedder, count: Any, work: Path) -> dict[str, Any]:
    """Index ``notes`` with ``model`` and time the ceiling on the same texts."""
    counting = Counting(model)
    empty = work / "cairn.toml"  # defaults, not the user's configuration
    empty.write_text("", encoding="utf-8")
    cfg = load_config(db=work / f"{name}.db", config_file=empty)
    t0 = time.perf_counter()
    with Cairn(cfg, embedder=counting) as cairn:
        run = cairn.index([notes])
        bodies = {
            u.unit_id: u.body
            for _, u in cairn.store.vectors.chunks_missing_vectors("bench-no-such-space")
        }
        source_tokens = count(list(bodies.values()), truncate=False)
    total_s = time.perf_counter() - t0
    step = run.embedding
    if step is None or not counting.batches:
        raise SystemExit(f"{name}: the index run did not embed")
    texts = [t for b in counting.batches for t in b]
    tokens = count(texts)
    t0, c0 = time.perf_counter(), time.process_time()
    for b in counting.batches:
        model.embed(b)
    ceil_s = time.perf_counter() - t0
    ceil_cpu = time.process_time() - c0
    return {
        "input": name,
        "files": run.seen,
        "chunks": step.chunks_added,
        "distinct_texts": step.embedded,
        "tokens_embedded": tokens,
        "source_tokens": source_tokens,
        "ceiling_s": ceil_s,
        "ceiling_cpu_s": ceil_cpu,
        "pipeline_s": step.seconds,
        "pipeline_model_s": counting.seconds,
        "index_run_s": total_s,
        "ceiling_chunks_per_s": len(texts) / ceil_s,
        "pipeline_chunks_per_s": step.chunks_added / step.seconds,
        "ceiling_tokens_per_s": tokens / ceil_s,
        "pipeline_tokens_per_s": tokens / step.seconds,
        "share_of_ceiling": ceil_s / step.seconds,
        "model_share_of_step": counting.seconds / step.seconds,
    }


def main() -> None:
    """Print the ceiling and the pipeline side by side (see the module docstring)."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--files", type=int, default=150)
    ap.add_argument("--beir", type=Path, default=SCIFACT)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--provider", default="minilm-onnx")
    ap.add_argument("--threads", type=int, default=None, help="ONNX intra-op threads")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    if Path(args.provider).is_dir():
        model: Embedder = StaticEmbedder(folder=Path(args.provider))
    else:
        made = make_embedder(EmbedConfig(provider=args.provider, threads=args.threads))
        assert made is not None
        model = made

    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER))
    tok.enable_truncation(MAX_TOKENS)
    tok.no_padding()

    whole = Tokenizer.from_file(str(TOKENIZER))
    whole.no_truncation()
    whole.no_padding()

    def count(texts: Sequence[str], truncate: bool = True) -> int:
        """WordPiece tokens of ``texts`` (at most ``MAX_TOKENS`` each unless not
        ``truncate``; special tokens included)."""
        t = tok if truncate else whole
        return sum(len(e.ids) for e in t.encode_batch(list(texts)))

    model.embed(["warm-up: first runs allocate"] * 8)
    load0 = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("scifact", "corpus"):
            notes = Path(tmp) / name
            notes.mkdir()
            if name == "scifact":
                scifact_notes(args.beir, args.docs, notes)
            else:
                corpus_sample(args.corpus, args.files, notes)
            rows.append(measure(name, notes, model, count, Path(tmp)))
    load1 = os.getloadavg()[0]
    print(f"load average {load0:.1f} → {load1:.1f} ({os.cpu_count()} CPUs); {model.name}")
    print(f"{'':30} {'chunks':>7} {'tokens':>8} {'s':>8} {'chunks/s':>9} {'tokens/s':>9}")
    for r in rows:
        n, tk = r["distinct_texts"], r["tokens_embedded"]
        print(
            f"{r['input'] + ': ceiling (model alone)':30} {n:7d} {tk:8d} "
            f"{r['ceiling_s']:8.2f} {r['ceiling_chunks_per_s']:9.1f} "
            f"{r['ceiling_tokens_per_s']:9.0f}"
        )
        print(
            f"{r['input'] + ': pipeline (embed step)':30} {r['chunks']:7d} {tk:8d} "
            f"{r['pipeline_s']:8.2f} {r['pipeline_chunks_per_s']:9.1f} "
            f"{r['pipeline_tokens_per_s']:9.0f}"
        )
        print(
            f"  {r['input']}: the ceiling used {r['ceiling_cpu_s']:.2f} CPU s "
            f"({n / max(1e-9, r['ceiling_cpu_s']):.1f} chunks, "
            f"{tk / max(1e-9, r['ceiling_cpu_s']):.0f} tokens per CPU second: steadier "
            "than wall time under load, but spinning threads count too)"
        )
        print(
            f"  {r['input']}: pipeline at {100 * r['share_of_ceiling']:.0f}% of the ceiling "
            f"(the model's own time is {100 * r['model_share_of_step']:.1f}% of the step's); "
            f"{r['files']} files, {r['chunks']} chunks, {r['distinct_texts']} distinct texts "
            f"embedded; tokens embedded / source tokens = "
            f"{tk / max(1, r['source_tokens']):.2f}; whole index run {r['index_run_s']:.1f} s"
        )
    if args.json:
        args.json.write_text(
            json.dumps({"load": [load0, load1], "model": model.name, "rows": rows}, indent=2)
        )


if __name__ == "__main__":
    main()
