"""A note with thousands of links indexes in work linear in its links.

Link resolution stores each link's resolution by ``(unit_id, ordinal)`` and the graph
step prunes stub nodes no edge points at. Both were once one statement per link or stub
that scanned all the unit's links (or all edges): one note of 16,000 links took minutes,
and an interrupted run started the same work again on every later run. The work is
counted in SQLite virtual-machine steps (a progress handler on every connection the
store opens), which does not depend on the machine's load.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.store.sqlite import base as sqlite_base

_STEP = 1000  # VM instructions between two progress-handler calls


@pytest.fixture
def vm_steps(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """A one-item list holding the SQLite VM steps (in thousands) run so far by every
    connection the store opens."""
    count = [0]
    connect = sqlite_base.SQLiteBase._connect

    def counting(self: sqlite_base.SQLiteBase) -> sqlite3.Connection:
        conn = connect(self)

        def tick() -> int:
            count[0] += 1
            return 0

        conn.set_progress_handler(tick, _STEP)
        return conn

    monkeypatch.setattr(sqlite_base.SQLiteBase, "_connect", counting)
    yield count


def _index_note_with_links(tmp_path: Path, n: int, steps: list[int], ext: str) -> int:
    root = tmp_path / f"v{n}{ext}"
    root.mkdir()
    if ext == ".md":
        text = "# x\n\n" + " ".join(f"[[t {i}]]" for i in range(n)) + "\n"
    else:
        text = "* x\n" + " ".join(f"[[file:t{i}.org][t {i}]]" for i in range(n)) + "\n"
    (root / f"l{ext}").write_text(text, encoding="utf-8")
    config = Config(db_path=tmp_path / f"v{n}{ext}.db", embed={"provider": "none"})
    with Cairn(config) as c:
        before = steps[0]
        c.index([str(root)], embed=False)
        work = steps[0] - before
    return work


@pytest.mark.parametrize("ext", [".md", ".org"])
def test_index_work_grows_linearly_with_the_links_of_one_note(
    tmp_path: Path, vm_steps: list[int], ext: str
) -> None:
    small = _index_note_with_links(tmp_path, 1000, vm_steps, ext)
    large = _index_note_with_links(tmp_path, 8000, vm_steps, ext)
    # 8x the links: linear work is about 8x; quadratic was over 60x
    assert large <= 12 * small, (small, large)


def test_every_link_of_a_link_heavy_note_is_resolved(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "t 3.md").write_text("# t 3\n", encoding="utf-8")
    (root / "l.md").write_text(
        "# x\n\n" + " ".join(f"[[t {i}]]" for i in range(3000)) + "\n", encoding="utf-8"
    )
    with Cairn(Config(db_path=tmp_path / "i.db", embed={"provider": "none"})) as c:
        c.index([str(root)], embed=False)
        rows = c.store.db.execute(
            "SELECT count(*), count(resolved_document_id), count(unresolved_reason) "
            "FROM links"
        ).fetchone()
    assert tuple(rows) == (3000, 1, 2999)
