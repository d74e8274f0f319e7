"""``cairn validate`` on a memory bundle: the statuses cairn writes validate, and
relations that lead nowhere are reported on every run."""

from __future__ import annotations

from pathlib import Path

from cairn.app import Cairn
from cairn.config import load_config
from cairn.model.index_results import ValidationFinding
from cairn.model.serialize import to_data


def _codes(diags: list[ValidationFinding], code: str) -> list[ValidationFinding]:
    return [d for d in diags if d.message.startswith(code)]


def test_the_statuses_cairn_writes_validate(tmp_path: Path) -> None:
    b = tmp_path / "mem"
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        for text, tag in [("Alice leads the payments team", "team"),
                          ("The build needs Python 3.12 on the runner", "build"),
                          ("Deploys happen on Tuesdays after review", "deploy")]:
            c.memory.remember(b, text, tags=[tag])
        c.memory.consolidate(b, embed=False)
        concepts = sorted(p.stem for p in (b / "concepts/active").glob("*.md"))
        assert len(concepts) == 3
        c.memory.supersede(b, concepts[0])
        c.memory.forget(b, concepts[1])
        statuses = {
            line.split(": ", 1)[1]
            for p in b.glob("concepts/*/*.md")
            for line in p.read_text().splitlines()
            if line.startswith("status: ")
        }
        assert statuses == {"active", "superseded", "archived"}
        assert _codes(c.notes.validate([b]), "W-status") == []
        # a value outside the memory life cycle is still a warning, and a plain OKF
        # concept keeps OKF's own statuses
        odd = b / "concepts/active" / f"{concepts[2]}.md"
        odd.write_text(odd.read_text().replace("status: active", "status: stable"))
        notes = tmp_path / "notes"
        notes.mkdir()
        (notes / "index.md").write_text("---\nokf_version: \"0.2\"\n---\n\n# Notes\n")
        (notes / "a.md").write_text("---\ntype: Note\ntitle: A\nstatus: active\n---\n\nA.\n")
        c.index([notes])
        found = c.notes.validate([b, notes])
        warned = {Path(d.path).name for d in _codes(found, "W-status")}
        assert warned == {f"{concepts[2]}.md", "a.md"}


def test_relations_follow_an_archived_concept_and_dangling_ones_are_always_reported(
    tmp_path: Path,
) -> None:
    b = tmp_path / "mem"
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.memory.remember(b, "Alice leads the payments team", tags=["team"])
        c.memory.remember(b, "The build needs Python 3.12 on the runner", tags=["build"])
        res, _ = c.memory.consolidate(b, embed=False)
        keep, fade = sorted(res.created)
        c.memory.pin(b, keep)
        c.memory.relate(b, keep, "related", fade)
        faded = b / fade
        faded.write_text(faded.read_text().replace("confidence: 1.0", "confidence: 0.3"))
        rep = c.memory.maintain(b)
        moved = "concepts/archive/" + fade.rsplit("/", 1)[1]
        assert rep.archived == [moved] and rep.dangling == []
        assert f"target: /{moved}" in (b / keep).read_text()
        assert _codes(c.notes.validate([b]), "W-relation") == []
        # a relation that leads nowhere is reported by every cycle and by validate
        kept = b / keep
        kept.write_text(kept.read_text().replace(f"target: /{moved}",
                                                 "target: /concepts/active/gone.md"))
        for _ in range(2):
            rep = c.memory.maintain(b)
            assert [(d.source, d.target) for d in rep.dangling] == [
                (keep, "concepts/active/gone.md")]
            assert to_data(rep)["dangling"] == [{"from": keep, "to": "concepts/active/gone.md"}]
        c.index([b])
        warned = _codes(c.notes.validate([b]), "W-relation")
        assert [Path(d.path).name for d in warned] == [Path(keep).name]
