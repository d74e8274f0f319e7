"""Inside ``bulk_writes`` (an index run) the SQLite store holds a transaction's FTS5 rows
and inserts them in one statement before it commits: FTS5 writes a segment at every
savepoint, and an index run opens one per file. What a rolled-back savepoint made must
still leave the keyword index, and what came before it must stay, even when a delete in
between had to write the held rows first."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.model import Document, Unit
from cairn.store import open_store
from cairn.store.sqlite import held
from cairn.store.sqlite.base import SQLiteBase


def _doc(root_id: str, key: str, body: str) -> Document:
    return Document(path=f"{key}.md", format="markdown", title=key,
                    units=(Unit(ordinal=0, level=1, kind="heading", title=key,
                                outline_path=(key,), body=body, id=f"u-{key}",
                                document_id=f"d-{key}"),),
                    id=f"d-{key}", root_id=root_id, content_hash=key)


def _store_file(store: SQLiteBase, root_id: str, key: str, body: str) -> None:
    store.replace_file(root_id, f"{key}.md", size=1, mtime=1.0, hash_=key,  # type: ignore[attr-defined]
                       format_="markdown", documents=[_doc(root_id, key, body)])


def _matches(db: sqlite3.Connection, word: str) -> set[str]:
    return {r[0] for r in db.execute(
        "SELECT u.document_id FROM units_fts f JOIN units u ON u.rowid = f.rowid "
        "WHERE units_fts MATCH ?", (word,))}


def _fts_consistent(db: sqlite3.Connection) -> None:
    db.execute("INSERT INTO units_fts(units_fts, rank) VALUES ('integrity-check', 1)")
    assert db.execute("SELECT count(*) FROM units_fts").fetchone()[0] == db.execute(
        "SELECT count(*) FROM units").fetchone()[0]


def test_a_rolled_back_file_leaves_no_keyword_rows_and_keeps_the_others(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path / "i.db")
    try:
        assert isinstance(store, SQLiteBase)
        db = store.db
        db.execute("INSERT INTO roots(id, path, include, exclude, added) "
                   "VALUES ('r', '/x', '[]', '[]', '')")
        with store.bulk_writes(), store.transaction():
            with store.transaction():
                _store_file(store, "r", "first", "marjoram stays")
            with store.transaction():
                _store_file(store, "r", "again", "basil once")
            with pytest.raises(RuntimeError), store.transaction():
                # storing "again" anew deletes its rows: the held rows are written
                # inside this savepoint, and written again after it is undone
                _store_file(store, "r", "again", "basil twice")
                _store_file(store, "r", "gone", "saffron goes")
                raise RuntimeError("this file fails")
            with store.transaction():
                _store_file(store, "r", "last", "thyme stays")
        assert _matches(db, "marjoram") == {"d-first"}
        assert _matches(db, "basil") == {"d-again"}
        assert _matches(db, "once") == {"d-again"}
        assert _matches(db, "twice") == set()
        assert _matches(db, "saffron") == set()
        assert _matches(db, "thyme") == {"d-last"}
        _fts_consistent(db)
    finally:
        store.close()


def test_held_rows_past_the_limit_are_written_and_a_rollback_still_undoes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(held, "HELD_CHARS", 10)  # every file's rows go in at once
    store = open_store(tmp_path / "i.db")
    try:
        assert isinstance(store, SQLiteBase)
        db = store.db
        db.execute("INSERT INTO roots(id, path, include, exclude, added) "
                   "VALUES ('r', '/x', '[]', '[]', '')")
        with store.bulk_writes(), store.transaction():
            with store.transaction():
                _store_file(store, "r", "kept", "lavender is kept here")
            with pytest.raises(RuntimeError), store.transaction():
                _store_file(store, "r", "gone", "rosemary is written then undone")
                raise RuntimeError("this file fails")
        assert _matches(db, "lavender") == {"d-kept"}
        assert _matches(db, "rosemary") == set()
        _fts_consistent(db)
    finally:
        store.close()


def test_bulk_writes_puts_the_connection_settings_back(tmp_path: Path) -> None:
    store = open_store(tmp_path / "i.db")
    try:
        assert isinstance(store, SQLiteBase)
        db = store.db
        before = [db.execute(f"PRAGMA {p}").fetchone()[0]
                  for p in ("wal_autocheckpoint",)]
        with store.bulk_writes():
            inside = [db.execute(f"PRAGMA {p}").fetchone()[0]
                      for p in ("wal_autocheckpoint",)]
        after = [db.execute(f"PRAGMA {p}").fetchone()[0]
                 for p in ("wal_autocheckpoint",)]
        assert inside != before
        assert after == before
    finally:
        store.close()


def test_an_index_run_writes_keyword_segments_per_batch_not_per_file(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(60):
        (notes / f"n{i}.md").write_text(f"# Note {i}\n\nword{i} shared text\n", "utf-8")
    db_path = tmp_path / "i.db"
    with Cairn(load_config(db=db_path)) as c:
        db = c.store.db  # type: ignore[attr-defined]
        # count the pages FTS5 writes into its data table during the run
        db.execute("CREATE TEMP TABLE written(n INTEGER)")
        db.execute("INSERT INTO written VALUES (0)")
        db.execute("CREATE TEMP TRIGGER count_fts AFTER INSERT ON main.units_fts_data "
                   "BEGIN UPDATE written SET n = n + 1; END")
        c.index([str(notes)], embed=False)
        writes = db.execute("SELECT n FROM written").fetchone()[0]
        assert len(_matches(db, "shared")) == 60
        assert len(_matches(db, "word7")) == 1
        _fts_consistent(db)
    # one file at a time, FTS5 wrote a segment (a leaf and its structure) per file
    assert writes < 30
