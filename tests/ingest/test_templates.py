"""An Obsidian vault's template folders are not indexed (``[index] templates = "skip"``,
the default): the folder its core Templates plugin (``.obsidian/templates.json``) or the
Templater plugin names, in a vault at any depth of a root; ``"index"`` indexes them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.errors import ConfigError
from cairn.ingest.limits import IndexLimits
from cairn.sources import discover, source_file, template_folders

BOOK_TEMPLATE = '---\ncategories: "[[Books]]"\nauthor:\nrating:\n---\n## Notes\n'


def _vault(root: Path) -> Path:
    """``root/vaults/main`` is a vault whose templates live in ``Templates`` (core
    plugin) and ``Meta/Templater`` (Templater); ``root/plain`` is no vault."""
    vault = root / "vaults" / "main"
    (vault / ".obsidian" / "plugins" / "templater-obsidian").mkdir(parents=True)
    (vault / ".obsidian" / "templates.json").write_text(
        json.dumps({"folder": "Templates"}), encoding="utf-8")
    (vault / ".obsidian" / "plugins" / "templater-obsidian" / "data.json").write_text(
        json.dumps({"templates_folder": "Meta/Templater/", "other": 1}), encoding="utf-8")
    for rel, text in {
        "Templates/Book Template.md": BOOK_TEMPLATE,
        "Meta/Templater/Daily.md": "# {{date}}\n",
        "Meta/keep.md": "# Kept\n",
        "Books/Dune.md": '---\ncategories: "[[Books]]"\nauthor: Frank Herbert\n---\n# Dune\n',
    }.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    (root / "plain" / "Templates").mkdir(parents=True)
    (root / "plain" / "Templates" / "note.md").write_text("# Not a vault's template\n")
    return vault


def _paths(c: Cairn) -> set[str]:
    return {h.path for h in c.search("prop:categories", limit=50).hits} | {
        h.path for h in c.search("date kept template vault", limit=50, mode="keyword").hits
    }


def test_template_folders_of_a_vault(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    assert template_folders(vault) == ("Templates", "Meta/Templater")
    assert template_folders(tmp_path) == ()
    found = {f.relpath for f in discover(tmp_path).files}
    assert found == {"vaults/main/Meta/keep.md", "vaults/main/Books/Dune.md",
                     "plain/Templates/note.md"}
    everything = {f.relpath for f in discover(tmp_path, skip_templates=False).files}
    assert everything == found | {"vaults/main/Templates/Book Template.md",
                                  "vaults/main/Meta/Templater/Daily.md"}
    assert source_file(tmp_path, "vaults/main/Templates/Book Template.md") is None
    assert source_file(vault, "Meta/Templater/Daily.md") is None  # the vault as the root
    assert source_file(tmp_path, "vaults/main/Meta/keep.md") is not None
    assert source_file(tmp_path, "vaults/main/Templates/Book Template.md",
                       skip_templates=False) is not None


@pytest.mark.parametrize(
    "setting",
    ['{"folder": "../outside"}', '{"folder": "/etc"}', '{"folder": 7}', "not json",
     '["Templates"]', '{"folder": ""}', '{"folder": "."}'],
)
def test_a_bad_setting_names_no_folder(tmp_path: Path, setting: str) -> None:
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "templates.json").write_text(setting, encoding="utf-8")
    assert template_folders(tmp_path) == ()


def test_settings_behind_a_link_are_not_read(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "templates.json").write_text('{"folder": "Templates"}', encoding="utf-8")
    vault = tmp_path / "vault"
    (vault / "Templates").mkdir(parents=True)
    (vault / "Templates" / "t.md").write_text("# T\n", encoding="utf-8")
    os.symlink(elsewhere, vault / ".obsidian")
    assert template_folders(vault) == ()
    assert [f.relpath for f in discover(vault).files] == ["Templates/t.md"]


def test_index_skips_templates_and_removes_them_from_an_old_index(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    vault = _vault(notes)
    db = tmp_path / "i.db"
    with Cairn(Config(db_path=db, index={"templates": "index"})) as c:
        c.index([notes])
        assert "vaults/main/Templates/Book Template.md" in _paths(c)
    with Cairn(Config(db_path=db)) as c:  # the default: skip
        run = c.index([notes])
        assert run.removed == 2
        paths = _paths(c)
        assert "vaults/main/Books/Dune.md" in paths and "vaults/main/Meta/keep.md" in paths
        assert not any("Templat" in p for p in paths if p.startswith("vaults/"))
        # a template written later (a watcher's event) is not indexed either
        new = vault / "Templates" / "Movie Template.md"
        new.write_text('---\ncategories: "[[Movies]]"\n---\n', encoding="utf-8")
        c.runs.apply_changes([str(new)])
        c.index_paths([new])
        assert not c.search("prop:categories=Movies", limit=5).hits


def test_the_setting_is_checked() -> None:
    assert IndexLimits.from_mapping({}).skip_templates
    assert not IndexLimits.from_mapping({"templates": "index"}).skip_templates
    with pytest.raises(ConfigError, match='templates must be "skip" or "index"'):
        IndexLimits.from_mapping({"templates": True})
