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


@pytest.mark.slow  # writes 301 notes, each atomically and synced to disk: disk-bound
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
        rep = cairn.memory.import_graph(bundle, src)
        assert rep.concepts == 301
        assert rep.relations == good_links + 1  # "causes" imported as related
        reasons = {(u.id, u.reason) for u in rep.unmapped}
        assert ("n1->ghost", "unknown node") in reasons
        assert ("n2->n3", "type 'causes' imported as 'related'") in reasons
        assert ("odd", "node type 'Mystery' imported as Fact") in reasons
        assert len(list((bundle / "concepts/active").glob("*.md"))) == 301
        b = MemoryBundle(bundle, Backups(tmp_path / "b"))
        e = b.read(concept_path("n5"))
        assert e.title == "Topic 5" and e.meta["attributes"] == {"weight": 5}
        assert e.meta["node_type"] == "Insight" and e.tags == ["group5"]
        # the relations are graph edges once indexed
        stats = cairn.graph.stats()
        assert stats.edges >= good_links
        diags = cairn.notes.validate([bundle])
        assert not [d for d in diags if d.severity == "error"]
        again = cairn.memory.import_graph(bundle, src)  # never overwrites
        assert again.concepts == 0 and len(again.unmapped) >= 301


def test_import_keeps_pinned_and_reports_a_non_boolean(tmp_path: Path) -> None:
    src = tmp_path / "g.json"
    src.write_text(json.dumps({"nodes": [
        {"id": "keep", "label": "Never decays", "pinned": True},
        {"id": "plain", "label": "May decay"},
        {"id": "odd", "label": "Pinned by a number", "pinned": 1},
    ], "links": []}))
    bundle = tmp_path / "mem"
    with Cairn(load_config(db=tmp_path / "i.db")) as cairn:
        rep = cairn.memory.import_graph(bundle, src)
        b = MemoryBundle(bundle, Backups(tmp_path / "b"))
        assert b.read(concept_path("keep")).meta["pinned"] is True
        assert b.read(concept_path("plain")).meta["pinned"] is False
        assert b.read(concept_path("odd")).meta["pinned"] is False
        assert ("odd", "pinned 1 imported as false") in {
            (u.id, u.reason) for u in rep.unmapped
        }
        assert "pinned" not in b.read(concept_path("keep")).meta.get("attributes", {})
        # a pinned concept never decays
        for _ in range(9):
            cairn.memory.maintain(bundle)
        assert (bundle / concept_path("keep")).is_file()
        assert not (bundle / concept_path("plain")).exists()


def test_dry_run_import_plans_into_a_new_folder_and_writes_nothing(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cairn.interfaces.cli import app

    src = tmp_path / "g.json"
    graph = _graph(5)
    graph["links"] = [*graph["links"], {"source": "n1", "target": "ghost"}]
    src.write_text(json.dumps(graph))
    bundle = tmp_path / "new" / "mem"
    res = CliRunner().invoke(app, ["--db", str(tmp_path / "i.db"), "memory", "import",
                                   str(src), "-b", str(bundle), "--dry-run", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["dry_run"] is True and data["concepts"] == 5
    assert data["unmapped"] == [{"what": "link", "id": "n1->ghost", "reason": "unknown node"}]
    assert not (tmp_path / "new").exists()
    # a folder that is not a bundle is still refused on a dry run
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "journal.md").write_text("# Journal\n")
    res = CliRunner().invoke(app, ["--db", str(tmp_path / "i.db"), "memory", "import",
                                   str(src), "-b", str(notes), "--dry-run", "--json"])
    assert res.exit_code != 0 and "journal.md" in res.output
    assert sorted(p.name for p in notes.iterdir()) == ["journal.md"]
