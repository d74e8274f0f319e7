"""Link resolution and graph update: full build against a one-file change, on the shared
corpus (not run by the test suite).

Indexes ROOTs (default: ``../shared/corpus/org`` and ``../shared/corpus/markdown``) into
a fresh temp index with the pipeline alone, then times

* the full build: ``resolve_links(store, None, None)`` + ``GraphService.update()``;
* a one-file change, N times, of a leaf note and of the most linked-to Markdown note
  (it gets a new line with links, or loses it again):
  the pipeline run, then ``resolve_links(store, changed, removed)`` and
  ``GraphService.update(changed, removed)`` — what the rewired pipeline does — and, for
  comparison, the whole-index path the pipeline takes today (``resolve_all`` and an
  update that rebuilds every declared edge);
* a no-change run (pipeline + both graph steps).

Prints medians in milliseconds. Usage::

    python bench/graph_incremental.py [--repeat 5] [ROOT ...]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cairn.app import Cairn
from cairn.graph.resolve import resolve_all, resolve_links
from cairn.graph.service import GraphService
from cairn.ingest import pipeline
from cairn.ingest.pipeline import Indexer

HERE = Path(__file__).resolve().parent
DEFAULT = [
    HERE.parents[1] / "shared" / "corpus" / "org",
    HERE.parents[1] / "shared" / "corpus" / "markdown",
]


def _ms(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def _one_file(label: str, note: Path, store: object, indexer: Indexer, g: GraphService,
              repeat: int) -> None:
    """Time ``repeat`` one-file changes of ``note`` (a new line with links, then not)."""
    st: Any = store
    original = note.read_text(encoding="utf-8")
    rows: dict[str, list[float]] = {k: [] for k in (
        "pipeline", "resolve_links", "update", "one-file total",
        "today: resolve_all", "today: update", "no-change total")}
    for i in range(repeat):
        text = (original + f"\n\nSee [[Some note {i}]] and [[{note.stem}]].\n"
                if i % 2 == 0 else original)
        note.write_text(text, encoding="utf-8")
        t_run = _ms(lambda: indexer.run(st.roots()))
        changed, removed = st.edges.changed_documents()
        t_res = _ms(lambda ch=changed, rm=removed: resolve_links(st, ch, rm))
        t_upd = _ms(lambda ch=changed, rm=removed: g.update(ch, rm))
        rows["pipeline"].append(t_run)
        rows["resolve_links"].append(t_res)
        rows["update"].append(t_upd)
        rows["one-file total"].append(t_run + t_res + t_upd)
        rows["today: resolve_all"].append(_ms(lambda: resolve_all(st)))
        rows["today: update"].append(_ms(g.update))
        rows["no-change total"].append(_ms(lambda: (
            indexer.run(st.roots()),
            resolve_links(st, *st.edges.changed_documents()),
            g.update())))
    note.write_text(original, encoding="utf-8")
    print(f"one-file change of {label}, {note.name} ({note.stat().st_size} bytes), "
          f"median of {repeat}:")
    for k, v in rows.items():
        print(f"  {k:<22} {statistics.median(v):8.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("roots", nargs="*", type=Path, default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="cairn-bench-graph-inc-"))
    roots = []
    for r in args.roots:  # a copy: the bench edits a file
        dst = tmp / r.name
        shutil.copytree(r, dst)
        roots.append(dst)
    pipeline.resolve_all = lambda store: 0  # type: ignore[assignment]  # the bench resolves
    c = Cairn.open(db=tmp / "index.db")
    store = c.store
    indexer = Indexer(store, config_hash=c.config.fingerprint())
    t0 = time.perf_counter()
    c.add_roots(roots)
    indexer.run(store.roots())
    t_index = time.perf_counter() - t0
    g = GraphService(store)
    t_resolve = _ms(lambda: resolve_links(store, None, None))
    t_graph = _ms(g.update)
    n_docs = store.counts()["documents"]
    n_edges, _stubs = store.edges.size()
    print(f"corpus: {n_docs} documents, {store.counts()['links']} links, {n_edges} edges; "
          f"pipeline (no graph, no embeddings) {t_index:.2f} s")
    print(f"full build: resolve_links(None) {t_resolve:.0f} ms, update() {t_graph:.0f} ms")

    leaf = next(p for p in sorted(roots[-1].rglob("*.md")) if p.stat().st_size > 2000)
    hub_path = next(p for _d, p, _n in store.edges.top_linked(50) if p.endswith(".md"))
    hub = next(r / hub_path for r in roots if (r / hub_path).is_file())
    for label, note in (("a leaf note", leaf), ("the most linked-to note", hub)):
        _one_file(label, note, store, indexer, g, args.repeat)
    c.close()
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
