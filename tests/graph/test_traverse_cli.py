"""``cairn graph …`` (the Typer sub-app in ``cairn.interfaces.cli.graph``) on the small
vault of ``conftest.py``: each command with ``--json``, and the readable output."""

from __future__ import annotations

import json
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

pytest.importorskip("cairn.formats.markdown")
pytest.importorskip("cairn.formats.org")
nx = pytest.importorskip("networkx")

from cairn.interfaces.cli.graph import graph_app  # noqa: E402


@pytest.fixture
def cli(small: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run ``cairn graph ARGS --db <the small vault's index>``; returns a runner."""
    app = typer.Typer()
    app.add_typer(graph_app, name="graph")
    db = small.cairn.config.db_path
    monkeypatch.chdir(small.root)

    def run(*args: str, code: int = 0) -> Any:
        res = CliRunner().invoke(app, ["graph", *args, "--db", str(db)])
        assert res.exit_code == code, res.output
        return res

    return run


def test_backlinks_json_and_text(cli: Any) -> None:
    data = json.loads(cli("backlinks", "beta.md", "--json").stdout)
    assert (data["count"], data["sources"]) == (3, 1)
    text = cli("backlinks", "beta.md").stdout
    assert "Alpha" in text and "3 links from 1 documents" in text


def test_neighbors_path_orphans_stats(cli: Any) -> None:
    nb = json.loads(cli("neighbors", "sub/delta.md", "--hops", "2", "-o", "declared",
                        "--json").stdout)
    assert {n["hop"] for n in nb["neighbors"]} == {1, 2}
    p = json.loads(cli("path", "sub/delta.md", "tasks.org", "--json").stdout)
    assert p["length"] == 3
    cli("path", "sub/delta.md", "tasks.org", "--directed", "--json", code=1)
    assert json.loads(cli("orphans", "--json").stdout) == []
    st = json.loads(cli("stats", "--json").stdout)
    assert st["by_relation"]["unresolved"] == 4
    assert "components" in cli("stats").stdout


def test_export_and_errors(cli: Any, tmp_path: Any) -> None:
    g = nx.node_link_graph(json.loads(cli("export", "--json").stdout))
    assert g.number_of_edges() > 30
    out = tmp_path / "g.graphml"
    cli("export", "--format", "graphml", "--output", str(out))
    assert nx.read_graphml(out).number_of_nodes() == g.number_of_nodes()
    err = json.loads(cli("backlinks", "nope.md", "--json", code=1).stdout)
    assert err["type"] == "NotFound"
    cli("export", "--format", "dot", code=2)


def test_graph_commands_go_through_cairn(small: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ``cairn graph`` command is one ``Cairn`` method; bad arguments are
    ``QueryError`` (exit 2), never a bare ``ValueError``."""
    from cairn.errors import QueryError

    monkeypatch.chdir(small.root)
    c = small.cairn
    assert c.graph.backlinks("beta.md").count == 3
    assert {n.hop for n in c.graph.neighbors("sub/delta.md", hops=2,
                                             origins=["declared"]).neighbors} == {1, 2}
    assert c.graph.path("sub/delta.md", "tasks.org").length == 3
    assert c.graph.orphans() == []
    assert c.graph.stats().by_relation["unresolved"] == 4
    assert json.loads(c.graph.export("json"))["nodes"]
    with pytest.raises(QueryError):
        c.graph.neighbors("beta.md", direction="sideways")
    with pytest.raises(QueryError):
        c.graph.export("dot")


def test_existing_attachments_are_files_not_missing(make_vault: Any, monkeypatch: Any) -> None:
    """An embedded ``.base`` or image that exists is shown as a file by ``neighbors``
    and makes its note linked (not an orphan); a missing one stays "missing"."""
    v = make_vault({
        "a.md": "# A\n\n![[Books.base#Author]]\n\n![[pic.png]]\n\n![[Gone.base]]\n",
        "Bases/Books.base": "views: []\n",
        "Attachments/pic.png": "png",
        "lonely.md": "# Lonely\n\nno links\n",
    })
    app = typer.Typer()
    app.add_typer(graph_app, name="graph")
    monkeypatch.chdir(v.root)
    db = str(v.cairn.config.db_path)
    res = CliRunner().invoke(app, ["graph", "neighbors", "a.md", "--db", db])
    assert res.exit_code == 0, res.output
    assert "missing Gone.base" in res.output
    assert "missing Books.base" not in res.output and "file Books.base" in res.output
    assert "missing pic.png" not in res.output and "file pic.png" in res.output
    res = CliRunner().invoke(app, ["graph", "orphans", "--json", "--db", db])
    assert [o["path"] for o in json.loads(res.stdout)] == ["lonely.md"]
