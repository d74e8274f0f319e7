"""Incremental indexing on a real folder and a real SQLite file."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.model.serialize import to_data


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data, encoding="utf-8")


VAULT = {
    "MEMORY.md": "# Memory\n\nLong-term notes.\n",
    "memory/2024-05-01.md": "# May first\n\nThe boiler was serviced.\n",
    "memory/2024-05-02.md": "# May second\n\nBought four chairs.\n",
    "plan.org": (
        "#+TITLE: Plan\n* TODO Fix the gate :home:\n:PROPERTIES:\n"
        ":ID: 11111111-2222-4333-8444-555555555555\n:END:\nHinges are rusty.\n"
        "* Later\nNothing yet.\n"
    ),
    "bread.txt": "Sourdough\n\nFeed the starter.\n",
}


def _ids(c: Cairn) -> dict[str, tuple[int, str]]:
    rows = c.store.db.execute(
        "SELECT u.id, u.rowid, d.path, u.ordinal FROM units u JOIN documents d "
        "ON d.id = u.document_id"
    ).fetchall()
    return {f"{r[2]}#{r[3]}": (r[1], r[0]) for r in rows}


def _paths(c: Cairn, query: str) -> list[str]:
    return [h.path for h in c.search(query).hits]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    _write(root, VAULT)
    return root


def test_second_run_changes_nothing_and_keeps_ids(vault: Path, tmp_path: Path) -> None:
    with Cairn.open(db=tmp_path / "i.db") as c:
        first = c.index([vault])
        assert (first.seen, first.added, first.failed) == (5, 5, 0)
        before = _ids(c)
        second = c.index([vault])
        assert (second.added, second.changed, second.removed, second.unchanged) == (0, 0, 0, 5)
        assert _ids(c) == before
    with Cairn.open(db=tmp_path / "other.db") as c2:
        c2.index([vault])
        assert {k: v[1] for k, v in _ids(c2).items()} == {k: v[1] for k, v in before.items()}


def test_declared_org_id_becomes_the_unit_id(vault: Path, tmp_path: Path) -> None:
    pytest.importorskip("cairn.formats.org")
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([vault])
        view = to_data(c.show("11111111-2222-4333-8444-555555555555"))
        assert view["kind"] == "unit"
        assert view["unit"]["title"] == "Fix the gate"
        assert view["unit"]["todo"] == "TODO"


def test_touch_without_change_keeps_fts_rows(vault: Path, tmp_path: Path) -> None:
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([vault])
        before = _ids(c)
        fts = c.store.counts()["fts_rows"]
        later = time.time() + 5
        os.utime(vault / "MEMORY.md", (later, later))
        run = c.index()
        assert (run.changed, run.unchanged) == (0, 5)
        assert c.store.counts()["fts_rows"] == fts
        assert _ids(c) == before
        assert c.notes.check() == []


def test_one_change_reindexes_only_that_file(vault: Path, tmp_path: Path) -> None:
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([vault])
        before = _ids(c)
        with (vault / "MEMORY.md").open("a", encoding="utf-8") as fh:
            fh.write("Also: the fern needs repotting.\n")
        run = c.index()
        assert (run.changed, run.unchanged, run.added) == (1, 4, 0)
        after = _ids(c)
        untouched = {k: v for k, v in before.items() if not k.startswith("MEMORY.md")}
        assert {k: after[k] for k in untouched} == untouched  # same rowids, same ids
        assert _paths(c, "repotting") == ["MEMORY.md"]
        assert _paths(c, "boiler") == ["memory/2024-05-01.md"]
        assert _paths(c, "chairs") == ["memory/2024-05-02.md"]
        assert c.store.counts()["documents"] == 5


def test_overwrite_replaces_old_text(vault: Path, tmp_path: Path) -> None:
    _write(vault, {"flowers.md": "# Flowers\n\nversion one marigold\n"})
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([vault])
        assert _paths(c, "marigold") == ["flowers.md"]
        (vault / "flowers.md").write_text("# Flowers\n\nversion two sunflower\n")
        os.utime(vault / "flowers.md", (time.time() + 3, time.time() + 3))
        run = c.index()
        assert run.changed == 1
        assert _paths(c, "sunflower") == ["flowers.md"]
        assert _paths(c, "marigold") == []
        docs = c.store.db.execute(
            "SELECT count(*) FROM documents WHERE path='flowers.md'"
        ).fetchone()[0]
        assert docs == 1


def test_deleting_a_file_removes_only_its_units(vault: Path, tmp_path: Path) -> None:
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([vault])
        n_units = c.store.counts()["units"]
        mine = sum(1 for k in _ids(c) if k.startswith("bread.txt"))
        (vault / "bread.txt").unlink()
        run = c.index()
        assert run.removed == 1
        assert c.store.counts()["units"] == n_units - mine
        assert c.store.counts()["fts_rows"] == n_units - mine
        assert _paths(c, "sourdough") == []
        assert _paths(c, "boiler") == ["memory/2024-05-01.md"]


def test_bad_files_are_failures_and_the_rest_is_indexed(vault: Path, tmp_path: Path) -> None:
    latin1 = "caf\xe9 cr\xe8me".encode("latin-1")
    _write(vault, {"binary.md": b"\x89PNG\x00\x00\x00", "latin1.md": latin1})
    with Cairn.open(db=tmp_path / "i.db") as c:
        run = c.index([vault])
        assert run.seen == 7
        assert run.added + run.failed + run.skipped == run.seen
        assert [f.path for f in run.failures] == ["binary.md"]
        assert "NUL" in run.failures[0].reason
        assert any(w.path == "latin1.md" and "invalid UTF-8" in w.message for w in run.warnings)
        assert _paths(c, "boiler") == ["memory/2024-05-01.md"]
        stats = to_data(c.stats())
        assert [f["path"] for f in stats["failed_files"]] == ["binary.md"]


def test_a_later_bad_version_keeps_the_indexed_one(vault: Path, tmp_path: Path) -> None:
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([vault])
        (vault / "bread.txt").write_bytes(b"Sourdough\x00\x00")
        os.utime(vault / "bread.txt", (time.time() + 3, time.time() + 3))
        run = c.index()
        assert run.failed == 1
        assert _paths(c, "starter") == ["bread.txt"]


def test_missing_root_does_not_wipe_the_index(vault: Path, tmp_path: Path) -> None:
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([vault])
        n = c.store.counts()["documents"]
        vault.rename(tmp_path / "elsewhere")
        run = c.index()
        assert run.failed == 1 and "missing" in run.failures[0].reason
        assert c.store.counts()["documents"] == n


def test_store_refuses_foreign_and_newer_databases(tmp_path: Path) -> None:
    from cairn.errors import StoreError
    from cairn.store import open_store
    from cairn.store.sqlite import SCHEMA_VERSION

    foreign = tmp_path / "foreign.db"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE x(y)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="not a cairn index"):
        open_store(foreign)
    good = tmp_path / "good.db"
    s = open_store(good)
    assert s.schema_version == SCHEMA_VERSION
    s.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    s.close()
    with pytest.raises(StoreError, match="newer"):
        open_store(good)


def test_changed_settings_parse_every_file_again(tmp_path: Path) -> None:
    pytest.importorskip("cairn.formats.org")
    from cairn.config import Config, OrgConfig

    root = tmp_path / "notes"
    _write(root, {"p.org": "* Top :project:\n** Child\nbody words\n"})
    db = tmp_path / "i.db"
    with Cairn(Config(db_path=db, org=OrgConfig(tags_exclude_from_inheritance=("project",)))) as c:
        c.index([root])
        assert [h.title for h in c.search("tag:project").hits] == ["Top"]
    with Cairn(Config(db_path=db)) as c:
        run = c.index()
        assert run.changed == 1
        assert {h.title for h in c.search("tag:project").hits} == {"Top", "Child"}
        assert c.index().changed == 0


def test_nested_roots_are_refused(tmp_path: Path, vault: Path) -> None:
    from cairn.errors import CairnError

    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([vault])
        with pytest.raises(CairnError, match="inside the registered folder"):
            c.index([vault / "memory"])
        with pytest.raises(CairnError, match="holds the registered folder"):
            c.index([tmp_path])
        assert c.index([vault]).unchanged == 5  # the same folder again is fine
