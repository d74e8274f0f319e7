"""``memory verify`` names a memory deleted behind cairn's back: one a concept still
names as a source, and one the index still holds; the CLI exits non-zero."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.cli import app


def _verify(db: Path, bundle: Path) -> tuple[int, dict[str, object]]:
    res = CliRunner().invoke(app, ["--db", str(db), "memory", "verify", "-b", str(bundle),
                                   "--json"])
    return res.exit_code, json.loads(res.output)


def test_a_deleted_memory_is_reported(tmp_path: Path) -> None:
    bundle, db = tmp_path / "mem", tmp_path / "i.db"
    with Cairn(load_config(db=db)) as c:
        c.memory.remember(bundle, "Alice leads the payments team", tags=["team"])
        c.memory.consolidate(bundle, embed=False, llm=False)
        pending = c.memory.remember(bundle, "The build needs Python 3.12", tags=["build"])
    assert _verify(db, bundle)[0] == 0
    (subsumed,) = bundle.glob("memories/subsumed/*.md")
    (concept,) = bundle.glob("concepts/active/*.md")
    subsumed.unlink()
    (bundle / pending.path).unlink()
    code, data = _verify(db, bundle)
    assert code == 1 and data["ok"] is False
    got = {(p["path"], p["reason"]) for p in data["problems"]}  # type: ignore[attr-defined]
    assert got == {
        (f"memories/subsumed/{subsumed.name}",
         f"missing: concepts/active/{concept.name} names it as a source"),
        (f"memories/subsumed/{subsumed.name}", "missing: deleted, yet the index still holds it"),
        (pending.path, "missing: deleted, yet the index still holds it"),
    }
