"""``cairn search --format vimgrep``: each hit's line and column are those of its first
matching word inside the unit (as ``rg --vimgrep``: 1-based, the column in UTF-8
bytes), checked on hand-made files and on real corpus files."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"

GARDEN = """\
---
title: Garden
author: Compost Club
---
# Garden

Beds face south.

## Soil
Loam first.
  Café au lait — then compost, turned weekly.
Compost again.
"""

TASKS = """\
#+TITLE: Tasks
* TODO Order seeds :home:
  SCHEDULED: <2024-03-06 Wed>
  :PROPERTIES:
  :OWNER: Sam
  :END:
  Tomato seeds from the *compost* co-op.
* Compost heap
  Turn it.
"""


def _vimgrep(cli: Callable[..., Any], db: Path, *words: str) -> list[tuple[str, int, int, str]]:
    """``cairn search … --format vimgrep WORDS`` in this process, its lines read."""
    res = cli("--db", str(db), "search", "--mode", "keyword", "--limit", "50", "--format",
              "vimgrep", *words, env={"CAIRN_EMBED": "none", "COLUMNS": None}, check=False)
    assert res.code == 0, res.stderr
    out = []
    for line in res.stdout.splitlines():
        m = re.match(r"^(.*?):(\d+):(\d+):(.*)$", line)
        assert m, line
        out.append((m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)))
    return out


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cairn, Path]]:
    root = tmp_path_factory.mktemp("vimgrep")
    vault = root / "vault"
    vault.mkdir()
    (vault / "garden.md").write_text(GARDEN, encoding="utf-8")
    (vault / "tasks.org").write_text(TASKS, encoding="utf-8")
    with Cairn(Config(db_path=root / "i.db")) as c:
        c.index([vault])
        yield c, vault


def test_line_and_column_of_the_first_matching_word(
    cli: Callable[..., Any], notes: tuple[Cairn, Path]
) -> None:
    cairn, _ = notes
    got = {(Path(p).name, line, col) for p, line, col, _ in _vimgrep(cli, cairn.config.db_path,
                                                                    "compost")}
    # garden.md "## Soil" (line 9): the word is on line 11 after "  Café au lait — then "
    # (é and — are 2 and 3 bytes in UTF-8: column 26, not 23)
    assert ("garden.md", 11, len("  Café au lait — then ".encode()) + 1) in got
    # tasks.org: in the body of "Order seeds" (not on its heading line 2), after "*"
    assert ("tasks.org", 7, len(b"  Tomato seeds from the *") + 1) in got
    # a heading whose own title matches: its heading line, after "* "
    assert ("tasks.org", 8, 3) in got
    # matched by frontmatter only (the meta column): the unit's first line, column 1
    assert ("garden.md", 5, 1) in got


def test_phrases_groups_and_stems_are_located(
    cli: Callable[..., Any], notes: tuple[Cairn, Path]
) -> None:
    cairn, _ = notes
    db = cairn.config.db_path
    hits = {(Path(p).name, line, col) for p, line, col, _ in _vimgrep(cli, db, '"turned weekly"')}
    assert hits == {("garden.md", 11, len("  Café au lait — then compost, ".encode()) + 1)}
    hits = {(Path(p).name, line, col)
            for p, line, col, _ in _vimgrep(cli, db, "(tomato seeds OR loam)")}
    assert hits == {("tasks.org", 2, len("* TODO Order ") + 1), ("garden.md", 10, 1)}
    hits = {(Path(p).name, line) for p, line, _, _ in _vimgrep(cli, db, "turn")}
    assert ("tasks.org", 9) in hits  # "Turn it." in "Compost heap" (line 8 is its heading)


@pytest.mark.corpus
def test_vimgrep_points_at_the_word_in_real_files(cli: Callable[..., Any], tmp_path: Path) -> None:
    manual = CORPUS / "org" / "org-mode" / "doc" / "org-guide.org"
    help_dir = CORPUS / "markdown" / "obsidian-help-NO-LICENCE"
    if not manual.is_file() or not help_dir.is_dir():
        pytest.skip("the shared corpus is not here")
    root = tmp_path / "vault"
    root.mkdir()
    shutil.copyfile(manual, root / "org-guide.org")
    for md in sorted(help_dir.rglob("*.md"))[:150]:
        shutil.copyfile(md, root / md.name)
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([root])
    checked = moved = 0
    for word in ("agenda", "clocking", "plugin", "template"):
        for path, line, col, _ in _vimgrep(cli, tmp_path / "i.db", word):
            raw = Path(path).read_bytes().split(b"\n")[line - 1]
            at = raw[col - 1:].decode("utf-8", "replace").casefold()
            if col == 1 and not at.startswith(word[:4]):
                continue  # matched by metadata or path words, not in the unit's lines
            assert at.startswith(word[:4]), (path, line, col, raw)
            checked += 1
            moved += col > 1 or not raw.lstrip().startswith((b"*", b"#"))
    assert checked >= 40 and moved >= 20  # most hits are not at their heading's column 1
