"""``cairn dream`` runs the memory maintenance cycle on every root that is a memory
bundle: a report only (nothing written, the access log not consumed) unless
``--apply``, which runs :meth:`Cairn.memory_maintain` (and re-indexes what it wrote)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from cairn.app import Cairn
from cairn.config import load_config


def _tree(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*.md"))
    }


def test_dream_runs_memory_maintenance(tmp_path: Path) -> None:
    bundle = tmp_path / "mem"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A plain note\n\nNot a memory bundle.\n")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([notes], embed=False)
        for text, tag in (
            ("The build needs Python 3.12 on the runner", "build"),
            ("Deploys happen on Tuesdays after the release review", "deploy"),
            ("The nightly backup copies the database offsite", "backup"),
        ):
            c.memory.remember(bundle, text, tags=[tag])
        res, _ = c.memory.consolidate(bundle)
        assert len(res.created) == 3
        concept = {
            t: next(p for p in res.clusters if t in (bundle / p.concept).read_text()).concept
            for t in ("build", "deploy", "backup")
        }
        c.memory.relate(bundle, concept["deploy"], "depends_on", concept["build"])
        c.memory.supersede(bundle, concept["build"])
        victim = sorted((bundle / "memories/subsumed").glob("*.md"))[0]
        tampered = victim.read_text().rstrip("\n") + " (edited by hand)\n"  # any memory
        victim.write_text(tampered)
        c.index([bundle], embed=False)
        before = _tree(bundle)

        run = c.maintain.run(only=["memory"])
        kinds = {f.kind: f for f in run.report.findings}
        assert {"seal-mismatch", "would-supersede", "maintenance-due"} <= set(kinds)
        assert kinds["seal-mismatch"].path == str(victim)
        assert kinds["would-supersede"].relpath == f"mem/{concept['deploy']}"
        due = kinds["maintenance-due"]
        assert due.fix is not None and due.fix.kind == "memory_maintain"
        assert due.evidence["superseded"] == 1 and due.evidence["decayed"] >= 1
        assert all(f.relpath.startswith("mem") for f in run.report.findings)  # notes: none
        assert _tree(bundle) == before  # a report only

        planned = c.maintain.run(only=["memory"], dry_run=True)
        assert [ch.action for ch in planned.changes] == ["planned"]
        assert "status: superseded" in planned.changes[0].diff
        assert _tree(bundle) == before

        applied = c.maintain.run(only=["memory"], apply=True)
        assert applied.applied and [ch.action for ch in applied.changes] == ["maintained"]
        text = (bundle / concept["deploy"]).read_text()
        assert "status: superseded" in text and "confidence: 0.0" in text
        after = {f.kind for f in applied.report.findings}
        assert "would-supersede" not in after
        assert "seal-mismatch" in after  # a tampered memory is reported, never fixed
        assert victim.read_text().startswith("---")
        assert [d for d in c.notes.validate() if d.severity == "error"] == []
