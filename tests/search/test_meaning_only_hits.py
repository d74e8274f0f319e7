"""A hit found only by meaning is said to be one: a semantic search notes that no word
of the query matched only when none did, and ``export --query`` counts only the
notes its words match, not every semantic neighbour. Real files and a real index."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.search.service import NEAREST_BY_MEANING

Cli = Callable[..., Any]


def _vault(folder: Path) -> Path:
    (folder / "plants").mkdir(parents=True)
    (folder / "kitchen").mkdir()
    (folder / "plants" / "compost.md").write_text(
        "# Compost\n\nGreens and browns; turn the heap weekly.\n", "utf-8")
    (folder / "plants" / "tomatoes.md").write_text(
        "# Tomatoes\n\nStake the vines and pinch the side shoots.\n", "utf-8")
    (folder / "kitchen" / "bread.md").write_text(
        "# Sourdough\n\nFeed the starter the night before baking.\n", "utf-8")
    return folder


def test_a_semantic_search_says_no_word_matched_only_when_none_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A semantic list has no keyword side, so the note "no word of the query matched"
    must come from the words themselves: not there when they match."""
    pytest.importorskip("model2vec")
    monkeypatch.setenv("CAIRN_EMBED", "static")
    root = _vault(tmp_path / "v")
    with Cairn(Config(db_path=tmp_path / "i.db", embed={"provider": "static"})) as cairn:
        cairn.index([root])
        matched = cairn.search("compost heap", mode="semantic")
        assert matched.hits and NEAREST_BY_MEANING not in matched.notes
        none = cairn.search("xyzzyplugh", mode="semantic")
        assert none.hits and NEAREST_BY_MEANING in none.notes
        filtered = cairn.search("compost path:kitchen/", mode="semantic")  # no match there
        assert NEAREST_BY_MEANING in filtered.notes or not filtered.hits


def test_export_a_folder_inside_a_root_and_only_keyword_hits(
    cairn_cmd: Cli, tmp_path: Path
) -> None:
    """``--root`` may name a folder inside a registered one (only that folder is
    exported), and ``--query`` exports the notes its words match, not every semantic
    neighbour (``xyzzyplugh`` exports nothing)."""
    pytest.importorskip("model2vec")
    root = _vault(tmp_path / "v")
    db = tmp_path / "i.db"
    env = {"CAIRN_EMBED": "static"}
    assert cairn_cmd("--db", str(db), "index", str(root), env=env).code == 0
    res = cairn_cmd("--db", str(db), "export", "json", str(tmp_path / "p.json"),
               "--root", str(root / "plants"), "--json", env=env)
    assert res.code == 0, res.stderr
    got = json.loads((tmp_path / "p.json").read_text("utf-8"))
    assert sorted(d["path"] for d in got["documents"]) == [
        "plants/compost.md", "plants/tomatoes.md"]
    res = cairn_cmd("--db", str(db), "export", "json", str(tmp_path / "q.json"),
               "--query", "xyzzyplugh", "--json", env=env)
    assert res.code == 0 and json.loads(res.stdout)["documents"] == 0
    res = cairn_cmd("--db", str(db), "export", "json", str(tmp_path / "r.json"),
               "--query", "starter", "--json", env=env)
    assert json.loads(res.stdout)["documents"] == 1
    res = cairn_cmd("--db", str(db), "export", "json", str(tmp_path / "s.json"),
               "--root", str(tmp_path), env=env)
    assert res.code != 0 and "not a registered source root" in res.stderr.replace("\n", "")

