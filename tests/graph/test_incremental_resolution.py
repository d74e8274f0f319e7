"""Incremental link resolution and edge updates give exactly what a full build gives.

The pipeline still calls ``resolve_all`` (everything) after a run; here it is switched
off and the indexer is run on its own, so that, as the rewired pipeline will, each run
is followed by ``resolve_links(store, changed, removed)`` and
``GraphService.update(changed, removed)`` with the documents the run touched. After
each edit — add a note, rename one, delete one, change the heading an anchor points
at, move an Org ``ID``, add an alias, add an attachment, make a name ambiguous — the
links (with their resolutions), edges and stubs equal those of a fresh index of the
same folder, built from scratch.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cairn.formats.markdown")
pytest.importorskip("cairn.formats.org")

from cairn.app import Cairn
from cairn.graph.resolve import resolve_links
from cairn.graph.service import GraphService
from cairn.ingest import pipeline
from cairn.ingest.pipeline import Indexer
from cairn.redact.fingerprint import index_config_hash

FILES = {
    "alpha.md": "---\nrelated: [Gamma]\n---\n# Alpha\n\nSee [[Beta]], [[Beta#Part two]], "
    "[[Gamma|g]], [[Nope]] and ![[pic.png]].\n",
    "beta.md": "# Beta\n\n## Part one\n\nOne.\n\n## Part two\n\nTwo, see [[alpha]].\n",
    "gamma.md": "# Gamma\n\nLinks [[sub/delta]] and [[Old Name]].\n",
    "sub/delta.md": "# Delta\n\n[[../alpha|up]] and [delta](../beta.md#part-one).\n",
    "tasks.org": "#+title: Tasks\n\n* Plan\n:PROPERTIES:\n"
    ":ID: 11111111-aaaa-4bbb-8ccc-000000000001\n:END:\n"
    "See [[file:gamma.md][gamma]] and [[file:notes.org::*Ideas][ideas]].\n",
    "notes.org": "#+title: Notes\n\n* Ideas\nBack to [[id:11111111-aaaa-4bbb-8ccc-000000000001]] "
    "and [[id:22222222-aaaa-4bbb-8ccc-000000000002][later]].\n",
}


def _state(c: Cairn) -> tuple[dict[Any, Any], dict[str, Any], set[Any]]:
    links = {
        (lk.unit_id, lk.ordinal): (lk.raw, lk.resolved_document_id, lk.resolved_unit_id,
                                   lk.unresolved_reason)
        for lk in c.store.links_from(None)
    }
    edges = {e.id: (e.source, e.target, e.relation, e.origin, e.weight, e.count, e.links,
                    e.evidence, e.source_document_id, e.target_document_id)
             for e in c.store.edges.all_edges()}
    stubs = {(n.id, n.kind, n.title, n.target) for n in
             c.store.edges.nodes(i for i in c.store.edges.node_ids()
                                 if i.startswith("stub:")).values()}
    return links, edges, stubs


class Incremental:
    """An index kept up to date the incremental way, beside fresh full builds."""

    def __init__(self, root: Path, tmp: Path) -> None:
        self.root, self.tmp, self.n = root, tmp, 0
        self.c = Cairn.open(db=tmp / "incremental.db")
        self.g = GraphService(self.c.store)
        self.c.graph_service = self.g
        self.c.index([root])
        self.resolved: list[int] = []

    def write(self, rel: str, text: str) -> None:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")

    def run(self) -> None:
        """One index run of the pipeline alone (no link resolution, no graph update)."""
        store = self.c.store
        Indexer(store, config_hash=index_config_hash(self.c.config)).run(store.roots())

    def step(self) -> None:
        store = self.c.store
        self.run()
        changed, removed = store.edges.changed_documents()
        self.resolved.append(resolve_links(store, changed, removed))
        report = self.g.update(changed, removed)
        assert report.changed_documents == len(changed)
        self.n += 1
        fresh = Cairn.open(db=self.tmp / f"full{self.n}.db")
        try:
            fresh.index([self.root])
            resolve_links(fresh.store, None, None)  # everything (resolve_all is off)
            GraphService(fresh.store).rebuild()
            got, want = _state(self.c), _state(fresh)
            for name, a, b in zip(("links", "edges", "stubs"), got, want, strict=True):
                if isinstance(a, dict):
                    diff = {k: (a.get(k), b.get(k)) for k in set(a) | set(b)
                            if a.get(k) != b.get(k)}
                else:
                    diff = {"extra": a - b, "missing": b - a}
                assert a == b, f"step {self.n}: {name} differ: {diff}"
        finally:
            fresh.close()


@pytest.fixture
def inc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Incremental]:
    root = tmp_path / "vault"
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    first = Incremental(root, tmp_path)  # the first run resolves everything
    monkeypatch.setattr(pipeline, "resolve_links", lambda store, changed, removed: 0)
    yield first
    first.c.close()


def test_edits_match_a_full_build(inc: Incremental) -> None:
    inc.step()  # nothing changed
    assert inc.resolved[-1] == 0
    inc.write("Nope.md", "# Nope\n\nNow it exists.\n")  # add: an unresolved link resolves
    inc.step()
    assert inc.resolved[-1] >= 1
    (inc.root / "gamma.md").rename(inc.root / "Old Name.md")  # rename
    inc.step()
    (inc.root / "sub" / "delta.md").unlink()  # delete
    inc.step()
    # change the heading an anchor points at
    inc.write("beta.md", "# Beta\n\n## Part one\n\nOne.\n\n## Part 2\n\nTwo.\n")
    inc.step()
    inc.write("beta.md", "# Beta\n\n## Part one\n\nOne.\n\n## Part two\n\nBack.\n")
    inc.step()
    # an Org ID moves to another file (in two runs: within one run the unit id the
    # pipeline gives depends on the order files are indexed); an unknown one appears
    inc.write("tasks.org", "#+title: Tasks\n\n* Plan\nNo id here now.\n")
    inc.step()
    inc.write("later.org", "* Later\n:PROPERTIES:\n:ID: 11111111-aaaa-4bbb-8ccc-000000000001\n"
              ":END:\n* Much later\n:PROPERTIES:\n:ID: 22222222-aaaa-4bbb-8ccc-000000000002\n"
              ":END:\n")
    inc.step()
    # an alias, an attachment, and a second note of the same name in a folder
    inc.write("zeta.md", "---\naliases: [Gamma]\n---\n# Zeta\n")
    (inc.root / "pic.png").write_bytes(b"\x89PNG\r\n")
    inc.write("deep/Beta.md", "# Deep beta\n\nlinks [[Beta]] and [[Nope]]\n")
    inc.step()
    (inc.root / "Nope.md").unlink()
    (inc.root / "pic.png").unlink()
    inc.step()


def test_a_one_file_change_touches_only_its_neighbourhood(inc: Incremental) -> None:
    store = inc.c.store
    inc.write("unrelated.md", "# Unrelated\n\nNo links at all.\n")
    inc.run()
    changed, removed = store.edges.changed_documents()
    assert len(changed) == 1 and not removed
    resolve_links(store, changed, removed)
    assert store.edges.dirty() == set(changed)  # nobody's links could name it
    inc.write("unrelated.md", "# Unrelated\n\nNow [[Beta]].\n")
    inc.run()
    changed, removed = store.edges.changed_documents()
    resolve_links(store, changed, removed)
    report = inc.g.update(changed, removed)
    assert report.changed_documents == 1
    assert report.written["declared"] == 1 and report.deleted["declared"] == 0
