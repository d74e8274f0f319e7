"""The ONNX model's ceiling beside the indexing pipeline's embedding rate, in one run.

Usage: python bench/embed.py [--docs N] [--beir FOLDER] [--threads T]

On a sample of SciFact (the first N abstracts, default 300, of
``../shared/bench/beir/scifact``):

- ``ceiling``: :class:`cairn.embed.onnx.OnnxEmbedder` (int8 MiniLM, one text per
  session run) embedding the abstracts themselves (title + text), timed around
  ``embed`` alone: texts/s and tokens/s (tokens as the model sees them: truncated at
  ``MAX_TOKENS``, special tokens included);
- ``pipeline``: the same abstracts written as Markdown notes and indexed by
  :meth:`cairn.app.Cairn.index` into a throwaway index with the same embedder (wrapped
  to count what reaches the model): chunks/s and tokens/s over the whole embedding
  step (chunking, cache look-ups, writes) and over the model calls alone, and the
  pipeline's tokens/s as a share of the ceiling's, and how many more tokens the
  pipeline embeds than the abstracts hold. Short chunks run faster per token than
  whole abstracts, so the pipeline can exceed this "ceiling".

Needs ``onnxruntime``, ``tokenizers`` and the int8 model (``cairn models``). Not part
of the test suite; the machine's load counts (the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cairn.app import Cairn
from cairn.config import load_config
from cairn.embed.onnx import MAX_TOKENS, OnnxEmbedder

HERE = Path(__file__).resolve().parent
SCIFACT = HERE.parents[1] / "shared" / "bench" / "beir" / "scifact"


class Counting:
    """An embedder that counts the texts and tokens it is given and the seconds spent
    in the wrapped one."""

    def __init__(self, inner: OnnxEmbedder, count: Any) -> None:
        self.inner, self.count = inner, count
        self.name, self.dim, self.fingerprint = inner.name, inner.dim, inner.fingerprint
        self.texts = self.tokens = 0
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> Any:
        """Embed with the wrapped embedder, counting."""
        self.texts += len(texts)
        self.tokens += self.count(texts)
        t0 = time.perf_counter()
        out = self.inner.embed(texts)
        self.seconds += time.perf_counter() - t0
        return out

    def embed_query(self, texts: Sequence[str]) -> Any:
        """Query-time encoding (not counted)."""
        return self.inner.embed_query(texts)


def _sample(folder: Path, n: int) -> list[tuple[str, str, str]]:
    docs: list[tuple[str, str, str]] = []
    with (folder / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            docs.append((str(d["_id"]), d.get("title", ""), d.get("text", "")))
            if len(docs) >= n:
                break
    return docs


def main() -> None:
    """Print the ceiling and the pipeline side by side (see the module docstring)."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--beir", type=Path, default=SCIFACT)
    ap.add_argument("--threads", type=int, default=None, help="ONNX intra-op threads")
    args = ap.parse_args()
    docs = _sample(args.beir, args.docs)
    model = OnnxEmbedder(threads=args.threads)

    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model.path / "tokenizer.json"))
    tok.enable_truncation(MAX_TOKENS)
    tok.no_padding()

    def count(texts: Sequence[str]) -> int:
        return sum(len(e.ids) for e in tok.encode_batch(list(texts)))

    texts = [f"{title}\n\n{text}" for _, title, text in docs]
    model.embed(texts[:8])  # warm-up: first runs allocate
    t0 = time.perf_counter()
    model.embed(texts)
    ceil_s = time.perf_counter() - t0
    ceil_tokens = count(texts)

    counting = Counting(model, count)
    with tempfile.TemporaryDirectory() as tmp:
        notes = Path(tmp) / "notes"
        notes.mkdir()
        for doc_id, title, text in docs:
            (notes / f"{doc_id}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
        empty = Path(tmp) / "cairn.toml"  # defaults, not the user's configuration
        empty.write_text("", encoding="utf-8")
        cfg = load_config(db=Path(tmp) / "bench.db", config_file=empty)
        t0 = time.perf_counter()
        with Cairn(cfg, embedder=counting) as cairn:
            run = cairn.index([notes])
        total_s = time.perf_counter() - t0
    step = run.embedding
    if step is None:
        raise SystemExit("the index run did not embed")

    print(f"load average {os.getloadavg()[0]:.2f}; {len(docs)} SciFact abstracts; {model.name}")
    print(f"{'':34} {'items':>7} {'tokens':>8} {'s':>7} {'items/s':>8} {'tokens/s':>9}")

    def row(name: str, items: int, tokens: int, seconds: float) -> None:
        print(
            f"{name:34} {items:7d} {tokens:8d} {seconds:7.2f} "
            f"{items / seconds:8.1f} {tokens / seconds:9.0f}"
        )

    row("ceiling: abstracts, model only", len(texts), ceil_tokens, ceil_s)
    row("pipeline: chunks, embedding step", step.chunks_added, counting.tokens, step.seconds)
    row("pipeline: texts, model calls only", counting.texts, counting.tokens, counting.seconds)
    share = (counting.tokens / step.seconds) / (ceil_tokens / ceil_s)
    print(
        f"pipeline tokens/s = {100 * share:.0f}% of the ceiling; "
        f"{step.chunks_added} chunks ({step.embedded} distinct texts embedded, "
        f"{step.cached} from cache) from {run.seen} notes; whole index run {total_s:.1f} s"
    )
    print(
        f"tokens sent to the model: {counting.tokens / ceil_tokens:.2f}x the abstracts' "
        "(chunk overlap, titles and outline paths repeated per chunk)"
    )


if __name__ == "__main__":
    main()
