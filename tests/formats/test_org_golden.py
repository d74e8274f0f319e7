"""Golden tests for the Org parser: tests/golden/org/*.org against *.json.

Each ``NN-name.json`` holds the expected document and units; every field present in the
expected JSON is compared (field by field, so a failure names the unit and field). An
optional ``NN-name.options.json`` gives :class:`OrgOptions` fields. The expectations were
written from the Org syntax document and the Org manual and checked against the input.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from cairn.formats.org import OrgOptions, parse
from cairn.model import Document

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "org"
INPUTS = sorted(GOLDEN.glob("[0-9]*.org"))

UNIT_FIELDS = (
    "ordinal", "kind", "level", "title", "outline_path", "parent", "tags", "inherited_tags",
    "properties", "todo", "todo_state", "priority", "timestamps", "org_id", "custom_id",
    "declared_id", "line_start", "line_end", "links", "language", "body", "extra",
)  # fmt: skip
DOC_FIELDS = ("title", "tags", "aliases", "declared_id", "created", "metadata")


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.name.startswith("resolved_") and f.name != "unresolved_reason"
        }
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict) or hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    return value


def document_json(doc: Document) -> dict[str, Any]:
    """The golden JSON shape of a parsed document."""
    out: dict[str, Any] = {f: _plain(getattr(doc, f)) for f in DOC_FIELDS}
    out["warnings"] = [w.line for w in doc.warnings]
    out["units"] = [{f: _plain(getattr(u, f)) for f in UNIT_FIELDS} for u in doc.units]
    return out


def load_options(org: Path) -> OrgOptions | None:
    opt = org.with_suffix(".options.json")
    if not opt.exists():
        return None
    raw = json.loads(opt.read_text(encoding="utf-8"))
    if "tags_exclude_from_inheritance" in raw:
        raw["tags_exclude_from_inheritance"] = frozenset(raw["tags_exclude_from_inheritance"])
    for key in ("todo_keywords", "inherited_property_keys"):
        if key in raw:
            raw[key] = tuple(raw[key])
    return OrgOptions(**raw)


def test_enough_golden_inputs() -> None:
    assert len(INPUTS) >= 20
    for org in INPUTS:
        assert org.with_suffix(".json").exists(), f"{org.name} has no expected JSON"


@pytest.mark.parametrize("org", INPUTS, ids=[p.stem for p in INPUTS])
def test_golden(org: Path) -> None:
    text = org.read_text(encoding="utf-8")
    got = document_json(parse(text, org.name, load_options(org)))
    want = json.loads(org.with_suffix(".json").read_text(encoding="utf-8"))
    for key in (*DOC_FIELDS, "warnings"):
        if key in want:
            assert got[key] == want[key], f"document {key}"
    assert len(got["units"]) == len(want["units"]), [u["title"] for u in got["units"]]
    for g, w in zip(got["units"], want["units"], strict=True):
        for key, value in w.items():
            assert g[key] == value, f"unit {w.get('ordinal')} ({w.get('title')!r}): {key}"
