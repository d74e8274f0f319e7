"""NetworkX node-link import on a generated graph: a few hundred nodes, typed links,
plus the cases that cannot be mapped as is."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.memory.bundle import MemoryBundle
from cairn.memory.migrate import concept_path
from cairn.writeback import Backups


def _graph(n: int = 300) -> dict[str, object]:
    rng = random.Random(17)
    types = ["refines", "depends_on", "supports", "contradicts", "related"]
    nodes = [
        {"id": f"n{i}", "label": f"Topic {i}", "node_type": "Insight" if i % 3 else "Fact",
         "tags": [f"group{i % 7}"], "weight": i}
        for i in range(n)
    ]
    links = [
        {"source": f"n{i}", "target": f"n{rng.randrange(n)}", "type": types[i % 5]}
        for i in range(n)
    ]
    links = [x for x in links if x["source"] != x["target"]]
    return {"directed": True, "multigraph": False, "graph": {}, "nodes": nodes, "links": links}


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_import_generated_graph(tmp_path: Path, suffix: str) -> None:
    g = _graph()
    good_links = len(g["links"])  # type: ignore[arg-type]
    g["nodes"].append({"id": "odd", "node_type": "Mystery"})  # type: ignore[attr-defined]
    g["links"].extend([  # type: ignore[attr-defined]
        {"source": "n1", "target": "ghost", "type": "related"},
        {"source": "n2", "target": "n3", "type": "causes"},
    ])
    src = tmp_path / f"knowledge_graph{suffix}"
    if suffix == ".json":
        src.write_text(json.dumps(g))
    else:
        from ruamel.yaml import YAML

        YAML(typ="safe").dump(g, src)
    bundle = tmp_path / "mem"
    with Cairn(load_config(db=tmp_path / "i.db")) as cairn:
        rep = cairn.memory_import_graph(bundle, src)
        assert rep.concepts == 301
        assert rep.relations == good_links + 1  # "causes" imported as related
        reasons = {(u["id"], u["reason"]) for u in rep.unmapped}
        assert ("n1->ghost", "unknown node") in reasons
        assert ("n2->n3", "type 'causes' imported as 'related'") in reasons
        assert ("odd", "node type 'Mystery' imported as Fact") in reasons
        assert len(list((bundle / "concepts/active").glob("*.md"))) == 301
        b = MemoryBundle(bundle, Backups(tmp_path / "b"))
        e = b.read(concept_path("n5"))
        assert e.title == "Topic 5" and e.meta["attributes"] == {"weight": 5}
        assert e.meta["node_type"] == "Insight" and e.tags == ["group5"]
        # the relations are graph edges once indexed
        stats = cairn.graph_stats()
        assert stats["edges"] >= good_links
        diags = cairn.validate([bundle])
        assert not [d for d in diags if d["severity"] == "error"]
        again = cairn.memory_import_graph(bundle, src)  # never overwrites
        assert again.concepts == 0 and len(again.unmapped) >= 301
