"""Readers while a writer works, two writers at once, and the soak (slow tier)."""

from __future__ import annotations

import shutil
import sys
import threading
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.store.lock import IndexBusy

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import soak

pytestmark = pytest.mark.corpus
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"


def test_four_search_loops_while_indexing(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    shutil.copytree(CORPUS / "markdown" / "kepano-obsidian", vault)
    db = tmp_path / "i.db"
    with Cairn.open(db=db) as c:
        c.index([vault / "Templates"])  # something to read from the start
    errors: list[str] = []
    counts = [0] * 4
    done = threading.Event()

    def loop(i: int) -> None:
        try:
            with Cairn.open(db=db) as r:
                while not done.is_set():
                    for q in ("note", "tag:daily", "project OR idea", '"template"'):
                        r.search(q, mode="keyword")
                        counts[i] += 1
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    with Cairn.open(db=db) as c:
        c.remove_root(vault / "Templates")
        for _ in range(3):
            c.index([vault])
            for p in sorted(vault.rglob("*.md"))[:30]:
                p.write_text(p.read_text(encoding="utf-8") + "\nmore\n", encoding="utf-8")
    done.set()
    for t in threads:
        t.join()
    assert errors == []
    assert min(counts) > 0


def test_two_writers_at_once_never_both_write(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    shutil.copytree(CORPUS / "markdown" / "kepano-obsidian", vault)
    db = tmp_path / "i.db"
    results: list[str] = []
    inside = threading.Lock()
    overlap: list[bool] = []

    def writer() -> None:
        with Cairn.open(db=db) as c:
            try:
                with c.runs.writing():
                    if not inside.acquire(blocking=False):
                        overlap.append(True)
                        return
                    try:
                        c.index([vault])
                    finally:
                        inside.release()
                results.append("wrote")
            except IndexBusy:
                results.append("refused")

    with Cairn.open(db=db):
        pass  # the index exists; both writers then race for the lock
    threads = [threading.Thread(target=writer) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not overlap
    assert "wrote" in results and len(results) == 2


@pytest.mark.slow
def test_sixty_second_soak(tmp_path: Path) -> None:
    """A watcher, a writer script and 8 readers for 60 s; then the index equals a fresh
    build."""
    r = soak.soak(tmp_path, 60, readers=8)
    assert r.reader_errors == []
    assert r.differences == {}
    assert r.watcher_alive
    # throughput is measured by bench/; here only enough work to make races likely
    assert r.operations > 100 and r.queries > 300
    assert r.latencies  # their percentiles: bench/soak.py
