"""``PATH:LINE`` names the unit a search hit names with that line: a heading on line 1
of a file without a preamble is that heading, not the empty preamble ending there —
through ``cairn show``, the doors' ``get`` (HTTP, MCP) and the graph's node lookup."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.model import UnitView

Cli = Callable[..., Any]


@pytest.fixture
def notes(tmp_path: Path, cairn_cmd: Cli) -> tuple[Path, Path]:
    """A folder of a heading-first Org file and Markdown file, and its index."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "plain.org").write_text("* TODO Colon :x:\nhostileword zeta\n")
    (folder / "plainmd.md").write_text("# Top heading\nbody\n")
    db = tmp_path / "index.db"
    assert cairn_cmd("--db", str(db), "index", str(folder), "--no-embed").code == 0
    return folder, db


def test_show_file_line_one_is_the_heading_a_hit_names(
    notes: tuple[Path, Path], cairn_cmd: Cli
) -> None:
    folder, db = notes
    hit = cairn_cmd("--db", str(db), "search", "colon", "--mode", "keyword", "--json").json()
    assert hit["hits"][0]["path"] == "plain.org" and hit["hits"][0]["line_start"] == 1
    for name, title in (("plain.org", "Colon"), ("plainmd.md", "Top heading")):
        view = cairn_cmd("--db", str(db), "show", f"{folder / name}:1", "--json").json()
        assert view["unit"]["kind"] == "heading" and view["unit"]["title"] == title
        text = cairn_cmd("--db", str(db), "show", f"{folder / name}:1").stdout
        assert "preamble" not in text and title in text.splitlines()[0]


def test_the_doors_and_the_graph_resolve_line_one_the_same(notes: tuple[Path, Path]) -> None:
    folder, db = notes
    with Cairn.open(db=db) as cairn:
        view = cairn.doors.get(f"{folder / 'plain.org'}:1")
        assert isinstance(view, UnitView) and view.unit.title == "Colon"
        node = cairn.graph.resolve(f"{folder / 'plainmd.md'}:1")
        assert node.label == "Top heading"
