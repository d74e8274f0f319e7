"""``cairn show 'note.md#^id'`` / ``'note.md#Heading'``: the unit an Obsidian anchor
names, the same unit its ``[[note#^id]]`` links resolve to."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.errors import NotFound
from cairn.model import UnitView


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
        back = c.backlinks(view.unit.document_id)
        assert [b.resolved_unit_id for b in back] == [view.unit.id]
