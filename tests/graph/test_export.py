"""Graph export: node-link JSON and GraphML read back by NetworkX; Cytoscape.js elements."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cairn.errors import QueryError

pytest.importorskip("cairn.formats.markdown")
pytest.importorskip("cairn.formats.org")
nx = pytest.importorskip("networkx")

from cairn.export.graph import render  # noqa: E402


def _db_counts(v: Any) -> tuple[int, int]:
    es = v.cairn.store.edges
    return len(es.node_ids()), es.size()[0]


def test_node_link_json_reads_into_networkx(small: Any) -> None:
    data = json.loads(small.graph.export("json"))
    g = nx.node_link_graph(data)
    assert isinstance(g, nx.MultiDiGraph)
    assert (g.number_of_nodes(), g.number_of_edges()) == _db_counts(small)
    beta = small.uid("beta.md#")
    alpha_h = small.uid("alpha.md#Alpha")
    (attrs,) = [d for _u, _v, d in g.edges(alpha_h, data=True) if _v == beta]
    assert (attrs["relation"], attrs["origin"], attrs["count"]) == ("references", "declared", 2)
    assert g.nodes[beta]["path"] == "beta.md" and g.nodes[beta]["type"] == "unit"
    stubs = [n for n, d in g.nodes(data=True) if d["type"] == "stub"]
    assert len(stubs) == 4
    assert all(g.in_degree(s) >= 1 for s in stubs)


def test_graphml_reads_into_networkx(small: Any, tmp_path: Any) -> None:
    text = small.graph.export("graphml")
    p = tmp_path / "g.graphml"
    p.write_text(text, encoding="utf-8")
    g = nx.read_graphml(p)
    assert (g.number_of_nodes(), g.number_of_edges()) == _db_counts(small)
    rels = sorted(d["relation"] for _u, _v, d in g.edges(data=True))
    assert rels.count("unresolved") == 4 and rels.count("shares_property") == 3
    weights = [d["weight"] for _u, _v, d in g.edges(data=True)]
    assert all(isinstance(w, float) for w in weights)
    ev = next(json.loads(d["evidence"]) for _u, _v, d in g.edges(data=True)
              if d["relation"] == "embeds")
    assert ev[0]["raw"] == "![[Gamma#Part two]]"


def test_cytoscape_elements(small: Any) -> None:
    data = json.loads(small.graph.export("cytoscape"))
    nodes = data["elements"]["nodes"]
    edges = data["elements"]["edges"]
    assert (len(nodes), len(edges)) == _db_counts(small)
    ids = {n["data"]["id"] for n in nodes}
    assert all(e["data"]["source"] in ids and e["data"]["target"] in ids for e in edges)
    assert all(e["data"]["label"] == e["data"]["relation"] for e in edges)
    assert all(n["data"]["label"] for n in nodes)


def test_export_around_a_node_and_filters(small: Any) -> None:
    data = json.loads(small.graph.export("json", around="beta.md", origins=["declared"]))
    labels = {small.label(n["id"]) for n in data["nodes"]}
    assert labels == {"beta.md#", "beta.md#Beta", "alpha.md#", "alpha.md#Alpha"}
    assert len(data["edges"]) == 2
    only = json.loads(small.graph.export("json", relations=["unresolved"]))
    assert {e["relation"] for e in only["edges"]} == {"unresolved"}
    with pytest.raises(QueryError):
        small.graph.export("dot")


def test_xml_special_characters_survive(make_vault: Any, tmp_path: Any) -> None:
    v = make_vault({"a & b.md": "# Fish & chips\n\nSee [[c \"quoted\"]] and [[x < y]].\n"})
    p = tmp_path / "x.graphml"
    p.write_text(v.graph.export("graphml"), encoding="utf-8")
    g = nx.read_graphml(p)
    assert {d.get("label") for _n, d in g.nodes(data=True)} >= {
        "Fish & chips", 'c "quoted"', "x < y"}
    assert {d.get("path") for _n, d in g.nodes(data=True)} >= {"a & b.md"}
    assert render({"nodes": [], "edges": []}, "json").startswith("{")
