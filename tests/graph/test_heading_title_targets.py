"""Org ``<<targets>>`` in heading titles (org-syntax allows them there): the parser
records them, a fuzzy ``[[target]]`` resolves to that heading, the title reads as Org
shows it, and neither ``dream`` nor ``graph unresolved`` calls the link missing; on two
real files of the corpus that link to such targets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import Config
from cairn.formats.org.parser import parse
from cairn.interfaces.cli import app

ORG = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "org"
SHELL = "worg/org-contrib/babel/languages/ob-doc-shell.org"
GUIDE = "braindump-NO-LICENCE/org/reference/singapore_to_sf_migration_guide.org"


def test_a_target_in_a_heading_title_is_recorded_and_shown_as_its_text() -> None:
    doc = parse("* Heading <<htarget>> here\n* A <<<radio>>> and <<t2>>\nBody <<b>>\n", "x.org")
    first, second = doc.units[1], doc.units[2]
    assert first.title == "Heading htarget here"
    assert first.extra["targets"] == ["htarget"]
    assert first.extra["title_raw"] == "Heading <<htarget>> here"
    assert first.outline_path == ("Heading htarget here",)
    assert second.title == "A radio and t2"
    assert second.extra["targets"] == ["t2", "b"]  # the title's first, then the body's
    assert second.extra["radio_targets"] == ["radio"]


def test_a_link_to_a_target_in_a_heading_title_resolves_and_is_not_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    root = tmp_path / "notes"
    root.mkdir()
    (root / "x.org").write_text(
        "* Heading <<htarget>> here\n* Use\nSee [[htarget]].\n"
        "As written: [[*Heading <<htarget>> here]].\n", encoding="utf-8")
    db = tmp_path / "i.db"
    with Cairn(Config(db_path=db)) as cairn:
        cairn.index([root])
        links = [lk for lk in cairn.store.links_from() if lk.kind == "org-heading"]
        assert sorted(lk.target for lk in links) == ["*Heading <<htarget>> here", "htarget"]
        for link in links:
            assert link.unresolved_reason is None and link.resolved_unit_id is not None
            unit = cairn.store.hit_units([link.resolved_unit_id])[link.resolved_unit_id]
            assert unit.title == "Heading htarget here"
        assert cairn.maintain.unresolved_links() == []
        findings = cairn.maintain.run().as_data()["report"]["findings"]
        assert not [f for f in findings if f["check"] == "broken"]
    res = CliRunner().invoke(app, ["graph", "unresolved", "--json", "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output) == []


@pytest.mark.corpus
def test_corpus_links_to_heading_targets_resolve_to_those_headings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    if not ORG.is_dir():
        pytest.skip("the shared corpus is not here")
    root = tmp_path / "org"
    for rel in (SHELL, GUIDE):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ORG / rel, root / rel)
    # ``** Results <<results>>`` / ``- [[results][:results]]``, ``** Dir <<dir>>`` /
    # ``- [[dir][:dir]]``, ``* Packing <<packing>>`` / ``[[packing]] for the move``
    # (the title keeps each target's text, without its brackets)
    want = {("results", SHELL): "Results results", ("dir", SHELL): "Dir dir",
            ("packing", GUIDE): "Packing packing"}
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        links = {(lk.target, lk.path): lk for lk in cairn.store.links_from()
                 if (lk.target, lk.path) in want}
        assert set(links) == set(want)
        for key, title in want.items():
            lk = links[key]
            assert lk.unresolved_reason is None and lk.resolved_unit_id, key
            unit = cairn.store.hit_units([lk.resolved_unit_id])[lk.resolved_unit_id]
            assert unit.title == title and unit.path == key[1]
        assert not [u for u in cairn.maintain.unresolved_links()
                    if (u.target, u.path.split("/", 1)[1]) in want]
