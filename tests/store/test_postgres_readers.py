"""Readers of a PostgreSQL index never wait for a writer: opening a current index for
a search takes no writer's lock (a ``cairn index`` holds it for its whole run), and an
empty PostgreSQL index is named by its URL (password removed) in the CLI's note."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import Config
from cairn.interfaces.cli import app as cli
from cairn.store import open_url
from cairn.store.postgres.base import WRITE_LOCK_KEY

pytestmark = pytest.mark.postgres


@contextmanager
def writer_holding_the_lock(url: str) -> Iterator[None]:
    """Another session inside a write transaction that holds the writers' lock, as an
    index run does."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("BEGIN")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
        try:
            yield
        finally:
            conn.execute("ROLLBACK")


def test_opening_and_searching_while_a_writer_holds_the_lock(tmp_path: Path,
                                                             pg_url: str) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "garden.md").write_text("# Garden\n\nThe tomatoes need compost.\n",
                                     encoding="utf-8")
    cfg = Config(db_path=tmp_path / "index.db", embed={"provider": "none"})
    with Cairn(cfg, store=open_url(pg_url)) as c:
        c.index([str(notes)])
    with writer_holding_the_lock(pg_url):
        with Cairn(cfg, store=open_url(pg_url)) as c:
            assert [h.title for h in c.search("compost", limit=3).hits] == ["Garden"]
        res = CliRunner().invoke(cli, ["search", "compost", "--json"],
                                 env={"CAIRN_EMBED": "none", "CAIRN_DB_URL": pg_url})
        assert res.exit_code == 0, res.output
        assert "another cairn process" not in res.output and "Garden" in res.output


def test_an_empty_postgres_index_is_named_by_its_url(pg_url: str) -> None:
    res = CliRunner().invoke(cli, ["search", "anything"],
                             env={"CAIRN_EMBED": "none", "CAIRN_DB_URL": pg_url})
    assert res.exit_code == 0, res.output
    shown = pg_url.split("?")[0].rsplit("/", 1)[-1]  # the database's name
    assert f"/{shown}" in res.stderr and "is empty" in res.stderr
    assert "cairn.db" not in res.stderr
