"""A real PostgreSQL server for the store tests: ``CAIRN_TEST_PG_URL`` when set, else a
throwaway server from the ``pgserver`` wheel (PostgreSQL 16 with pgvector), started once
per session in a temporary folder. Each test gets a fresh database on it."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """The URL of a PostgreSQL server's maintenance database."""
    given = os.environ.get("CAIRN_TEST_PG_URL")
    if given:
        yield given
        return
    pgserver = pytest.importorskip("pgserver", reason="pgserver is not installed")
    pytest.importorskip("psycopg", reason="psycopg is not installed (cairn[postgres])")
    folder = tempfile.mkdtemp(prefix="cairn-pg-")
    server: Any = pgserver.get_server(folder, cleanup_mode="delete")
    try:
        yield str(server.get_uri())
    finally:
        server.cleanup()


def _with_db(url: str, name: str) -> str:
    """``url`` pointing at database ``name`` (libpq URL with a path or a query)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


@pytest.fixture
def pg_url(pg_server_url: str) -> Iterator[str]:
    """A fresh, empty database on the test server (dropped afterwards)."""
    import psycopg

    name = "cairn_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield _with_db(pg_server_url, name)
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
