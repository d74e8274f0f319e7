"""A scratch copy of part of the shared corpus, indexed (never the corpus itself)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
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


def make_scratch(base: Path, parts: dict[str, list[str]] | None = None) -> Path:
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


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scratch corpus, indexed once for the read-only tests of a module."""
    base = make_scratch(tmp_path_factory.mktemp("scratch") / "notes")
    index_scratch(base, base.parent / "index.db").close()
    return base


@pytest.fixture
def fresh(tmp_path: Path) -> Callable[..., tuple[Path, Cairn]]:
    """A new scratch corpus and its open index, for tests that write."""
    opened: list[Cairn] = []

    def make(parts: dict[str, list[str]] | None = None) -> tuple[Path, Cairn]:
        base = make_scratch(tmp_path / "notes", parts)
        c = index_scratch(base, tmp_path / "index.db")
        opened.append(c)
        return base, c

    yield make  # type: ignore[misc]
    for c in opened:
        c.close()
