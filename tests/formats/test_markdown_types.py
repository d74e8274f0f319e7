"""types.yaml: loading, errors, and per-note validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.errors import ConfigError
from cairn.formats import markdown
from cairn.formats.types import CHUNK_PROFILES, load_types, parse_types, validate_note
from cairn.model import Document

TYPES = """
types:
  person:
    required: [name, email]
    fields:
      email: string
      born: date
      role: {enum: [lead, member]}
      links: link
      score: number
    chunk_profile: short
    retriever_weight: 1.5
    edges:
      works_at: employed_by
    aliases: [people]
  meeting:
    chunk_profile: {max_tokens: 300, overlap: 30}
unknown_types: warn
"""


def note(front: str) -> Document:
    return markdown.parse(f"---\n{front}\n---\nBody\n", "n.md")


def test_load(tmp_path: Path) -> None:
    path = tmp_path / "types.yaml"
    path.write_text(TYPES, encoding="utf-8")
    reg = load_types(path)
    person = reg.get("Person")
    assert person is not None and reg.get("people") is person
    assert person.required == ("name", "email")
    assert person.chunk_profile == CHUNK_PROFILES["short"]
    assert person.edges == {"works_at": "employed_by"}
    assert reg.retriever_weight("person") == 1.5 and reg.retriever_weight("other") == 1.0
    assert reg.chunk_profile("meeting").max_tokens == 300
    assert reg.chunk_profile(None) == CHUNK_PROFILES["default"]


def test_valid_note_has_no_warnings() -> None:
    reg = parse_types(TYPES)
    doc = note(
        "type: person\nname: Ann\nemail: a@x.org\nborn: 1990-01-02\nrole: lead\n"
        'links: ["[[Acme]]"]\nscore: 3'
    )
    assert validate_note(doc, reg) == []


def test_missing_unknown_and_malformed() -> None:
    reg = parse_types(TYPES)
    doc = note("type: person\nname: ''\nborn: someday\nrole: boss\nscore: high")
    messages = [d.message for d in validate_note(doc, reg)]
    assert any("'name', which is empty" in m for m in messages)
    assert any("'email', which is missing" in m for m in messages)
    assert any("'born'" in m and "a date" in m for m in messages)
    assert any("'role'" in m and "one of lead, member" in m for m in messages)
    assert any("'score'" in m and "a number" in m for m in messages)
    assert all(d.severity == "warning" and d.path == "n.md" for d in validate_note(doc, reg))
    unknown = validate_note(note("type: robot"), reg)
    assert len(unknown) == 1 and "unknown note type 'robot'" in unknown[0].message
    assert validate_note(note("title: untyped"), reg) == []
    quiet = parse_types(TYPES.replace("unknown_types: warn", "unknown_types: ignore"))
    assert validate_note(note("type: robot"), quiet) == []


@pytest.mark.parametrize(
    "text",
    [
        "types: [a, b]",
        "types:\n  x:\n    retriever_weight: -1",
        "types:\n  x:\n    chunk_profile: giant",
        "types:\n  x:\n    fields: {a: colour}",
        "types:\n  x:\n    chunk_profile: {max_tokens: 10, overlap: 20}",
        "types: {x: {required: 3}}",
        "types:\n  x: [unclosed",
        "unknown_types: shout",
    ],
)
def test_malformed_types_file(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_types(text)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_types(tmp_path / "missing.yaml")
