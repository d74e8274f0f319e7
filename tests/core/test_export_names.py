"""Exported notes get names the target allows, planned before anything is written: a
clash gets its own name, links follow a renamed note, the renames are reported, and an
OKF bundle's ``index.md`` links every concept with a destination that resolves."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote

from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import load_config
from cairn.export.service import RENAMED
from cairn.interfaces.cli._app import app

WEIRD = "we ird #1 100% [x]"


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_obsidian_export_writes_both_notes_when_an_org_and_a_markdown_note_share_a_name(
    tmp_path: Path,
) -> None:
    root = _write(tmp_path / "c1", {"note.org": "* Org version\n", "note.md": "# MD version\n"})
    db = tmp_path / "i.db"
    with Cairn(load_config(db=db)) as c:
        c.index([root], embed=False)
        rep = c.export.write("obsidian", tmp_path / "out", roots=[root])
    out = tmp_path / "out"
    assert (out / "note.md").read_bytes() == (root / "note.md").read_bytes()  # copied as is
    assert "# Org version" in (out / "note~2.md").read_text()
    assert [(r.path, r.to) for r in rep.renamed] == [("note.org", "note~2.md")]
    res = CliRunner().invoke(app, ["export", "compare", str(root), "--kind", "obsidian",
                                   "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert res.output.rstrip().endswith("same")
    assert f"exception: 1 {RENAMED}" in " ".join(res.output.split())
    # --json lists the renames (and what was left out) as objects
    res = CliRunner().invoke(app, ["export", "obsidian", str(tmp_path / "out2"), "--root",
                                   str(root), "--json", "--db", str(db)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert (data["renamed"], data["skipped"]) == ([{"path": "note.org", "to": "note~2.md"}], [])


def test_obsidian_export_names_an_org_note_without_characters_obsidian_forbids(
    tmp_path: Path,
) -> None:
    root = _write(tmp_path / "r", {
        "sub/we ird #1 ^2.org": "* Weird name\ntext\n",
        "o.org": "* Other\nSee [[file:sub/we ird #1 ^2.org][weird]].\n",
    })
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        rep = c.export.write("obsidian", tmp_path / "out", roots=[root])
        res = c.export.compare(root, kind="obsidian", exported=tmp_path / "out")
    safe = "sub/we ird _1 _2.md"
    assert (tmp_path / "out" / safe).is_file()
    assert [(r.path, r.to) for r in rep.renamed] == [("sub/we ird #1 ^2.org", safe)]
    assert "[[sub/we ird _1 _2|weird]]" in (tmp_path / "out" / "o.md").read_text()
    assert res.same, (res.missing, res.extra)


def test_okf_index_links_resolve_for_names_with_hash_percent_and_brackets(
    tmp_path: Path,
) -> None:
    root = _write(tmp_path / "r", {f"sub/{WEIRD}.org": "* Weird name\ntext\n"})
    out = tmp_path / "out"
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        c.export.write("okf", out, roots=[root])
        index = (out / "index.md").read_text()
        href = index.split("](", 1)[1].split(")", 1)[0]
        assert "#" not in href and (out / unquote(href)).is_file()
        assert c.export.compare(root, kind="okf", exported=out).same
        # a destination that encodes only spaces ("#" starts a fragment) is a loss
        (out / "index.md").write_text(index.replace(href, f"sub/{WEIRD}.md".replace(
            " ", "%20")))
        res = c.export.compare(root, kind="okf", exported=out)
    assert not res.same
    assert res.differences["index"] == (1, 0)
