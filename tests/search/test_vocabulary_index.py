"""The vocabulary query understanding compares a query's phrases with (tags, TODO
keywords, types, properties) is filed in the index when a note is stored and read per
phrase by index look-ups: a search never reads every unit, a one-file change re-files
only that file's values, and a search after it sees them. Real vaults indexed into a
real SQLite file through the ``Cairn`` API."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config

LONG = "A desert planet, a spice, a duke and his son, sand and worms and water. " * 12


def _vault(root: Path) -> Path:
    root.mkdir()
    (root / "dune.md").write_text(f"---\ntags: [books]\ngenre: Sci-fi\n---\n# Dune\n\n{LONG}\n",
                                  encoding="utf-8")
    for i in range(5):
        (root / f"shelf{i}.md").write_text(
            f"---\ntags: [shelf{i}]\n---\n# Shelf {i}\n\nbooks, sci-fi, gardening, compost,"
            " a walnut bench and the potting shed\n", encoding="utf-8")
    (root / "tasks.org").write_text(
        "#+TODO: TODO WAITING | DONE\n* WAITING Plumber visit\n* Waiting rooms\n"
        "waiting rooms, waiting\n", encoding="utf-8")
    return root


@pytest.fixture
def cairn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cairn:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    c = Cairn(Config(db_path=tmp_path / "index.db"))
    c.index([_vault(tmp_path / "vault")])
    return c


def _matched(c: Cairn, query: str) -> dict[str, list[str]]:
    """``path -> matched summands`` of the query's hits."""
    out: dict[str, list[str]] = {}
    for h in c.search(query, mode="keyword", explain=True, limit=20).hits:
        got = [k for k in dict(h.explain).get("summands", {}) if k.startswith("matched ")]
        if got:
            out.setdefault(h.path, []).extend(got)
    return out


def _plans(db: sqlite3.Connection, statements: list[str]) -> list[str]:
    out: list[str] = []
    for sql in statements:
        if sql.lstrip().upper().startswith(("SELECT", "WITH")):
            out += [f"{r[3]}  <- {sql[:120]}" for r in db.execute(f"EXPLAIN QUERY PLAN {sql}")]
    return out


def test_query_understanding_reads_filed_values_not_every_unit(cairn: Cairn) -> None:
    db = cairn.store.db  # type: ignore[attr-defined]
    seen: list[str] = []
    db.set_trace_callback(seen.append)
    try:
        found = _matched(cairn, "sci-fi books waiting")
    finally:
        db.set_trace_callback(None)
    assert sorted(found["dune.md"]) == ["matched property genre=Sci-fi", "matched tag books"]
    assert found["tasks.org"] == ["matched todo WAITING"]
    # FTS5 reads its own small config table on first use; no table of the index is scanned
    scans = [p for p in _plans(db, seen) if p.startswith("SCAN")
             and "VIRTUAL TABLE" not in p and "units_fts_config" not in p]
    assert not scans, scans


def test_a_search_after_a_one_file_change_sees_its_new_tag_property_and_heading(
        cairn: Cairn, tmp_path: Path) -> None:
    root = tmp_path / "vault"
    assert not _matched(cairn, "gardening walnut")  # asked once: nothing is named yet
    (root / "shelf3.md").write_text(
        "---\ntags: [gardening]\nwood: Walnut\n---\n# Shelf 3\n\n## Potting shed\n\n"
        "books, sci-fi\n", encoding="utf-8")
    cairn.index([root])
    found = _matched(cairn, "gardening walnut")
    assert list(found) == ["shelf3.md"]
    assert set(found["shelf3.md"]) == {"matched property wood=Walnut", "matched tag gardening"}
    assert "matched heading Potting shed" in _matched(cairn, "potting shed")["shelf3.md"]
    # the tag and the property gone from the file: no longer named
    (root / "shelf3.md").write_text("# Shelf 3\n\ngardening walnut\n", encoding="utf-8")
    cairn.index([root])
    assert not _matched(cairn, "gardening walnut")


def test_a_one_file_change_refiles_only_that_files_values(cairn: Cairn, tmp_path: Path) -> None:
    db = cairn.store.db  # type: ignore[attr-defined]

    def filed() -> dict[str, set[tuple[object, ...]]]:
        out: dict[str, set[tuple[object, ...]]] = {}
        for r in db.execute("SELECT v.rowid, d.path, v.key, v.kind, v.name, v.value "
                            "FROM vocabulary v JOIN documents d ON d.id = v.document_id"):
            out.setdefault(str(r[1]), set()).add(tuple(r))
        return out

    before = filed()
    assert {p for p in before} == {"dune.md", *(f"shelf{i}.md" for i in range(5)), "tasks.org"}
    (tmp_path / "vault" / "shelf1.md").write_text("---\ntags: [bench]\n---\n# Shelf 1\n",
                                                  encoding="utf-8")
    cairn.index([tmp_path / "vault"])
    after = filed()
    assert {k: v for k, v in after.items() if k != "shelf1.md"} == {
        k: v for k, v in before.items() if k != "shelf1.md"}  # the same rows, not written again
    assert {r[2:] for r in after["shelf1.md"]} == {("bench", "tag", "", "bench")}


def test_an_index_from_before_the_vocabulary_is_filed_when_upgraded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    root = _vault(tmp_path / "vault")
    path = tmp_path / "index.db"
    c = Cairn(Config(db_path=path))
    c.index([root])
    before = {q: _matched(c, q) for q in ("sci-fi", "books waiting", "shelf2")}
    c.close()
    with sqlite3.connect(path) as db:  # the index as schema 5 left it
        db.execute("DROP TABLE vocabulary")
        db.execute("PRAGMA user_version = 5")
    c = Cairn(Config(db_path=path))
    try:  # filed from the stored rows by the upgrade: the same answers, no run needed
        assert {q: _matched(c, q) for q in before} == before
        assert before["sci-fi"]["dune.md"] == ["matched property genre=Sci-fi"]
    finally:
        c.close()
