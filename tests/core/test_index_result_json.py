"""``Cairn.stats()`` and ``Cairn.notes.validate()`` are typed results read by attribute,
and the JSON of ``cairn stats --json`` / ``cairn validate --json`` is theirs through
``to_data``, with its keys in today's order: pinned on a vault holding a failed file, a
document warning and a type problem, through the real CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.model.index_results import IndexStats, ValidationFinding
from cairn.model.serialize import to_data

STATS_KEYS = ["db", "schema_version", "roots", "files", "documents", "units", "links",
              "links_resolved", "links_unresolved", "fts_rows", "failed_files", "formats",
              "last_run", "warnings", "units_waiting"]


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, Path]:
    """``(vault, index file)``: a vault with a truncated chat export (a failed file),
    front matter that is not YAML (a document warning) and a note of an unknown type."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "types.yaml").write_text("types:\n  person:\n    required: [email]\n")
    (vault / "odd.md").write_text("---\ntype: spaceship\n---\n# Odd\n\nSee [[Nowhere]].\n")
    (vault / "colon.md").write_text("---\ntitle: a: b\n---\n# Colon\n")
    (vault / "conversations.json").write_text('[{"broken": ')
    db = tmp_path / "i.db"
    with Cairn.open(db=db) as c:
        c.index([vault])
    return vault, db


def test_stats_is_typed_and_its_json_keeps_its_keys(
    indexed: tuple[Path, Path], cli: Callable[..., Any]
) -> None:
    _, db = indexed
    with Cairn.open(db=db) as c:
        st = c.stats()
    assert isinstance(st, IndexStats)
    assert st.documents >= 2 and st.formats["markdown"].documents == 2
    assert [f.path for f in st.failed_files] == ["conversations.json"]
    assert [w.path for w in st.warnings] == ["colon.md"] and st.warnings[0].line == 2
    assert st.last_run is not None and st.last_run.failed == 1

    # the embedding settings of the in-process Cairn (units_waiting counts for them)
    data = cli("--db", str(db), "stats", "--json", env={"CAIRN_EMBED": "none"}).json()
    assert list(data) == STATS_KEYS
    assert list(data["formats"]["markdown"]) == ["documents", "units"]
    assert list(data["failed_files"][0]) == ["root", "path", "status", "reason", "line"]
    assert list(data["warnings"][0]) == ["root", "path", "message", "line", "severity"]
    data["last_run"].pop("graph"), data["last_run"].pop("embedding")
    expected = to_data(st)
    expected["last_run"].pop("graph"), expected["last_run"].pop("embedding")
    assert data == expected


def test_validate_findings_are_typed_and_their_json_keeps_its_keys(
    indexed: tuple[Path, Path], cli: Callable[..., Any]
) -> None:
    _, db = indexed
    with Cairn.open(db=db) as c:
        found = c.notes.validate()
    assert all(isinstance(d, ValidationFinding) for d in found)
    assert any(d.path == "vault/odd.md" and "spaceship" in d.message for d in found)

    res = cli("--db", str(db), "validate", "--json", check=False)
    data = res.json()
    assert list(data) == ["ok", "errors", "diagnostics"]
    assert [list(d) for d in data["diagnostics"]] == [
        ["path", "line", "severity", "message"]] * len(found)
    assert data["diagnostics"] == to_data(found)
    assert data["errors"] == sum(d.severity == "error" for d in found)
