"""Hidden files (``..md``, ``.draft.md``) are not indexed, as an editor's own hidden
files are not, but no longer silently: the run lists each in a note format as an info
diagnostic, ``cairn index`` counts them and ``--verbose`` names them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import Config
from cairn.interfaces.cli import app as cli


def _vault(tmp_path: Path) -> Path:
    v = tmp_path / "v"
    (v / "sub").mkdir(parents=True)
    (v / "..md").write_text("# Dots\n\nmarmalade\n", encoding="utf-8")
    (v / "sub" / ".draft.org").write_text("* Draft\nmarmalade\n", encoding="utf-8")
    (v / "ok.md").write_text("# Ok\n\nmarmalade\n", encoding="utf-8")
    (v / ".DS_Store").write_bytes(b"\0\1")  # not a note format: not worth a word
    (v / ".ok.md.swp").write_bytes(b"\0")  # an editor's swap file: neither
    (v / ".git").mkdir()
    (v / ".git" / "x.md").write_text("# In .git\n", encoding="utf-8")
    return v


def test_hidden_notes_are_reported_not_indexed(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        run = c.index([v], embed=False)
        assert run.added == 1
        hidden = sorted(w.path for w in run.warnings if w.message.startswith("hidden file ("))
        assert hidden == ["..md", "sub/.draft.org"]
        assert all(w.severity == "info" for w in run.warnings if w.path in hidden)
        assert [h.path for h in c.search("marmalade").hits] == ["ok.md"]


def test_cli_counts_them_and_verbose_names_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    v = _vault(tmp_path)
    db = str(tmp_path / "i.db")
    r = CliRunner().invoke(cli, ["--db", db, "index", "-q", str(v)])
    assert r.exit_code == 0, r.output
    assert "2 hidden files (names starting with '.') not indexed; --verbose names them" \
        in r.stdout
    assert "..md" not in r.stdout
    r = CliRunner().invoke(cli, ["--db", db, "index", "-q", "--verbose", str(v)])
    lines = [x.strip() for x in r.stdout.splitlines()]
    assert "hidden ..md" in lines and "hidden sub/.draft.org" in lines
    r = CliRunner().invoke(cli, ["--db", db, "index", "--json", str(v)])
    data = json.loads(r.stdout)
    assert sorted(w["path"] for w in data["warnings"]
                  if w["message"].startswith("hidden file (")) == ["..md", "sub/.draft.org"]
