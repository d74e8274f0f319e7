"""A filter that matches many units of one file still lists the other files on its
first page: filter-only queries list in rounds over documents (each document's first
matching unit in path order, then each one's second), in the Python API and the CLI,
with and without ``--files``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import Config
from cairn.interfaces.cli import app


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """``a.org`` with twelve headings tagged ``:x:``, ``b.org`` and ``c.md`` with one
    each (``a`` sorts first, so path order alone would fill a page with ``a.org``)."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.org").write_text(
        "#+title: A\n\n" + "".join(f"* Part {i} :x:\nText {i}.\n" for i in range(12)),
        encoding="utf-8",
    )
    (root / "b.org").write_text("#+title: B\n\n* Only part :x:\nText.\n", encoding="utf-8")
    (root / "c.md").write_text("# C\n\nA note #x here.\n", encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
    return tmp_path


def test_a_tag_filter_lists_each_file_before_a_second_unit_of_any(vault: Path) -> None:
    with Cairn(Config(db_path=vault / "i.db")) as cairn:
        hits = cairn.search("tag:x", limit=10).hits
        assert [h.path for h in hits[:3]] == ["a.org", "b.org", "c.md"]
        assert [h.title for h in hits[3:]] == [f"Part {i}" for i in range(1, 8)]
        every = cairn.search("tag:x", limit=100).hits
        assert len(every) == 14
        # pages still join into one big page
        pages = [cairn.search("tag:x", limit=4, offset=o).hits for o in (0, 4, 8, 12)]
        assert [h.unit_id for p in pages for h in p] == [h.unit_id for h in every]


@pytest.mark.parametrize("files", [False, True])
def test_the_cli_shows_every_tagged_file_on_the_first_page(vault: Path, files: bool) -> None:
    args = ["search", "tag:x", "--limit", "5", "--json", "--db", str(vault / "i.db")]
    res = CliRunner().invoke(app, args + (["--files"] if files else []))
    assert res.exit_code == 0, res.output
    paths = json.dumps(json.loads(res.output))
    for name in ("a.org", "b.org", "c.md"):
        assert name in paths
