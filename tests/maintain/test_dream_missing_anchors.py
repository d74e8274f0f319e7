"""Links whose note resolves but whose anchor names nothing there: a Markdown heading
``[[Note#Gaols]]``, a block ``[[Note#^missing]]``, Org ``[[file:x.org::*Missing]]`` and
``[[file:x.org::#missing-id]]``. ``dream`` (broken) and ``graph unresolved`` list each;
a near heading is proposed (never applied by ``--apply``), and anchors that do name
something, or an Org text search, are not listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import Config
from cairn.interfaces.cli import app

FILES = {
    "vault/Project Plan.md": "# Goals\n\nFirst goal ^blk\n\n# Risks\n\nNone yet.\n",
    "vault/home.md": "See [[Project Plan#Gaols]] and [[Project Plan#Goals]].\n",
    "vault/blocks.md": "See [[Project Plan#^missing]] and [[Project Plan#^blk]].\n",
    "vault/table.md": "| a | b |\n| - | - |\n| [[Project Plan#Gaols\\|plan]] | x |\n",
    "o.org": "* Goals\nx\n* Other\n:PROPERTIES:\n:CUSTOM_ID: other\n:END:\ny\n",
    "l.org": "* L\n[[file:o.org::*Gaols]] [[file:o.org::#missing-id]]\n"
             "[[file:o.org::#other]] [[file:o.org::*Goals]] [[file:o.org::some words]]\n",
}
MISSING = {
    ("notes/vault/home.md", "[[Project Plan#Gaols]]"),
    ("notes/vault/blocks.md", "[[Project Plan#^missing]]"),
    ("notes/l.org", "[[file:o.org::*Gaols]]"),
    ("notes/l.org", "[[file:o.org::#missing-id]]"),
    ("notes/vault/table.md", "[[Project Plan#Gaols|plan]]"),
}


@pytest.fixture
def notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    root = tmp_path / "notes"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
    return root


def test_graph_unresolved_lists_each_missing_anchor_and_no_other(notes: Path) -> None:
    db = notes.parent / "i.db"
    res = CliRunner().invoke(app, ["graph", "unresolved", "--json", "--db", str(db)])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    assert {(u["path"], u["raw"]) for u in got} == MISSING
    reasons = {u["raw"]: u["reason"] for u in got}
    assert reasons["[[Project Plan#Gaols]]"] == "no heading 'Gaols' in vault/Project Plan.md"
    assert reasons["[[Project Plan#^missing]]"] == (
        "no block '^missing' in vault/Project Plan.md")
    assert reasons["[[file:o.org::*Gaols]]"] == "no heading '*Gaols' in o.org"
    assert reasons["[[file:o.org::#missing-id]]"] == "no custom id '#missing-id' in o.org"


def test_dream_reports_missing_anchors_and_only_proposes_the_near_heading(
    notes: Path,
) -> None:
    before = {rel: (notes / rel).read_bytes() for rel in FILES}
    with Cairn(Config(db_path=notes.parent / "i.db")) as cairn:
        report = cairn.maintain.run().as_data()["report"]
        anchors = {f["relpath"]: f for f in report["findings"]
                   if f["kind"] == "unresolved-anchor"}
        found = [f for f in report["findings"] if f["kind"] == "unresolved-anchor"]
        assert {(f["relpath"], f["evidence"]["raw"]) for f in found} == MISSING
        home = anchors["notes/vault/home.md"]
        assert home["line"] == 1
        assert home["evidence"]["suggested_anchor"] == "Goals"
        assert home["fix"]["auto"] is False
        assert home["fix"]["params"] == {"line": 1, "old": "[[Project Plan#Gaols]]",
                                         "new": "[[Project Plan#Goals]]"}
        org = [f for f in found if f["evidence"]["raw"] == "[[file:o.org::*Gaols]]"]
        assert org[0]["fix"]["params"]["new"] == "[[file:o.org::*Goals]]"
        blocks = [f for f in found if f["relpath"] == "notes/vault/blocks.md"]
        assert blocks[0]["fix"] is None  # a block id is not guessed
        # in a table cell the file holds ``\|``, not the recorded text: no edit to propose
        assert anchors["notes/vault/table.md"]["fix"] is None
        cairn.maintain.run(apply=True)
    # a similar name is not evidence: --apply leaves every link as written
    for rel in ("vault/home.md", "vault/blocks.md", "vault/table.md", "l.org"):
        assert (notes / rel).read_bytes() == before[rel]
