"""Which folders may become a memory bundle: a new or empty one (hidden entries aside),
or one that already is a bundle; a notes folder is refused, untouched, by every door."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.memory.bundle import MemoryError_


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_notes_root_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nplain note\n")
    (notes / "b.org").write_text("* B\n")
    before = _tree(notes)
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([notes])
        with pytest.raises(MemoryError_) as err:
            c.memory.remember(notes, "The build needs Python 3.12")
        msg = str(err.value)
        assert str(notes) in msg and "not a memory bundle" in msg and "a.md" in msg
        with pytest.raises(MemoryError_):
            c.memory.consolidate(notes)
        assert _tree(notes) == before  # no index.md, no memories/, nothing
        (root,) = c.store.roots()
        assert {d.path for d in c.store.documents_of_root(root.id)} == {"a.md", "b.org"}


def test_new_empty_hidden_only_and_existing_bundles_are_accepted(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    gitted = tmp_path / "gitted"
    (gitted / ".git").mkdir(parents=True)
    half = tmp_path / "half"  # a first write that stopped after the folders
    (half / "memories" / "active").mkdir(parents=True)
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        for folder in (tmp_path / "new" / "mem", empty, gitted, half):
            c.memory.remember(folder, f"An event in {folder.name}")
            assert (folder / "index.md").is_file() and (folder / "concepts").is_dir()
        # a bundle with files of its own (a README beside the layout) stays usable
        (empty / "README.md").write_text("# About this memory\n")
        c.memory.remember(empty, "A second event")
        assert len(list((empty / "memories" / "active").iterdir())) == 2


def test_the_cli_names_the_folder_and_exits_nonzero(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "journal.md").write_text("# Journal\n")
    res = cli("--db", str(tmp_path / "i.db"), "memory", "remember", "An event", "-b",
              str(notes), "--json", env={"CAIRN_EMBED": "none", "COLUMNS": None}, check=False)
    assert res.code != 0
    data = json.loads(res.stdout)
    assert str(notes) in data["error"] and "journal.md" in data["error"]
    assert _tree(notes) == ["journal.md"]
