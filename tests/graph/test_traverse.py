"""Traversal on the small vault drawn in ``conftest.py`` (plus two orphans here):
neighbours, backlinks, shortest paths, subgraphs, orphans, statistics, references."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

pytest.importorskip("cairn.formats.markdown")
pytest.importorskip("cairn.formats.org")

from cairn.errors import NotFound, QueryError
from cairn.model.graph_results import Neighbors


@pytest.fixture
def vault(make_vault: Any, small_files: dict[str, str]) -> Any:
    # lonely.md links only to a missing note; self.md only to its own heading:
    # neither counts as connected, so both are orphans.
    small_files["lonely.md"] = "# Lonely\n\nSee [[Nowhere else]].\n"
    small_files["self.md"] = "# Self\n\n## A\n\nSee [[#B]].\n\n## B\n\nB.\n"
    return make_vault(small_files)


def _labels(v: Any, data: Neighbors) -> set[str]:
    return {v.label(n.node.id) for n in data.neighbors}


def test_neighbors_one_hop_with_filters(vault: Any) -> None:
    g = vault.graph
    declared = g.neighbors("alpha.md", origins=["declared"])
    assert _labels(vault, declared) == {
        "beta.md#", "gamma.md#", "stub:Nowhere", "gamma.md#Part two", "stub:Missing Note",
        "sub/delta.md#", "stub:pic.png", "tasks.org#Other",
    }
    out = g.neighbors("alpha.md", origins=["declared"], direction="out")
    assert _labels(vault, out) == _labels(vault, declared) - {"tasks.org#Other"}
    refs = g.neighbors("alpha.md", relations=["references"])
    assert _labels(vault, refs) == {"beta.md#", "gamma.md#", "sub/delta.md#", "tasks.org#Other"}
    inbound = g.neighbors("alpha.md", relations=["references"], direction="in")
    assert _labels(vault, inbound) == {"tasks.org#Other"}
    (via,) = [n.via for n in inbound.neighbors]
    assert (via.relation, via.origin, via.forward) == ("references", "declared", False)
    structural = g.neighbors(vault.uid("sub/delta.md#Delta"), origins=["structural"])
    assert _labels(vault, structural) == {"sub/delta.md#"}


def test_neighbors_two_hops(vault: Any) -> None:
    data = vault.graph.neighbors("sub/delta.md", hops=2, origins=["declared"])
    by_hop: dict[int, set[str]] = {}
    for n in data.neighbors:
        by_hop.setdefault(n.hop, set()).add(vault.label(n.node.id))
    assert by_hop == {
        1: {"alpha.md#Alpha"},
        2: {"beta.md#", "gamma.md#Part two", "stub:Missing Note"},
    }


def test_symmetric_implicit_edges_are_walked_both_ways(vault: Any) -> None:
    for a, b in (("alpha.md", "beta.md#"), ("beta.md", "alpha.md#")):
        for direction in ("out", "in", "both"):
            data = vault.graph.neighbors(a, relations=["shares_tag"], direction=direction)
            assert b in _labels(vault, data), (a, direction)


def test_backlinks_are_the_reverse_of_declared_edges(vault: Any) -> None:
    g = vault.graph
    beta = g.backlinks("beta.md")
    assert {(vault.label(b.source.id), b.relations, b.count) for b in beta.backlinks} == {
        ("alpha.md#", ("depends_on",), 1),
        ("alpha.md#Alpha", ("references",), 2),
    }
    assert (beta.count, beta.sources) == (3, 1)
    gamma = g.backlinks(str(vault.root / "gamma.md"))  # an absolute path works too
    assert {(vault.label(b.source.id), vault.label(b.target.id))
            for b in gamma.backlinks} == {
        ("alpha.md#", "gamma.md#"),
        ("alpha.md#Alpha", "gamma.md#Part two"),
        ("alpha.md#Section A", "gamma.md#"),
        ("tasks.org#Plan", "gamma.md#"),
    }
    assert (gamma.count, gamma.sources) == (4, 2)
    # PATH:LINE names one heading: gamma.md line 9 is in "Part two"
    part_two = g.backlinks("gamma.md:9")
    assert [vault.label(b.source.id) for b in part_two.backlinks] == ["alpha.md#Alpha"]
    # a stub's backlinks: the notes that want the missing note
    (stub,) = [i for i, (_k, label, _t) in vault.stubs().items() if label == "Missing Note"]
    assert [vault.label(b.source.id) for b in g.backlinks(stub).backlinks] == [
        "alpha.md#Alpha"]
    # links inside the node set are left out unless asked for
    assert g.backlinks("tasks.org").count == 0
    assert g.backlinks("tasks.org", include_internal=True).count == 2


def test_shortest_path(vault: Any) -> None:
    g = vault.graph
    p = g.path("sub/delta.md", "tasks.org")
    assert p.length == 3
    steps = [s.step for s in p.steps]
    assert vault.label(steps[0].frm).startswith("sub/delta.md#")
    assert vault.label(steps[-1].to).startswith("tasks.org#")
    for a, b in itertools.pairwise(steps):
        assert a.to == b.frm
    assert [(s.from_node.id, s.to_node.id) for s in p.steps] == [(s.frm, s.to) for s in steps]
    declared = g.path("tasks.org:13", "gamma.md:9", origins=["declared"])  # Other → Part two
    assert declared.length == 4
    assert [s.step.relation for s in declared.steps] == [
        "references", "depends_on", "references", "embeds"]
    assert [s.step.forward for s in declared.steps] == [True, True, False, True]
    assert g.path("sub/delta.md", "tasks.org", direction="out").length is None
    assert g.path("alpha.md", "alpha.md").length == 0


def test_subgraph(vault: Any) -> None:
    sub = vault.graph.subgraph("beta.md", origins=["declared"])
    assert {vault.label(n["id"]) for n in sub.nodes} == {
        "beta.md#", "beta.md#Beta", "alpha.md#", "alpha.md#Alpha"}
    assert {(vault.label(e["source"]), e["relation"], vault.label(e["target"]))
            for e in sub.edges} == {
        ("alpha.md#", "depends_on", "beta.md#"),
        ("alpha.md#Alpha", "references", "beta.md#"),
    }


def test_orphans(vault: Any) -> None:
    assert [(o.path, o.unresolved_links) for o in vault.graph.orphans()] == [
        ("lonely.md", 1), ("self.md", 0)]


def test_stats(vault: Any) -> None:
    s = vault.graph.stats()
    # units: alpha 4, beta 2, gamma 4, delta 2, tasks 4, lonely 2, self 4
    assert (s.nodes.units, s.nodes.stubs, s.nodes.documents) == (22, 5, 7)
    assert s.by_relation == {
        "references": 7,  # 6 in the small vault + self.md's [[#B]]
        "embeds": 1, "depends_on": 1, "related": 1, "part_of": 1,
        "unresolved": 5, "parent": 15, "next": 4, "previous": 4, "shares_tag": 2,
        "shares_property": 3,
    }
    assert s.edges == sum(s.by_relation.values())
    assert s.unresolved_links == 5
    assert sum(s.degree.histogram.values()) == 22 + 5
    # the small vault is one component; lonely.md (+ its stub) and self.md are two more
    c = s.components
    assert (c.count, c.largest, c.isolated) == (3, 20, 0)
    assert s.top_linked[0].path in ("alpha.md", "gamma.md")


def test_references(vault: Any) -> None:
    g = vault.graph
    doc = g.resolve("beta.md")
    assert len(doc.ids) == 2 and doc.path == "beta.md"
    assert g.resolve(doc.ids[1]).ids == (doc.ids[1],)
    assert g.resolve(doc.document_id).ids == doc.ids
    assert g.resolve(doc.ids[1][:12]).ids == (doc.ids[1],)
    with pytest.raises(NotFound):
        g.resolve("no/such/file.md")
    with pytest.raises(QueryError):
        g.neighbors("beta.md", hops=0)
