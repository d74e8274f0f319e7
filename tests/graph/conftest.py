"""Fixtures for the graph tests: write a small vault, index it with the real pipeline,
build the graph, and name nodes readably (``path#Heading``; ``path#`` is the preamble)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.export.graph import render
from cairn.graph.service import GraphService


@dataclass
class Vault:
    """An indexed vault with its graph."""

    root: Path
    cairn: Cairn
    graph: GraphService

    def write(self, rel: str, text: str) -> None:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")

    def reindex(self) -> None:
        self.cairn.index([self.root])
        self.graph.update()

    def label(self, node: str) -> str:
        es = self.cairn.store.edges
        n = es.nodes([node]).get(node)
        if n is None:
            return f"?{node}"
        if n.type == "stub":
            return f"stub:{n.title}"
        shape = es.unit_shapes([node])[node]
        return f"{n.path}#{n.title if shape.ordinal else ''}"

    def uid(self, label: str) -> str:
        path, _, title = label.partition("#")
        es = self.cairn.store.edges
        for root in self.cairn.store.roots():
            for doc in es.documents_at_path(root.id, path):
                nodes = es.nodes(doc.unit_ids)
                for i, u in enumerate(doc.unit_ids):
                    first = i == 0
                    if (not title and first) or (title and not first
                                                 and nodes[u].title == title):
                        return u
        raise KeyError(label)

    def stubs(self) -> dict[str, tuple[str, str, str | None]]:
        """``stub id -> (kind, label, target)`` of every stub node."""
        es = self.cairn.store.edges
        ids = [i for i in es.node_ids() if i.startswith("stub:")]
        return {i: (n.kind, n.title, n.target) for i, n in es.nodes(ids).items()}

    def edges(
        self, origin: str | None = None, relation: str | None = None
    ) -> set[tuple[str, str, str]]:
        return {
            (self.label(e.source), e.relation, self.label(e.target))
            for e in self.cairn.store.edges.all_edges(
                origins=[origin] if origin else None, relations=[relation] if relation else None)
        }

    def edge_rows(self, origin: str | None = None) -> list[dict[str, object]]:
        out = []
        for e in self.cairn.store.edges.all_edges(origins=[origin] if origin else None):
            d: dict[str, object] = {
                "id": e.id, "source": e.source, "target": e.target, "relation": e.relation,
                "origin": e.origin, "weight": e.weight, "count": e.count, "links": e.links,
                "evidence": [dict(x) for x in e.evidence],
                "source_document_id": e.source_document_id,
                "target_document_id": e.target_document_id,
            }
            d["src"] = self.label(e.source)
            d["tgt"] = self.label(e.target)
            out.append(d)
        return out


MakeVault = Callable[..., Vault]

# The small vault most graph tests share. Its graph, drawn by hand (``#`` alone is a
# file's preamble unit, ``#Title`` a heading):
#
#   declared (links and relation metadata)
#     alpha.md#         -depends_on->  beta.md#           front matter depends_on: "[[Beta]]"
#     alpha.md#         -related->     gamma.md#          front matter related: [gamma, …]
#     alpha.md#         -unresolved->  stub:Nowhere       … Nowhere (no such note)
#     alpha.md#Alpha    -references->  beta.md#           [[Beta]] and [[beta|again]] (2 links)
#     alpha.md#Alpha    -embeds->      gamma.md#Part two  ![[Gamma#Part two]]
#     alpha.md#Alpha    -unresolved->  stub:Missing Note  [[Missing Note]]
#     alpha.md#Alpha    -references->  sub/delta.md#      [delta](sub/delta.md)
#     alpha.md#Section A -references-> gamma.md#          [[Gamma]]
#     alpha.md#Section A -unresolved-> stub:pic.png       ![[pic.png]] (missing attachment)
#     tasks.org#Plan    -part_of->     gamma.md#          :PART_OF: [[file:gamma.md]]
#     tasks.org#Step one -references-> tasks.org#Plan     [[id:1111…][the plan]]
#     tasks.org#Step one -references-> tasks.org#Other    [[*Other]]
#     tasks.org#Other   -unresolved->  stub:id:dead0000…  [[id:dead0000…][gone]]
#     tasks.org#Other   -references->  alpha.md#          [[file:alpha.md][alpha]]
#   implicit
#     alpha.md# ~shares_tag~ beta.md#          garden (2 units carry it)
#     alpha.md# ~shares_tag~ tasks.org#        rare (2 units: alpha's and tasks' file tags)
#     alpha.md#, beta.md#, tasks.org#Plan ~shares_property~ each other: project = Apollo (3)
#   structural: every heading -parent-> its parent heading, top-level ones -> the preamble;
#     next/previous between siblings (alpha Section A/B, gamma Part one/two, tasks Plan/Other)
SMALL_VAULT: dict[str, str] = {
    "alpha.md": """---
tags: [garden, rare]
depends_on: "[[Beta]]"
related: [gamma, Nowhere]
project: Apollo
---
# Alpha

See [[Beta]] and [[beta|again]].
Also ![[Gamma#Part two]] and [[Missing Note]] and [delta](sub/delta.md).

## Section A

Back to [[Gamma]]. A picture: ![[pic.png]]

## Section B

Nothing here.
""",
    "beta.md": """---
tags: [garden]
project: apollo
type: project
owner: alpha
---
# Beta

Beta text.
""",
    "gamma.md": "# Gamma\n\n## Part one\n\nOne.\n\n## Part two\n\nTwo.\n",
    "sub/delta.md": "# Delta\n\nLonely, links nowhere.\n",
    "tasks.org": """#+title: Tasks
#+filetags: :rare:

* Plan
:PROPERTIES:
:ID:       11111111-aaaa-4bbb-8ccc-000000000001
:PROJECT:  Apollo
:PART_OF:  [[file:gamma.md]]
:END:
** Step one
Refers to [[id:11111111-aaaa-4bbb-8ccc-000000000001][the plan]] and [[*Other]].
* Other
Links [[id:dead0000-0000-4000-8000-000000000000][gone]] and [[file:alpha.md][alpha]].
""",
}


@pytest.fixture
def make_vault(tmp_path: Path) -> Iterator[MakeVault]:
    """``make_vault({"a.md": "...", ...}, **graph_kwargs) -> Vault`` (indexed, built)."""
    opened: list[Cairn] = []

    def make(files: dict[str, str], **kw: object) -> Vault:
        root = tmp_path / f"vault{len(opened)}"
        root.mkdir()
        for rel, text in files.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
        c = Cairn.open(db=tmp_path / f"index{len(opened)}.db")
        opened.append(c)
        g = GraphService(c.store, renderer=render, **kw)  # type: ignore[arg-type]
        c.graph_service = g  # Cairn.index updates the graph it holds: use these settings
        c.index([root])
        g.update()
        return Vault(root, c, g)

    yield make
    for c in opened:
        c.close()


@pytest.fixture
def small_files() -> dict[str, str]:
    """The text of :data:`SMALL_VAULT` (a copy, to extend in a test)."""
    return dict(SMALL_VAULT)


@pytest.fixture
def small(make_vault: MakeVault) -> Vault:
    """:data:`SMALL_VAULT`, indexed and built with the default graph settings."""
    return make_vault(SMALL_VAULT)
