"""A scratch copy of part of the shared corpus, indexed (never the corpus itself).

Each set of corpus parts is copied and indexed once per session (:class:`Scratches`);
a test gets its own copy of that index and a pristine copy of the notes at the path the
index was built over, because an index records its roots as absolute paths. Tests run
one at a time, so no test sees another's writes, and none waits for an index run.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cairn.app import Cairn

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
PARTS = {
    "org": ["organice", "orgparse", "org-roam"],
    "markdown": ["kepano-obsidian"],
    "okf": ["knowledge-catalog"],
}
RENAMED_FROM = "References/Kevin Kelly.md"
RENAMED_TO = "References/Kevin J Kelly.md"
CONTRADICTING = "Notes/2023 Japan Trip.md"

Parts = dict[str, list[str]]


def make_scratch(base: Path, parts: Parts | None = None) -> Path:
    """Copy corpus folders under ``base/<format>/``; rename one linked note (so its
    links break) and declare one ``contradicts`` relation."""
    for fmt, names in (parts or PARTS).items():
        for name in names:
            shutil.copytree(CORPUS / fmt / name, base / fmt / name)
    kepano = base / "markdown" / "kepano-obsidian"
    if kepano.is_dir():
        (kepano / RENAMED_FROM).rename(kepano / RENAMED_TO)
        note = kepano / CONTRADICTING
        text = note.read_text(encoding="utf-8")
        assert text.startswith("---\n")
        note.write_text('---\ncontradicts: "[[Steph Ango]]"\n' + text[4:], encoding="utf-8")
    return base


def index_scratch(base: Path, db: Path) -> Cairn:
    """Index every format folder of ``base`` as its own root."""
    cairn = Cairn.open(db=db)
    cairn.index([base / fmt for fmt in sorted(p.name for p in base.iterdir() if p.is_dir())])
    return cairn


def _writable_then_retry(func: Callable[[str], object], path: str, _exc: object) -> None:
    """Let ``rmtree`` remove what a read-only copy of the corpus holds: make the folder
    writable and try again."""
    os.chmod(os.path.dirname(path), 0o755)
    func(path)


@dataclass(frozen=True)
class Built:
    """One set of parts, indexed: the index file (closed, never opened again), the notes
    folder it was built over, and an untouched copy of those notes."""

    notes: Path
    db: Path
    pristine: Path

    def checkout(self, db: Path) -> Path:
        """Put the pristine notes back at :attr:`notes` (whatever an earlier test did
        to them) and copy the index to ``db``; returns the notes folder. ``copytree``
        keeps modification times, so the index sees every file as unchanged."""
        if self.notes.exists():
            shutil.rmtree(self.notes, onerror=_writable_then_retry)
        shutil.copytree(self.pristine, self.notes, symlinks=True)
        shutil.copyfile(self.db, db)
        return self.notes


@dataclass
class Scratches:
    """Scratch corpora built on first use, one per set of parts (and purpose)."""

    factory: pytest.TempPathFactory
    built: dict[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], Built] = field(
        default_factory=dict)

    def get(self, parts: Parts | None = None, *, purpose: str = "write") -> Built:
        """The indexed scratch corpus of ``parts`` (default :data:`PARTS`); ``purpose``
        keeps corpora apart whose notes folders must not be shared."""
        chosen = parts or PARTS
        key = (purpose, tuple(sorted((f, tuple(sorted(n))) for f, n in chosen.items())))
        if key not in self.built:
            home = self.factory.mktemp("scratch")
            notes = make_scratch(home / "notes", chosen)
            index_scratch(notes, home / "built.db").close()
            pristine = home / "pristine"
            shutil.copytree(notes, pristine, symlinks=True)
            self.built[key] = Built(notes, home / "built.db", pristine)
        return self.built[key]


@pytest.fixture(scope="session")
def scratches(tmp_path_factory: pytest.TempPathFactory) -> Scratches:
    """The session's scratch corpora, each indexed once."""
    return Scratches(tmp_path_factory)


@pytest.fixture(scope="module")
def scratch(scratches: Scratches) -> Path:
    """The scratch corpus (:data:`PARTS`) and its index at ``<notes>/../index.db``, for
    the read-only tests of a module."""
    built = scratches.get(purpose="read")
    return built.checkout(built.notes.parent / "index.db")


@pytest.fixture
def fresh(scratches: Scratches, tmp_path: Path) -> Iterator[Callable[..., tuple[Path, Cairn]]]:
    """``fresh(parts=None) -> (notes, cairn)``: a pristine scratch corpus and its open
    index at ``tmp_path / "index.db"``, for tests that write."""
    opened: list[Cairn] = []

    def make(parts: Parts | None = None) -> tuple[Path, Cairn]:
        base = scratches.get(parts).checkout(tmp_path / "index.db")
        c = Cairn.open(db=tmp_path / "index.db")
        opened.append(c)
        return base, c

    yield make
    for c in opened:
        c.close()
