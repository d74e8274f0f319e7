"""The JSON of the graph's typed results (``cairn graph … --json``, ``/v1/graph/…``, the
MCP graph tools) keeps its keys, their order and their kinds: pinned here, as a shape,
on the small vault of ``conftest.py`` (plus an orphan and a missing link), through the
real CLI."""

from __future__ import annotations

import json
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

pytest.importorskip("cairn.formats.markdown")
pytest.importorskip("cairn.formats.org")

from cairn.interfaces.cli.graph import graph_app
from cairn.model.serialize import to_data

REF = "{ids:[str],label:str,document_id:str,path:str}"
STUB = "{id:str,type:str,title:str,kind:str,target:str,reason:str,document_id:null,path:null}"
STEP = "edge_id:str,from:str,to:str,relation:str,origin:str,weight:float,direction:str"


def unit(doc_type: str = "null", outline: str = "[]") -> str:
    """The shape of a unit node (``doc_type`` and ``outline_path`` vary by node)."""
    return ("{id:str,type:str,title:str,kind:str,document_id:str,doc_title:str,"
            f"doc_type:{doc_type},path:str,abs_path:str,line:int,outline_path:{outline}}}")


def items(*shapes: str) -> str:
    """A list holding items of these shapes (as :func:`shape` writes it)."""
    return "[" + "|".join(sorted(set(shapes))) + "]"


def shape(value: Any) -> str:
    """``value``'s keys in order and the kinds of its values; a list shows the distinct
    shapes of its items, sorted."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{shape(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + "|".join(sorted({shape(v) for v in value})) + "]"
    return "null" if value is None else type(value).__name__


@pytest.fixture
def cli(make_vault: Any, small_files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """``cli(ARGS…)``: the parsed ``--json`` output of ``cairn graph ARGS``, and the
    vault's ``Cairn`` as ``cli.cairn``."""
    small_files["lonely.md"] = "# Lonely\n\nSee [[Nowhere else]].\n"
    vault = make_vault(small_files)
    app = typer.Typer()
    app.add_typer(graph_app, name="graph")
    monkeypatch.chdir(vault.root)
    db = str(vault.cairn.config.db_path)

    def run(*args: str, code: int = 0) -> Any:
        res = CliRunner().invoke(app, ["graph", *args, "--json", "--db", db])
        assert res.exit_code == code, res.output
        return json.loads(res.stdout)

    run.cairn = vault.cairn  # type: ignore[attr-defined]
    return run


def test_neighbors_json(cli: Any) -> None:
    data = cli("neighbors", "alpha.md", "--hops", "2")
    nodes = [unit(t, o) for t in ("null", "str") for o in ("[]", "[str]")] + [STUB]
    assert shape(data) == "{node:" + REF + ",neighbors:" + items(
        *(f"{{node:{n},hop:int,via:{{{STEP}}}}}" for n in nodes)) + "}"
    assert data == to_data(cli.cairn.graph.neighbors("alpha.md", hops=2))


def test_backlinks_json(cli: Any) -> None:
    data = cli("backlinks", "gamma.md")
    rest = ",relations:[str],count:int,lines:{},edge_ids:[str]}}"
    assert shape(data) == "{node:" + REF + ",count:int,sources:int,backlinks:" + items(
        "{source:" + unit() + ",target:" + unit() + rest.format("[]"),
        "{source:" + unit(outline="[str]") + ",target:" + unit() + rest.format("[int]"),
        "{source:" + unit(outline="[str]") + ",target:" + unit(outline="[str]")
        + rest.format("[int]"),
    ) + "}"
    # the source's line is that of its first link to the target
    assert all(b["source"]["line"] == b["lines"][0] for b in data["backlinks"] if b["lines"])
    assert data == to_data(cli.cairn.graph.backlinks("gamma.md"))


def test_path_json(cli: Any) -> None:
    data = cli("path", "sub/delta.md", "tasks.org")
    # which of the shortest paths is walked may vary: each step has one of these shapes
    units = [unit(t, o) for t in ("null", "str") for o in ("[]", "[str]")]
    steps = {"{" + STEP + f",from_node:{a},to_node:{b}}}" for a in units for b in units}
    assert {shape(s) for s in data["steps"]} <= steps
    assert shape({**data, "steps": []}) == (
        "{from:" + REF + ",to:" + REF + ",length:int,steps:[]}")
    assert data["length"] == len(data["steps"]) == 3
    assert data == to_data(cli.cairn.graph.path("sub/delta.md", "tasks.org"))
    none = cli("path", "sub/delta.md", "tasks.org", "--directed", code=1)
    assert shape(none) == "{from:" + REF + ",to:" + REF + ",length:null,steps:[]}"


def test_orphans_json(cli: Any) -> None:
    data = cli("orphans")
    assert shape(data) == ("[{document_id:str,title:str,path:str,abs_path:str,format:str,"
                           "unresolved_links:int}]")
    assert [(o["path"], o["unresolved_links"]) for o in data] == [("lonely.md", 1)]
    assert data == to_data(cli.cairn.graph.orphans())


def test_stats_json(cli: Any) -> None:
    data = cli("stats")
    assert shape(data) == (
        "{nodes:{units:int,stubs:int,documents:int},edges:int,"
        "by_relation:{depends_on:int,embeds:int,next:int,parent:int,part_of:int,previous:int,"
        "references:int,related:int,shares_property:int,shares_tag:int,unresolved:int},"
        "by_origin:{declared:int,implicit:int,structural:int},unresolved_links:int,"
        "degree:{max:int,mean:float,histogram:{1:int,2:int,3-5:int,6-10:int}},"
        "components:{count:int,largest:int,isolated:int},"
        "top_linked:[{document_id:str,path:str,linking_documents:int}]}")
    assert data == to_data(cli.cairn.graph.stats())


def test_unresolved_json(cli: Any) -> None:
    data = cli("unresolved")
    assert shape(data) == ("[{path:str,abs_path:str,line:int,kind:str,target:str,"
                           "anchor:null,raw:str,reason:str}]")
    assert {u["target"] for u in data} >= {"Nowhere else", "Missing Note"}
    assert data == to_data(cli.cairn.maintain.unresolved_links())


def test_subgraph_json_is_the_node_link_export_around_the_node(cli: Any) -> None:
    data = cli("export", "--around", "alpha.md", "--format", "json")
    assert list(data) == ["directed", "multigraph", "graph", "nodes", "edges"]
    assert data["nodes"] and data["edges"]
    assert all("key" in e and "id" not in e for e in data["edges"])
    assert data == to_data(cli.cairn.graph.subgraph("alpha.md"))
