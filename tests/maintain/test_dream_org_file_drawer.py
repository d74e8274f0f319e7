"""Where the dream cycle may put an Org file's ``:ID:`` drawer: never above a first
line that Emacs reads as file variables or a ``#!`` line (a real index and real files)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.maintain.dream.edits import EditRefused, add_org_id

TODAY = dt.date(2027, 6, 1)
LINK = "* L\n[[file:m.org][m]]\n"


def _vault(tmp_path: Path, first: str) -> tuple[Path, Cairn]:
    root = tmp_path / "i1"
    root.mkdir()
    (root / "m.org").write_bytes(f"{first}\nnot a comment line\n* X\n".encode())
    (root / "l.org").write_text(LINK, encoding="utf-8")
    (root / "l2.org").write_text(LINK, encoding="utf-8")
    c = Cairn.open(db=tmp_path / "index.db")
    c.index([root])
    return root, c


@pytest.mark.parametrize("first", ["-*- mode: org -*-", "#!/usr/bin/env emacs --script"])
def test_file_drawer_never_goes_above_a_first_line_that_must_stay_first(
    tmp_path: Path, first: str
) -> None:
    root, c = _vault(tmp_path, first)
    before = (root / "m.org").read_bytes()
    try:
        found = [f for f in c.maintain.run(today=TODAY).report.findings
                 if f.kind == "fragile-link" and f.relpath.endswith("m.org")]
        assert len(found) == 1 and found[0].fix is None
        assert "no fix" in found[0].message
        run = c.maintain.run(apply=True, fix_kinds=["add_org_id"], today=TODAY)
        assert not [ch for ch in run.changes if ch.path.endswith("m.org")]
        assert (root / "m.org").read_bytes() == before
    finally:
        c.close()
    with pytest.raises(EditRefused, match="line 1"):
        add_org_id(before.decode(), {"line": 0}, path=str(root / "m.org"))


def test_file_drawer_goes_after_a_commented_cookie_line(tmp_path: Path) -> None:
    root, c = _vault(tmp_path, "# -*- mode: org -*-")
    try:
        run = c.maintain.run(apply=True, fix_kinds=["add_org_id"], today=TODAY)
        assert [ch.action for ch in run.changes if ch.path.endswith("m.org")] == ["changed"]
    finally:
        c.close()
    lines = (root / "m.org").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# -*- mode: org -*-" and lines[1] == ":PROPERTIES:"
    assert lines[2].startswith(":ID: ") and lines[3:] == [":END:", "not a comment line", "* X"]
