"""``cairn show 'note.md#^id'`` / ``'note.md#Heading'``: the unit an Obsidian anchor
names, the same unit its ``[[note#^id]]`` links resolve to."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.errors import NotFound
from cairn.model import BlockRef, UnitView


def test_show_an_anchored_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "note.md").write_text(
        "# Note\nIntro.\n## Part\n- a list item ^item1\n\nA paragraph ^para-2\n## Other\nx\n",
        encoding="utf-8",
    )
    (vault / "other.md").write_text("See [[note#^para-2]].\n", encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([vault])
        monkeypatch.chdir(vault)
        view = c.show("note.md#^para-2")
        assert isinstance(view, UnitView) and view.unit.title == "Part"
        assert c.show(f"{vault}/note.md#^ITEM1").unit.id == view.unit.id  # type: ignore[union-attr]
        other = c.show("note.md#other")
        assert isinstance(other, UnitView) and other.unit.title == "Other"
        with pytest.raises(NotFound, match="no block"):
            c.show("note.md#^missing")
        with pytest.raises(NotFound, match="no heading"):
            c.show("note.md#Nowhere")
        with pytest.raises(NotFound):
            c.show("absent.md#^x")
        # the link [[note#^para-2]] resolves to the same unit
        back = c.show(view.unit.document_id).backlinks
        assert [b.resolved_unit_id for b in back] == [view.unit.id]


NOTE = """\
# Reading
Intro.
## Quotes
- a list item about gardens ^item1
- second item
  about compost heaps ^item2

A paragraph on seed
saving over two lines ^seeds

| crop | month |
|---|---|
| kale | March |

^sowing

## Other
Compost again.
"""


def _vault(tmp_path: Path) -> tuple[Path, Path]:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "reading.md").write_text(NOTE, encoding="utf-8")
    (vault / "other.md").write_text("See [[reading#^seeds]] and [[reading#^sowing]].\n")
    return vault, tmp_path / "i.db"


def test_a_block_is_an_anchor_with_its_lines_and_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, db = _vault(tmp_path)
    with Cairn(Config(db_path=db)) as c:
        c.index([vault])
        monkeypatch.chdir(vault)
        view = c.show("reading.md#^seeds")
        assert isinstance(view, UnitView) and view.unit.title == "Quotes"
        assert view.block == BlockRef("seeds", 8, 9, "A paragraph on seed saving over two lines")
        item = c.show("reading.md#^item2")
        assert isinstance(item, UnitView) and item.block is not None
        assert (item.block.line_start, item.block.line_end) == (5, 6)
        # an id on a line of its own names the block before it (the table)
        table = c.show("reading.md#^sowing")
        assert isinstance(table, UnitView) and table.block is not None
        assert (table.block.line_start, table.block.line_end) == (11, 13)
        assert c.show("reading.md:8").block is None  # type: ignore[union-attr]
        # both links resolve to the section's unit, and their backlinks name the blocks
        back = c.show(view.unit.document_id).backlinks
        assert {(b.anchor, b.resolved_unit_id) for b in back} == {
            ("^seeds", view.unit.id), ("^sowing", view.unit.id)}


def test_a_hit_names_the_block_that_holds_its_words(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    vault, db = _vault(tmp_path)
    with Cairn(Config(db_path=db)) as c:
        c.index([vault])
        blocks = {h.title: h.block for h in c.search("compost", mode="keyword").hits}
        assert blocks == {"Quotes": "item2", "Other": None}
        hit = c.search("seed saving", mode="keyword").hits[0]
        assert (hit.title, hit.block) == ("Quotes", "seeds")
        assert c.search("kale", mode="keyword").hits[0].block == "sowing"
    env = {"CAIRN_EMBED": "none", "COLUMNS": None}
    res = cli("--db", str(db), "search", "--mode", "keyword", "seed saving", env=env)
    assert "reading.md:3 #^seeds" in res.stdout
    shown = cli("--db", str(db), "show", str(vault / "reading.md#^seeds"), env=env).stdout
    assert "block ^seeds  lines 8-9" in shown and "A paragraph on seed saving" in shown


def test_block_ids_change_no_unit_id(tmp_path: Path) -> None:
    """The same note with and without its block ids: the same units, ids and bodies
    (so memory, enrichment and edges that name a unit are untouched)."""
    plain = re.sub(r" ?\^[a-z0-9-]+$", "", NOTE, flags=re.MULTILINE)
    assert "^" not in plain
    ids = []
    folder = tmp_path / "v"
    folder.mkdir()
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        for text in (NOTE, plain):
            (folder / "reading.md").write_text(text, encoding="utf-8")
            c.index([folder])
            doc = c.store.documents_of_root(c.store.roots()[0].id)[0]
            ids.append([(u.id, u.title, u.body) for u in c.store.units_of(doc.id)])
    assert ids[0] == ids[1] and len(ids[0]) == 4
