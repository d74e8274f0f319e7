"""Markdown parse throughput of cairn.formats.markdown on the corpus vaults.

Usage: python bench/md_parse.py [VAULT_DIR ...] [--repeats N] [--big]

Reads every ``.md`` file of the vaults once (reading is not timed), then parses them all
``--repeats`` times (default 5) and prints the median CPU seconds of the process (so a
loaded machine shifts the figure less than wall-clock time would), CPU seconds per MB,
MB/s and files/s. ``--big`` also times the 5.5 MB note of case 046 (generated into a
temporary folder). Defaults to the three vaults under ../shared/corpus/markdown. Run it
with ``PYTHONPATH=OTHER/src`` to measure another tree.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cairn.formats import markdown

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def load(dirs: list[Path]) -> list[tuple[str, str]]:
    files: list[tuple[str, str]] = []
    for root in dirs:
        for path in sorted(root.rglob("*.md")):
            files.append((path.relative_to(root).as_posix(), path.read_text(encoding="utf-8")))
    return files


def run(files: list[tuple[str, str]], repeats: int) -> tuple[float, float, float]:
    size = sum(len(text.encode("utf-8")) for _, text in files)
    times = []
    for _ in range(repeats):
        start = time.process_time()
        for rel, text in files:
            markdown.parse(text, rel)
        times.append(time.process_time() - start)
    med = statistics.median(times)
    return med, size / med / 1e6, len(files) / med


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*", type=Path)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--big", action="store_true")
    args = ap.parse_args()
    dirs = args.dirs or sorted((SHARED / "corpus" / "markdown").iterdir())
    files = load(dirs)
    size = sum(len(t.encode("utf-8")) for _, t in files)
    med, mbps, fps = run(files, args.repeats)
    print(
        f"vaults: {len(files)} files, {size / 1e6:.2f} MB; median of {args.repeats}: "
        f"{med:.2f} CPU s = {med / (size / 1e6):.3f} CPU s/MB = {mbps:.2f} MB/s, "
        f"{fps:.0f} files/s"
    )
    if args.big:
        script = SHARED / "cases" / "046-large-file-indexing" / "make_big.py"
        with tempfile.TemporaryDirectory() as tmp:
            big = Path(tmp) / "big.md"
            subprocess.run([sys.executable, str(script), str(big)], check=True)
            one = [("big.md", big.read_text(encoding="utf-8"))]
            med, mbps, _ = run(one, max(1, min(args.repeats, 3)))
            print(
                f"case 046 big.md: {len(one[0][1]) / 1e6:.2f} MB in {med:.2f} CPU s = "
                f"{mbps:.2f} MB/s"
            )


if __name__ == "__main__":
    main()
