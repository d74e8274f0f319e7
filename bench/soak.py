"""Soak: a watcher, a writer editing notes, and readers searching, for a while.

    python bench/soak.py [--seconds 1800] [--readers 8] [--work DIR]

A ``cairn watch`` child process follows a scratch vault (corpus notes) while a writer
edits, creates, renames and deletes notes (one operation every ~50 ms, each new text
with a unique word) and ``--readers`` threads search in a loop. Every few operations
the writer measures the latency from the save to the word being searchable. At the
end the watched index is compared with a fresh full build. Prints operations, reader
queries and errors, latency p50/p95 and whether the index matched. The test
``tests/reliability/test_soak.py`` runs 60 seconds of it (slow tier).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


@dataclass
class SoakResult:
    """What a soak measured."""

    seconds: float = 0.0
    operations: int = 0
    queries: int = 0
    reader_errors: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    differences: dict[str, int] = field(default_factory=dict)
    watcher_alive: bool = True

    def percentile(self, q: float) -> float:
        """The ``q`` quantile (0–1) of the save-to-searchable latencies, seconds."""
        if not self.latencies:
            return float("nan")
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, int(q * len(xs)))]


def _searchable(db: Path, word: str, deadline: float) -> float | None:
    """Seconds until ``word`` is found (``None``: not before ``deadline``)."""
    from cairn.app import Cairn

    t0 = time.monotonic()
    with Cairn.open(db=db, create=False) as c:
        while time.monotonic() < deadline:
            if c.search(word, mode="keyword").hits:
                return time.monotonic() - t0
            time.sleep(0.02)
    return None


def soak(work: Path, seconds: float, readers: int = 8, seed: int = 1) -> SoakResult:
    """Run the soak in ``work`` (a vault and two indexes are made there)."""
    from cairn.app import Cairn
    from cairn.ingest.snapshot import index_snapshot

    rng = random.Random(seed)
    vault = work / "vault"
    shutil.copytree(CORPUS / "markdown" / "kepano-obsidian", vault)
    db = work / "watch.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "CAIRN_EMBED": "none"}
    watcher = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cairn.interfaces.cli",
            "--db",
            str(db),
            "watch",
            str(vault),
            "-q",
            "--no-embed",
            "--json",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a script started in the background ignores SIGINT, and the watcher would inherit
        # that and never see the Ctrl-C that ends the soak
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert watcher.stdout is not None
    first = watcher.stdout.readline()  # {"event": "ready", ...}
    if '"ready"' not in first:
        watcher.kill()
        raise RuntimeError(f"the watcher did not start: {first} {watcher.stderr.read()}")
    threading.Thread(target=lambda: watcher.stdout.read(), daemon=True).start()  # type: ignore[union-attr]
    res = SoakResult()
    stop = threading.Event()

    def read(i: int) -> None:
        words = ["note", "daily", "project", "tag:clippings", "path:Categories", "link"]
        try:
            with Cairn.open(db=db, create=False) as c:
                while not stop.is_set():
                    c.search(words[res.queries % len(words)], mode="keyword")
                    res.queries += 1
        except Exception as exc:
            res.reader_errors.append(f"reader {i}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=read, args=(i,)) for i in range(readers)]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    n = 0
    while time.monotonic() - t0 < seconds:
        n += 1
        notes = sorted(vault.rglob("*.md"))
        op = rng.random()
        word = f"soakword{n}x"
        if op < 0.6 and notes:
            p = rng.choice(notes)
            tmp = p.with_name(f".{p.name}.tmp")
            tmp.write_text(p.read_text(encoding="utf-8") + f"\n{word}\n", encoding="utf-8")
            os.replace(tmp, p)  # an atomic save
        elif op < 0.8:
            (vault / f"soak {n}.md").write_text(f"# Soak {n}\n\n{word} [[Home]]\n", "utf-8")
        elif op < 0.9 and notes:
            rng.choice(notes).rename(vault / f"renamed {n}.md")
            word = ""
        elif notes:
            rng.choice(notes).unlink()
            word = ""
        res.operations += 1
        if word and n % 10 == 0:
            lat = _searchable(db, word, time.monotonic() + 15)
            if lat is not None:
                res.latencies.append(lat)
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join()
    settle_until = time.monotonic() + 30
    fresh_db = work / "fresh.db"
    with Cairn.open(db=fresh_db) as c:
        c.index([vault], embed=False)
        want = index_snapshot(c.store, c.graph.fresh())
    got = None
    while time.monotonic() < settle_until:
        with Cairn.open(db=db, create=False) as c:
            got = index_snapshot(c.store, c.graph.fresh())
        if got == want:
            break
        time.sleep(0.3)
    assert got is not None
    res.differences = got.differences(want)
    res.watcher_alive = watcher.poll() is None
    watcher.send_signal(signal.SIGINT)  # Ctrl-C stops it cleanly
    try:
        watcher.wait(90)  # a Ctrl-C ends the batch in hand first; slow under load
    except subprocess.TimeoutExpired:
        watcher.kill()
        res.watcher_alive = False
    res.seconds = time.monotonic() - t0
    return res


def main() -> None:
    """Run a soak and print its figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--seconds", type=float, default=1800)
    ap.add_argument("--readers", type=int, default=8)
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    os.environ["CAIRN_EMBED"] = "none"
    work = args.work or Path(tempfile.mkdtemp(prefix="cairn-soak-"))
    r = soak(work, args.seconds, args.readers)
    print(
        f"{r.seconds:.0f} s: {r.operations} file operations, {r.queries} reader queries, "
        f"{len(r.reader_errors)} reader errors; save to searchable p50 "
        f"{r.percentile(0.5) * 1000:.0f} ms, p95 {r.percentile(0.95) * 1000:.0f} ms "
        f"({len(r.latencies)} samples); index vs fresh build: "
        f"{'identical' if not r.differences else r.differences}; watcher "
        f"{'stopped cleanly' if r.watcher_alive else 'DIED'}"
    )
    for e in r.reader_errors[:10]:
        print(" ", e)
    raise SystemExit(0 if not r.differences and not r.reader_errors and r.watcher_alive else 1)


if __name__ == "__main__":
    main()
