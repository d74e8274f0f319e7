"""Benchmark the chat importer on a generated ChatGPT export.

Generates N conversations (default 10,000) with ``bench/gen_chats.py`` in a temporary
folder, then parses the file through :func:`cairn.formats.chats.parse_file`, consuming
Documents one at a time as the ingest pipeline would. Two passes:

1. timed, without tracing: conversations/s, units/s, ``ru_maxrss`` (peak resident set
   of the process, which also covers generation);
2. with ``tracemalloc``: the peak of Python allocations during the parse.

Target (issue 5): peak memory under 500 MB.

Usage::

    python bench/chats.py [-n 10000] [--zip] [--no-trace]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cairn.formats.chats import parse_file
from cairn.model import Document
from gen_chats import write_export


def _parse(path: Path) -> tuple[int, int, int, int]:
    """(documents, messages, units, failures) of one pass over ``path``."""
    docs = messages = units = failures = 0
    for item in parse_file(path, path.name):
        if isinstance(item, Document):
            docs += 1
            units += len(item.units)
            messages += sum(1 for u in item.units if u.kind == "message")
        else:
            failures += 1
    return docs, messages, units, failures


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=10_000)
    ap.add_argument("--zip", action="store_true", help="parse the zipped export")
    ap.add_argument("--no-trace", action="store_true", help="skip the tracemalloc pass")
    ap.add_argument(
        "--index",
        action="store_true",
        help="run the whole pipeline (cairn index into a temp SQLite file) instead of the "
        "parser alone",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / ("export.zip" if args.zip else "conversations.json")
        t0 = time.perf_counter()
        write_export(out, args.n, zipped=args.zip)
        gen = time.perf_counter() - t0
        size = out.stat().st_size
        print(f"generated {args.n} conversations: {size / 1e6:.1f} MB in {gen:.1f} s")

        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if args.index:
            from cairn.app import Cairn

            t0 = time.perf_counter()
            with Cairn.open(db=Path(tmp) / "bench.db") as cairn:
                run = cairn.index([out])
                counts = cairn.stats()
            secs = time.perf_counter() - t0
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"indexed {counts.documents} conversations ({counts.units} units, "
                f"{run.failed} failed files) in {secs:.2f} s: "
                f"{counts.documents / secs:,.0f} conversations/s"
            )
            print(f"  ru_maxrss: {rss:.0f} MB (before indexing: {rss_before:.0f} MB)")
            print(f"target peak memory < 500 MB: {'met' if rss < 500 else 'NOT met'}")
            return
        t0 = time.perf_counter()
        docs, messages, units, failures = _parse(out)
        secs = time.perf_counter() - t0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"parsed {docs} conversations ({messages} messages, {units} units, "
            f"{failures} failures) in {secs:.2f} s"
        )
        print(
            f"  {docs / secs:,.0f} conversations/s, {units / secs:,.0f} units/s, "
            f"{size / 1e6 / secs:.1f} MB/s"
        )
        print(f"  ru_maxrss: {rss:.0f} MB (before parsing: {rss_before:.0f} MB)")
        if not args.no_trace:
            tracemalloc.start()
            _parse(out)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            print(f"  tracemalloc peak during parse: {peak / 1e6:.1f} MB")
        ok = rss < 500
        print(f"target peak memory < 500 MB: {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
