"""What the graph says about a link reads the way the link was written:

* ``--expand --explain`` gives an edge in the link's direction (``B —references→ A`` for
  a link from B to A, never walked backwards);
* ``graph backlinks`` gives the line of the link, not the linking unit's first line;
* ``graph orphans`` lists one entry per document with its id and title (a
  multi-conversation chat export is not one path repeated per conversation).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cairn.formats.markdown")

from cairn.errors import QueryError

CASES = Path(__file__).resolve().parents[3] / "shared" / "cases"


def test_explain_gives_the_edge_in_the_links_direction(make_vault: Any) -> None:
    v = make_vault({
        "guide.md": "# Guide\n\nFor small flats see [[Worm bins]].\n",
        "worm bins.md": "# Worm bins\n\nRed wigglers.\n",
    })
    guide, worms = v.uid("guide.md#Guide"), v.uid("worm bins.md#Worm bins")
    # the seed is the linked note: the walk goes against the link, back to the guide
    (hit,) = [h for h in v.graph.expand([(worms, 1.0)]) if h.unit_id == guide]
    (path,) = v.graph.explain(hit)["paths"]
    # up from the heading to its note's first unit, then back along the link
    (edge,) = [e for e in path["edges"] if e["relation"] != "parent"]
    assert edge["direction"] == "in"
    assert edge["relation"] == "references"
    assert edge["from"]["title"] == "Guide" and edge["from"]["path"] == "guide.md"
    assert edge["to"]["path"] == "worm bins.md"
    assert edge["walked_to"] == guide
    assert edge["walked_from"] == v.uid("worm bins.md#")
    # walked forwards, from and to are the walk's ends too
    (hit2,) = [h for h in v.graph.expand([(guide, 1.0)]) if h.unit_id == worms]
    (edge2,) = v.graph.explain(hit2)["paths"][0]["edges"]
    assert edge2["direction"] == "out" and edge2["from"]["title"] == "Guide"


def test_backlinks_give_the_line_of_the_link(make_vault: Any) -> None:
    v = make_vault({
        "target.md": "# Target\n\nHere.\n",
        "source.md": "# Source\n\nline three\nline four\nsee [[target]] on line five\n\n"
                     "and [[target]] again on seven\n",
    })
    data = v.graph.backlinks("target.md")
    (b,) = data.backlinks
    assert b.source.path == "source.md"
    assert b.lines == (5, 7)
    assert b.source.line == 5  # the unit starts on line 1


def test_orphans_are_documents_with_id_and_title(make_vault: Any, tmp_path: Path) -> None:
    export = CASES / "029-chatgpt-export-top-level-array" / "conversations.json"
    if not export.is_file():
        pytest.skip("shared cases not beside this clone")
    v = make_vault({"lonely.md": "# Lonely\n\nNo links.\n"})
    (v.root / "chats").mkdir()
    shutil.copy(export, v.root / "chats" / "conversations.json")
    v.reindex()
    orphans = v.graph.orphans()
    chats = [o for o in orphans if o.path == "chats/conversations.json"]
    assert len(chats) == 2  # two conversations: two documents
    assert len({o.document_id for o in chats}) == 2
    assert all(o.title and o.format for o in chats)
    assert len({o.document_id for o in orphans}) == len(orphans)
    lonely = next(o for o in orphans if o.path == "lonely.md")
    assert lonely.title == "Lonely" and lonely.abs_path.endswith("/lonely.md")


def test_bad_arguments_raise_query_error(small: Any) -> None:
    with pytest.raises(QueryError):
        small.graph.neighbors("beta.md", direction="sideways")
    with pytest.raises(QueryError):
        small.graph.path("beta.md", "gamma.md", direction="up")
    with pytest.raises(QueryError):
        small.graph.export("dot")
