"""The scratch corpora of these tests are indexed once per session and handed out as
copies: each copy is the pristine notes and index, whatever an earlier test wrote, and
the copied index finds its notes where it was built, unchanged."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn

pytestmark = pytest.mark.corpus
PARTS = {"org": ["orgparse"]}


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_checkout_undoes_what_the_last_test_wrote(scratches: Any,
                                                    tmp_path: Path) -> None:
    built = scratches.get(PARTS)
    notes = built.checkout(tmp_path / "first.db")
    before = _tree(notes)
    victim = next(p for p in sorted(notes.rglob("*.org")))
    victim.write_text("* overwritten\n", encoding="utf-8")
    (notes / "org" / "new.org").write_text("* new\n", encoding="utf-8")
    with Cairn.open(db=tmp_path / "first.db") as c:
        assert c.index().changed == 1

    again = built.checkout(tmp_path / "second.db")
    assert again == notes and _tree(again) == before
    assert (tmp_path / "second.db").read_bytes() == built.db.read_bytes()


def test_a_copied_index_finds_its_notes_unchanged(scratches: Any, tmp_path: Path) -> None:
    notes = scratches.get(PARTS).checkout(tmp_path / "index.db")
    with Cairn.open(db=tmp_path / "index.db") as c:
        assert [Path(r.path) for r in c.roots()] == [notes / "org"]
        run = c.index()
    assert run.seen > 0 and run.unchanged == run.seen
    assert (run.added, run.changed, run.removed, run.failed) == (0, 0, 0, 0)
