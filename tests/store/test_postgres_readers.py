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
from cairn.store.sql.migrations import SCHEMA_VERSION

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


def test_a_search_during_a_migration_waits_for_it(tmp_path: Path, pg_url: str) -> None:
    """A real migration (the schema one version behind, brought up to date by a store
    opened on another thread) is held for longer than a writer's wait (the test keeps a
    lock on ``cairn_schema`` that its last statement needs); a search that opens the
    index meanwhile waits for the migration and then answers, instead of failing with
    "another cairn process is writing this index"."""
    import threading
    import time

    import psycopg

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "garden.md").write_text("# Garden\n\nThe tomatoes need compost.\n",
                                     encoding="utf-8")
    cfg = Config(db_path=tmp_path / "index.db", embed={"provider": "none"})
    with Cairn(cfg, store=open_url(pg_url)) as c:
        c.index([str(notes)])
    with psycopg.connect(pg_url, autocommit=True) as hold:
        hold.execute("UPDATE cairn_schema SET version = version - 1")  # behind
        hold.execute("BEGIN")
        hold.execute("LOCK TABLE cairn_schema IN SHARE MODE")  # the migration waits here
        failures: list[BaseException] = []

        def migrate() -> None:
            try:
                open_url(pg_url).close()
            except BaseException as exc:
                failures.append(exc)

        migrator = threading.Thread(target=migrate)
        migrator.start()
        with psycopg.connect(pg_url, autocommit=True) as look:
            deadline = time.monotonic() + 60
            while not look.execute("SELECT count(*) FROM pg_locks WHERE locktype = "
                                   "'relation' AND NOT granted").fetchone()[0]:
                assert time.monotonic() < deadline, "the migration never started"
                time.sleep(0.05)  # it holds the writers' lock, waiting for ours
        release = threading.Timer(8.0, lambda: hold.execute("COMMIT"))  # > the 5 s wait
        release.start()
        try:
            res = CliRunner().invoke(cli, ["search", "compost", "--json"],
                                     env={"CAIRN_EMBED": "none", "CAIRN_DB_URL": pg_url})
        finally:
            release.join()
            migrator.join(timeout=60)
    assert failures == []
    assert res.exit_code == 0, res.output
    assert "Garden" in res.output
    with psycopg.connect(pg_url) as conn:  # the migration was completed
        assert conn.execute("SELECT version FROM cairn_schema").fetchone() == (
            SCHEMA_VERSION,)
