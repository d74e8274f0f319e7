"""The graph page's data stays readable: a 2-hop neighbourhood of 220+ nodes is cut to
the 60 nearest, best-connected ones (the note asked for first) with the number left out,
each node carrying its degree; the facet column says what its counts are over."""

from __future__ import annotations

import json
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_pages import doc_id, get

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.web.graph_cap import MAX_NODES, cap_graph
from conftest import Serve, Vault


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Serve, Vault]]:
    """A hub note linking to 110 notes, each linking to a leaf of its own: 221 notes
    within two hops of the hub."""
    base = tmp_path_factory.mktemp("hub")
    folder = base / "notes"
    folder.mkdir()
    links = "\n".join(f"- [[spoke-{i:03d}]]" for i in range(110))
    (folder / "hub.md").write_text(f"# Hub\n\ngraphcap hub\n\n{links}\n", encoding="utf-8")
    for i in range(110):
        (folder / f"spoke-{i:03d}.md").write_text(
            f"# Spoke {i}\n\ngraphcap spoke [[leaf-{i:03d}]]\n", encoding="utf-8")
        (folder / f"leaf-{i:03d}.md").write_text(f"# Leaf {i}\n\ngraphcap leaf\n",
                                                 encoding="utf-8")
    config = base / "cairn.toml"
    config.write_text("", encoding="utf-8")
    db = base / "i.db"
    with Cairn(load_config(db=db, config_file=config, env={"CAIRN_EMBED": "none"})) as c:
        c.index([folder])
    vault = Vault(folder, db, config)
    srv = Serve(vault)
    yield srv, vault
    srv.stop()


def test_a_large_neighbourhood_is_cut_to_the_nearest_best_connected_nodes(
        hub: tuple[Serve, Vault]) -> None:
    srv, vault = hub
    center = doc_id(vault, "hub.md")
    with Cairn(load_config(db=vault.db), create=False) as c:
        full = json.loads(c.graph.export("cytoscape", around=center, hops=2))
    assert len(full["elements"]["nodes"]) > 220
    url = f"{srv.url}/ui/graph.json?node={urllib.parse.quote(center)}&hops=2"
    with urllib.request.urlopen(url, timeout=60) as r:
        data = json.loads(r.read())
    nodes = data["elements"]["nodes"]
    assert len(nodes) == MAX_NODES
    assert data["total"] == len(full["elements"]["nodes"])
    assert data["hidden"] == data["total"] - MAX_NODES
    ids = {n["data"]["id"] for n in nodes}
    assert any(center in (n["data"]["id"], n["data"].get("document_id")) for n in nodes)
    assert all(e["data"]["source"] in ids and e["data"]["target"] in ids
               for e in data["elements"]["edges"])
    assert all(isinstance(n["data"]["degree"], int) for n in nodes)
    # no leaf two hops out is kept while a spoke one hop out is left out
    titles = [n["data"]["label"] for n in nodes]
    assert not any(t.startswith("Leaf") for t in titles)


def test_a_small_neighbourhood_is_kept_whole() -> None:
    data = {"elements": {"nodes": [{"data": {"id": "a"}}, {"data": {"id": "b"}}],
                         "edges": [{"data": {"source": "a", "target": "b"}}]}}
    out = cap_graph(data, "a")
    assert out["hidden"] == 0 and len(out["elements"]["edges"]) == 1
    assert [n["data"]["degree"] for n in out["elements"]["nodes"]] == [1, 1]


def test_facet_counts_say_how_many_candidates_they_count(hub: tuple[Serve, Vault]) -> None:
    srv, _ = hub
    status, _, html = get(srv, "/ui/hits?q=graphcap")
    assert status == 200 and "hits" in html
    assert "counts over the top 200 candidates" in html
    status, _, html = get(srv, "/ui/hits?q=graphcap+hub&mode=keyword")
    assert status == 200 and "counts over the top 200 candidates" in html
    status, _, html = get(srv, "/ui/hits?q=%22graphcap+hub%22&mode=keyword")
    assert status == 200 and "counts over all 1 candidate<" in html
