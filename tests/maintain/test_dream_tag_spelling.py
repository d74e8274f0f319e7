"""The tag-spelling finding on real files: no winner on a tie, no case fix for Org
tags, the cited line is where the tag is written, and a proposed rename touches only
tags (not code spans, escaped ``\\#``, or prose that compares the spellings)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from cairn.app import Cairn

TODAY = dt.date(2027, 6, 1)


def _index(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Cairn]:
    root = tmp_path / "v"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    c = Cairn.open(db=tmp_path / "index.db")
    c.index([root])
    return root, c


def _tag_findings(c: Cairn) -> list[Any]:
    return [f for f in c.maintain.run(today=TODAY).report.findings if f.kind == "tag-spelling"]


def test_a_tie_has_no_usual_spelling_and_no_fix(tmp_path: Path) -> None:
    _, c = _index(tmp_path, {"a.md": "# A\n\nabout #Work here\n", "b.md": "# B\n\n#work\n"})
    try:
        found = _tag_findings(c)
    finally:
        c.close()
    assert found and all(f.fix is None for f in found)
    assert all(f.evidence["preferred"] is None for f in found)
    assert "no spelling is the usual one" in found[0].message


def test_org_tags_that_differ_only_in_case_get_no_fix(tmp_path: Path) -> None:
    _, c = _index(tmp_path, {"a.org": "* A :Work:\n", "b.org": "* B :work:\n",
                             "c.org": "* C :work:\n"})
    try:
        found = _tag_findings(c)
    finally:
        c.close()
    assert [f.value for f in found] == ["Work"]
    assert found[0].fix is None


def test_proposed_rename_touches_only_tags_and_cites_their_line(tmp_path: Path) -> None:
    note = ("# Tags\n\nIntro.\n\n"
            "Tags ignore case: #todo and #TODO are the same.\n"
            "Write `#TODO` in code, or \\#TODO escaped.\n"
            "A real one: #TODO\n")
    root, c = _index(tmp_path, {"n.md": note, "a.md": "# A\n\n#todo\n",
                                "b.md": "# B\n\n#todo\n"})
    try:
        found = [f for f in _tag_findings(c) if f.value == "TODO"]
        assert len(found) == 1 and found[0].line == 5
        assert found[0].fix is not None and not found[0].fix.auto
        run = c.maintain.run(apply=True, fix_kinds=["normalise_tag"], today=TODAY,
                             proposed=True)
        assert [ch.action for ch in run.changes if ch.path.endswith("n.md")] == ["changed"]
    finally:
        c.close()
    assert (root / "n.md").read_text(encoding="utf-8") == note.replace(
        "A real one: #TODO", "A real one: #todo")
