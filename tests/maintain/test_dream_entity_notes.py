"""``cairn dream --apply`` creates an entity note only on certain evidence: a bare note
name (``[[Widget]]``) that three distinct notes link to and that the new note resolves.
Org ``file:`` links are relative to the linking file, so a note in ``entities/`` would
not answer them and none is offered; paths, file names, names linked from fewer notes
and recurring property values are only proposed."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.interfaces.cli._app import app

TODAY_ARGS = ("--today", "2026-12-07")


def _vault(base: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return base


def _entities(db: Path) -> dict[str, dict[str, object]]:
    with Cairn.open(db=db) as c:
        report = c.maintain.run(only=["entities"]).as_data()["report"]
    return {str(f["value"]): f for f in report["findings"] if f["check"] == "entities"}


def _apply(db: Path, *extra: str) -> None:
    res = CliRunner().invoke(app, ["dream", "--apply", "--only", "entities", *TODAY_ARGS,
                                   *extra, "--db", str(db)])
    assert res.exit_code == 0, res.output


def test_relative_org_file_links_from_several_folders_create_no_note(tmp_path: Path) -> None:
    # the doomemacs docs: [[file:modules.org]] written in files of different folders,
    # each meaning a file beside itself; entities/modules.org would resolve none of them
    root = _vault(tmp_path / "org", {
        f"{folder}/README.org": f"#+title: {folder}\n\n* Intro\nSee [[file:modules.org]] "
                                f"and [[file:modules.org][the modules]].\n"
        for folder in ("docs", "lang", "tools", "ui")
    })
    db = tmp_path / "i.db"
    with Cairn.open(db=db) as c:
        c.index([root], embed=False)
    found = _entities(db)
    assert found["modules"]["fix"] is None
    _apply(db)
    _apply(db, "--proposed")
    assert not (root / "entities").exists()
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*.org")) == [
        "docs/README.org", "lang/README.org", "tools/README.org", "ui/README.org"]


def test_a_bare_name_linked_from_three_notes_is_created_by_apply(tmp_path: Path) -> None:
    root = _vault(tmp_path / "vault", {
        "a.md": "# A\n\nUses [[Widget]].\n",
        "sub/b.md": "# B\n\nAlso [[widget|the widget]].\n",
        "c.md": "# C\n\n[[Widget]] again.\n",
    })
    db = tmp_path / "i.db"
    with Cairn.open(db=db) as c:
        c.index([root], embed=False)
    fix = _entities(db)["Widget"]["fix"]
    assert isinstance(fix, dict) and fix["auto"] is True
    _apply(db)
    assert (root / "entities" / "Widget.md").read_text(encoding="utf-8").startswith(
        "# Widget\n")
    with Cairn.open(db=db) as c:
        assert not [u for u in c.maintain.unresolved_links() if u.target.lower() == "widget"]


def test_weaker_evidence_is_only_proposed(tmp_path: Path) -> None:
    root = _vault(tmp_path / "vault", {
        # linked three times, but from two notes only
        "a.md": "# A\n\n[[Gadget]].\n\nAnd [[Gadget]].\n",
        "b.md": "# B\n\n[[Gadget]].\n",
        # a file name, not a bare note name
        **{f"t{i}.md": f"# T{i}\n\n[[Thing.md]]\n" for i in range(3)},
        # a recurring front-matter value: no link wants a note
        **{f"p{i}.md": f"---\nclient: Acme Corp\n---\n# P{i}\n" for i in range(3)},
    })
    db = tmp_path / "i.db"
    with Cairn.open(db=db) as c:
        c.index([root], embed=False)
    found = _entities(db)
    for value in ("Gadget", "Thing", "Acme Corp"):
        fix = found[value]["fix"]
        assert isinstance(fix, dict) and fix["auto"] is False, value
        assert str(fix["description"]).startswith("proposed: create"), value
    _apply(db)
    assert not (root / "entities").exists()
    _apply(db, "--proposed")
    assert sorted(p.name for p in (root / "entities").iterdir()) == [
        "Acme Corp.md", "Gadget.md", "Thing.md"]
