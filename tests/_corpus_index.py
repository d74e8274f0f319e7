"""Indexes of the shared corpus, each built once per test session and handed out as copies.

Indexing the whole corpus takes the better part of a minute; many test modules need the
same index. :class:`CorpusIndexes` builds each distinct index once (the same roots, the
same way of indexing: the same index) and gives every test its own copy of the index
file, to write to as it likes.

Two kinds:

* :meth:`CorpusIndexes.over` indexes the corpus folders where they are. The corpus is
  never written to, so a copy of the index needs no copy of the notes: its roots (absolute
  paths, as an index records them) still hold.
* :meth:`CorpusIndexes.scratch` indexes a scratch copy of corpus folders, for tests that
  write notes. :meth:`Built.checkout` puts the pristine notes back at the path the index
  was built over (whatever an earlier test wrote there) with the index beside it. Tests
  run one at a time, so no test sees another's writes.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.model import Run

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
FORMATS = ("org", "markdown", "okf", "chats")
"""The corpus's format folders, in the order the whole-corpus copy indexes them."""
Key = tuple[object, ...]


def _writable_then_retry(func: Callable[[str], object], path: str, _exc: object) -> None:
    """Let ``rmtree`` remove what a read-only copy of the corpus holds: make the folder
    writable and try again."""
    os.chmod(os.path.dirname(path), 0o755)
    func(path)


def _embed_env() -> str | None:
    """``CAIRN_EMBED`` now: ``none`` for the session, unset in a test marked ``embed``;
    an index built under one is not the index asked for under the other."""
    return os.environ.get("CAIRN_EMBED")


@dataclass(frozen=True)
class Built:
    """One index, built: the index file (closed, never opened again), the first index
    run's report, and for a scratch index the notes folder it was built over and an
    untouched copy of those notes."""

    db: Path
    run: Run
    notes: Path | None = None
    pristine: Path | None = None

    def copy(self, db: Path) -> Path:
        """Copy the index to ``db`` (a file the caller may write to); returns ``db``."""
        db.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.db, db)
        return db

    def checkout(self, db: Path) -> Path:
        """Put the pristine notes back at :attr:`notes` (whatever an earlier test did
        to them) and copy the index to ``db``; returns the notes folder. ``copytree``
        keeps modification times, so the index sees every file as unchanged.

        Raises:
            ValueError: this index was built over the corpus itself, not a scratch copy.
        """
        if self.notes is None or self.pristine is None:
            raise ValueError("an index over the corpus itself has no notes to check out")
        if self.notes.exists():
            shutil.rmtree(self.notes, onerror=_writable_then_retry)
        shutil.copytree(self.pristine, self.notes, symlinks=True)
        self.copy(db)
        return self.notes


@dataclass
class CorpusIndexes:
    """The session's corpus indexes, each built on first use."""

    factory: pytest.TempPathFactory
    built: dict[Key, Built] = field(default_factory=dict)
    builds: int = 0
    """How many indexes this session built (a second request for one is not a build)."""

    def over(self, roots: Sequence[Path], *, embed: bool = True) -> Built:
        """The index of the read-only folders ``roots`` (in this order: root ids follow
        it), indexed with ``embed`` as ``Cairn.index`` takes it. Never write to the
        notes under ``roots``; copy the index with :meth:`Built.copy`."""
        key: Key = ("over", tuple(str(r) for r in roots), embed, _embed_env())
        if key not in self.built:
            db = self.factory.mktemp("corpus-index") / "built.db"
            self.built[key] = Built(db, self._index(db, list(roots), embed))
        return self.built[key]

    def scratch(self, name: str, make: Callable[[Path], Sequence[Path]], *,
                embed: bool = True) -> Built:
        """The index of a scratch copy of notes: ``make(folder)`` copies the notes into
        the empty ``folder`` and returns the roots to index. ``name`` says which copy
        (the same name, the same notes: ``make`` runs once per name)."""
        key: Key = ("scratch", name, embed, _embed_env())
        if key not in self.built:
            home = self.factory.mktemp("scratch")
            notes = home / "notes"
            notes.mkdir()
            roots = list(make(notes))
            run = self._index(home / "built.db", roots, embed)
            pristine = home / "pristine"
            shutil.copytree(notes, pristine, symlinks=True)
            self.built[key] = Built(home / "built.db", run, notes, pristine)
        return self.built[key]

    def copy_of(self, folders: Sequence[str], *, embed: bool = True) -> Built:
        """The index of a scratch copy of the corpus folders ``folders`` (``"org"``,
        ``"markdown/foam"`` …), each copied to ``<notes>/<folder>`` and indexed as its own
        root, in this order."""
        def make(notes: Path) -> list[Path]:
            for folder in folders:
                shutil.copytree(CORPUS / folder, notes / folder)
            return [notes / folder for folder in folders]

        return self.scratch("copy of " + ", ".join(folders), make, embed=embed)

    def _index(self, db: Path, roots: list[Path], embed: bool) -> Run:
        self.builds += 1
        with Cairn.open(db=db) as c:
            return c.index(roots, embed=embed)
