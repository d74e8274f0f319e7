"""A full disk inside one file's unit of work (a savepoint in a batch transaction)
stops the run with the reason, instead of letting the caller record a per-file failure
and go on writing after SQLite has ended the transaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.errors import StoreUnwritable
from cairn.store import open_store


def test_a_full_disk_in_a_savepoint_is_the_index_being_unwritable(tmp_path: Path) -> None:
    store = open_store(tmp_path / "i.db")
    try:
        db = store.db  # type: ignore[attr-defined]
        db.execute("CREATE TABLE filler(x BLOB)")
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {pages + 5}")
        # the inner transaction nests as the savepoint one file's store uses
        with pytest.raises(StoreUnwritable) as exc, store.transaction(), store.transaction():
            for _ in range(100):
                db.execute("INSERT INTO filler VALUES (zeroblob(8192))")
        assert "full" in str(exc.value) and "free some disk space" in str(exc.value)
        assert not db.in_transaction
        assert db.execute("SELECT count(*) FROM filler").fetchone()[0] == 0
    finally:
        store.close()
