"""Index the whole shared Org and Markdown corpus, and search it.

Expected hits were chosen by reading the files (the line numbers below are where the
heading sits in the file: ``grep -n`` confirms each).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from _corpus_index import CorpusIndexes
from cairn import formats
from cairn.app import Cairn
from cairn.model import Run
from cairn.sources import is_ignored_name

pytestmark = pytest.mark.corpus

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
ROOTS = [CORPUS / "org", CORPUS / "markdown"]


@pytest.fixture(scope="module")
def indexed(corpus_indexes: CorpusIndexes, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Cairn, Run]]:
    """A copy of the session's index of :data:`ROOTS` and the report of the run that
    built it."""
    built = corpus_indexes.over(ROOTS)
    c = Cairn.open(db=built.copy(tmp_path_factory.mktemp("corpus") / "index.db"))
    yield c, built.run
    c.close()


def _independent_count() -> int:
    """Files a user would expect to be looked at: known note extensions, outside
    hidden/ignored folders, counted with os.walk (not cairn's discovery)."""
    n = 0
    for root in ROOTS:
        for _folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not is_ignored_name(d, is_dir=True)]
            n += sum(
                1 for f in files if formats.candidates(f) and not is_ignored_name(f, is_dir=False)
            )
    return n


def test_every_file_is_indexed_or_a_failure_with_a_reason(indexed: tuple[Cairn, Run]) -> None:
    c, run = indexed
    assert run.seen == _independent_count() > 1900
    assert run.added + run.failed + run.skipped == run.seen
    assert run.failed == len({f.path for f in run.failures})
    assert all(f.reason for f in run.failures)
    stats = c.stats()
    assert stats.files == run.added + run.failed
    assert stats.fts_rows == stats.units > 15000
    assert {"org", "markdown"} <= set(stats.formats)


def test_second_run_changes_nothing_and_keeps_ids(indexed: tuple[Cairn, Run]) -> None:
    c, _ = indexed
    ids = c.store.db.execute("SELECT id FROM units ORDER BY id").fetchall()
    again = c.index()
    assert (again.added, again.changed, again.removed) == (0, 0, 0)
    assert again.unchanged + again.failed + again.skipped >= again.seen - again.failed
    assert c.store.db.execute("SELECT id FROM units ORDER BY id").fetchall() == ids


QUERIES = [
    # (query, expected path, expected title, line)
    (
        "Brief Introduction to the Zettelkasten Method",
        "org-roam/doc/org-roam.org",
        "A Brief Introduction to the Zettelkasten Method",
        100,
    ),
    ("Installing from MELPA", "org-roam/doc/org-roam.org", "Installing from MELPA", 159),
    (
        "foldable callouts",
        "obsidian-help-NO-LICENCE/en/Editing and formatting/Callouts.md",
        "Foldable callouts",
        53,
    ),
    ("property inheritance", "org-mode/doc/org-manual.org", "Property Inheritance", 5608),
    ("diary sexp", "worg/org-syntax.org", "Diary Sexp", 896),
    ("daily note templates", "foam/docs/user/features/daily-notes.md", "Daily Note Templates", 21),
    (
        "接続にラベルを追加する",
        "obsidian-help-NO-LICENCE/ja/プラグイン/Canvas.md",
        "接続にラベルを追加する",
        182,
    ),
    (
        "org-roam buffer navigating",
        "org-roam/doc/org-roam.org",
        "Navigating the Org-roam Buffer",
        526,
    ),
    (
        "Robot Grasping",
        "braindump-NO-LICENCE/org/reference/robot_grasping.org",
        "Robot Grasping",
        1,
    ),
    (
        "Foldable",
        "obsidian-help-NO-LICENCE/en/Editing and formatting/Callouts.md",
        "Foldable callouts",
        53,
    ),
    ("tag:daily", "kepano-obsidian/Templates/Daily Note Template.md", "Notes", 5),
]


@pytest.mark.parametrize(("query", "path", "title", "line"), QUERIES)
def test_known_answers_are_in_the_top_three(
    indexed: tuple[Cairn, Run], query: str, path: str, title: str, line: int
) -> None:
    c, _ = indexed
    hits = c.search(query, limit=3).hits
    found = [(h.path.split("/", 0)[0], h.title, h.line_start) for h in hits]
    assert any(h.path.endswith(path) and h.title == title and h.line_start == line for h in hits), (
        found
    )
    top = next(h for h in hits if h.path.endswith(path) and h.title == title)
    assert Path(top.abs_path).is_file()
    assert top.abs_path.endswith(top.path)


def test_filters_on_the_corpus(indexed: tuple[Cairn, Run]) -> None:
    c, _ = indexed
    hits = c.search("format:org todo:DONE", limit=50).hits
    assert hits and all(h.format == "org" and h.todo == "DONE" for h in hits)
    hits = c.search("path:kepano-obsidian/Clippings advice", limit=50).hits
    assert hits and all("Clippings" in h.path for h in hits)
    assert c.search("format:markdown -tag:daily tag:daily").hits == ()


def test_touch_change_and_delete_on_a_copy(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    shutil.copytree(CORPUS / "markdown" / "foam", root / "foam")
    shutil.copytree(CORPUS / "org" / "org-roam", root / "org-roam")
    c = Cairn.open(db=tmp_path / "i.db")
    first = c.index([root])
    assert first.failed == 0
    units = dict(c.store.db.execute("SELECT id, rowid FROM units").fetchall())
    target = root / "foam" / "docs" / "principles.md"
    later = time.time() + 5
    os.utime(target, (later, later))
    run = c.index()
    assert (run.changed, run.added, run.removed) == (0, 0, 0)
    target.write_text(target.read_text(encoding="utf-8") + "\nA quokkaesque addendum.\n")
    os.utime(target, (later + 5, later + 5))
    run = c.index()
    assert (run.changed, run.unchanged) == (1, first.seen - 1)
    assert [h.path for h in c.search("quokkaesque").hits] == ["foam/docs/principles.md"]
    others = dict(
        c.store.db.execute(
            "SELECT u.id, u.rowid FROM units u JOIN documents d ON d.id=u.document_id "
            "WHERE d.path != 'foam/docs/principles.md'"
        ).fetchall()
    )
    assert all(units[k] == v for k, v in others.items())
    gone = root / "org-roam" / "doc" / "org-roam.org"
    mine = c.store.db.execute(
        "SELECT count(*) FROM units u JOIN documents d ON d.id=u.document_id "
        "WHERE d.path='org-roam/doc/org-roam.org'"
    ).fetchone()[0]
    total = c.store.counts()["units"]
    gone.unlink()
    run = c.index()
    assert run.removed == 1
    assert c.store.counts()["units"] == total - mine
    assert c.search("Installing from MELPA").hits == () or all(
        "org-roam.org" not in h.path for h in c.search("Installing from MELPA").hits
    )
    assert c.notes.check() == []
    c.close()
