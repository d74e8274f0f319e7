"""A graph node's JSON by kind — a unit, a stub, an id the index no longer knows — with
and without a backlink's line, as ``cairn graph … --json`` shows it (the three kinds
are one type, :class:`~cairn.model.GraphNode`)."""

from __future__ import annotations

import dataclasses

from cairn.model import GraphNode
from cairn.model.serialize import to_data

UNIT = GraphNode("u1", "unit", "Alpha", "heading", document_id="d1", doc_title="A",
                 doc_type=None, path="a.md", abs_path="/v/a.md", line=3,
                 outline_path=("A", "Alpha"))
STUB = GraphNode("s1", "stub", "Missing", "note", target="Missing", reason="no such note")


def test_a_unit_shows_its_document_and_outline() -> None:
    assert to_data(UNIT) == {
        "id": "u1", "type": "unit", "title": "Alpha", "kind": "heading",
        "document_id": "d1", "doc_title": "A", "doc_type": None, "path": "a.md",
        "abs_path": "/v/a.md", "line": 3, "outline_path": ["A", "Alpha"]}
    assert to_data(dataclasses.replace(UNIT, line=9))["line"] == 9


def test_a_stub_shows_its_target_and_reason_and_no_document() -> None:
    assert to_data(STUB) == {
        "id": "s1", "type": "stub", "title": "Missing", "kind": "note",
        "target": "Missing", "reason": "no such note", "document_id": None, "path": None}
    assert to_data(dataclasses.replace(STUB, line=4))["line"] == 4


def test_an_unknown_id_shows_only_its_id_and_a_backlinks_line() -> None:
    gone = GraphNode.unknown("x9")
    assert gone.type is None
    assert to_data(gone) == {"id": "x9"}
    assert to_data(dataclasses.replace(gone, line=7)) == {"id": "x9", "line": 7}
