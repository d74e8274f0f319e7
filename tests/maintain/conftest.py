"""A scratch copy of part of the shared corpus, indexed (never the corpus itself).

Each set of corpus parts is copied and indexed once per session (:class:`Scratches`, on
the session's ``corpus_indexes``); a test gets its own copy of that index and a pristine
copy of the notes at the path the index was built over, because an index records its
roots as absolute paths. Tests run one at a time, so no test sees another's writes, and
none waits for an index run.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from _corpus_index import Built, CorpusIndexes
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


def _parts_key(parts: Parts) -> str:
    """The name of the scratch copy of ``parts``: the same parts, the same name."""
    return ";".join(f"{f}:{','.join(sorted(n))}" for f, n in sorted(parts.items()))


@dataclass
class Scratches:
    """Scratch corpora of corpus parts (:func:`make_scratch`), each indexed once per
    session by the shared :class:`_corpus_index.CorpusIndexes`."""

    indexes: CorpusIndexes

    def get(self, parts: Parts | None = None, *, purpose: str = "write") -> Built:
        """The indexed scratch corpus of ``parts`` (default :data:`PARTS`), each format
        folder its own root; ``purpose`` keeps corpora apart whose notes folders must not
        be shared."""
        chosen = parts or PARTS

        def make(notes: Path) -> list[Path]:
            make_scratch(notes, chosen)
            return [notes / fmt for fmt in sorted(p.name for p in notes.iterdir()
                                                  if p.is_dir())]

        return self.indexes.scratch(f"maintain {purpose} {_parts_key(chosen)}", make)


@pytest.fixture(scope="session")
def scratches(corpus_indexes: CorpusIndexes) -> Scratches:
    """The session's scratch corpora, each indexed once."""
    return Scratches(corpus_indexes)


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
