"""The session's corpus indexes (``tests/_corpus_index.py``): the same roots indexed the
same way are built once; every test gets its own copy, which finds the corpus unchanged
and whose writes never reach the index the next test copies."""

from __future__ import annotations

from pathlib import Path

import pytest

from _corpus_index import CORPUS, CorpusIndexes
from cairn.app import Cairn

pytestmark = pytest.mark.corpus
SMALL = [CORPUS / "org" / "orgparse"]


def test_the_same_roots_indexed_the_same_way_are_built_once(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    indexes = CorpusIndexes(tmp_path_factory)
    first = indexes.over(SMALL)
    assert indexes.over(list(SMALL)) is first and indexes.builds == 1
    assert indexes.over(SMALL, embed=False) is not first and indexes.builds == 2
    assert indexes.over([*SMALL, CORPUS / "markdown" / "foam"]) is not first
    assert indexes.builds == 3
    assert first.run.added > 0 and first.run.failed == 0


def test_a_copy_finds_the_corpus_unchanged_and_keeps_its_writes(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    built = CorpusIndexes(tmp_path_factory).over(SMALL)
    before = built.db.read_bytes()
    with Cairn.open(db=built.copy(tmp_path / "mine.db")) as c:
        assert [Path(r.path) for r in c.roots()] == SMALL
        run = c.index()
        assert run.seen == built.run.seen and run.unchanged == run.seen
        c.index([CORPUS / "markdown" / "foam"])  # this copy's own write
    assert built.db.read_bytes() == before
    with Cairn.open(db=built.copy(tmp_path / "next.db")) as c:
        assert [Path(r.path) for r in c.roots()] == SMALL
    with pytest.raises(ValueError, match="no notes to check out"):
        built.checkout(tmp_path / "other.db")


def test_a_scratch_copy_is_made_once_and_checked_out_pristine(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    indexes = CorpusIndexes(tmp_path_factory)
    built = indexes.copy_of(["org/orgparse"], embed=False)
    assert indexes.copy_of(["org/orgparse"], embed=False) is built and indexes.builds == 1
    notes = built.checkout(tmp_path / "a.db")
    victim = next(iter(sorted(notes.rglob("*.org"))))
    original = victim.read_bytes()
    victim.write_text("* overwritten\n", encoding="utf-8")
    assert built.checkout(tmp_path / "b.db") == notes and victim.read_bytes() == original
    with Cairn.open(db=tmp_path / "b.db") as c:
        assert [Path(r.path) for r in c.roots()] == [notes / "org/orgparse"]
        run = c.index()
    assert run.seen > 0 and run.unchanged == run.seen
