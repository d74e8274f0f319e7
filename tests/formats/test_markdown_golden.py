"""Golden tests: tricky Markdown notes under tests/golden/markdown/ and their expected
parse, compared field by field.

Each ``NN-name.md`` has a ``NN-name.json`` beside it. The JSON files were produced by
the parser and then read line by line against the note (title rule, each unit's line
span, body text, tags, links with line numbers); corrections went into the parser,
not the JSON. Regenerate after a deliberate change with ``CAIRN_UPDATE_GOLDEN=1`` and
review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from cairn.formats import markdown
from cairn.model import Document

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "markdown"
NOTES = sorted(GOLDEN.glob("*.md"))


def snapshot(doc: Document) -> dict[str, Any]:
    """The fields of a parsed note that the golden files pin down."""
    return {
        "title": doc.title,
        "tags": list(doc.tags),
        "aliases": list(doc.aliases),
        "metadata": dict(doc.metadata),
        "created": doc.created,
        "modified": doc.modified,
        "type": doc.type,
        "visibility": doc.visibility,
        "declared_id": doc.declared_id,
        "warnings": [{"line": w.line, "severity": w.severity} for w in doc.warnings],
        "units": [
            {
                "ordinal": u.ordinal,
                "kind": u.kind,
                "level": u.level,
                "title": u.title,
                "outline_path": list(u.outline_path),
                "parent": u.parent,
                "lines": [u.line_start, u.line_end],
                "tags": list(u.tags),
                "inherited_tags": list(u.inherited_tags),
                "body": u.body,
                "extra": dict(u.extra),
                "links": [
                    {
                        "kind": link.kind,
                        "target": link.target,
                        "anchor": link.anchor,
                        "alias": link.alias,
                        "line": link.line,
                    }
                    for link in u.links
                ],
            }
            for u in doc.units
        ],
    }


def test_there_are_at_least_twenty_golden_notes() -> None:
    assert len(NOTES) >= 20


@pytest.mark.parametrize("note", NOTES, ids=[p.stem for p in NOTES])
def test_golden(note: Path) -> None:
    text = note.read_bytes().decode("utf-8")
    doc = markdown.parse(text, note.name)
    got = json.loads(json.dumps(snapshot(doc), ensure_ascii=False))
    expected_path = note.with_suffix(".json")
    if os.environ.get("CAIRN_UPDATE_GOLDEN") == "1":
        expected_path.write_text(
            json.dumps(got, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    expected = json.loads(expected_path.read_text(encoding="utf-8"))
    for key in expected:
        if key == "units":
            continue
        assert got[key] == expected[key], f"{note.name}: field {key!r}"
    assert len(got["units"]) == len(expected["units"]), f"{note.name}: number of units"
    for got_unit, exp_unit in zip(got["units"], expected["units"], strict=True):
        for key in exp_unit:
            assert got_unit[key] == exp_unit[key], (
                f"{note.name}: unit {exp_unit['ordinal']} field {key!r}"
            )
    # metadata must be plain JSON
    json.dumps(doc.metadata)
