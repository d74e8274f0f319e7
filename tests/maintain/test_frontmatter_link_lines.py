"""A link inside a front matter list is reported on the item's own line (dream, backlinks
and the parsed link), not on the line of the list's key."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.formats import markdown

KEPANO = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "markdown" / "kepano-obsidian"


def test_each_list_item_link_has_its_own_line() -> None:
    text = (
        '---\ntitle: x\nrelated:\n  - "[[A]]"\n  - "[[B]]"\n  - "[[A]]"\n'
        'up: "[[C]]"\nmeta: {k: "[[D]]"}\n---\nbody [[E]]\n'
    )
    doc = markdown.parse(text, "x.md")
    got = [(ln.target, ln.line) for u in doc.units for ln in u.links]
    assert got == [("A", 4), ("B", 5), ("A", 6), ("C", 7), ("D", 8), ("E", 10)]


@pytest.mark.corpus
def test_dream_and_backlinks_name_the_item_line_on_kepanos_vault(tmp_path: Path) -> None:
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([KEPANO])
        report = c.maintain.run(only=["broken"], today=date(2026, 12, 7)).as_data()["report"]
        broken = {
            (f["path"], f["line"]) for f in report["findings"]
            if f["path"].endswith("References/The Machine Stops.md")
        }
        back = c.graph.backlinks("Categories/Books.md")
    # author:\n  - "[[E. M. Forster]]" (line 5); topics:\n  - "[[Humanism]]" (line 12)
    note = (KEPANO / "References" / "The Machine Stops.md").resolve().as_posix()
    assert broken == {(note, 5), (note, 12)}
    # categories:\n  - "[[Books]]" is line 3 of the note
    lines = {b.source.path: b.lines for b in back.backlinks}
    assert lines["References/The Machine Stops.md"] == (3,)
