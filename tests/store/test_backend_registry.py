"""A store is opened by the backend its location's scheme names (cairn.store.registry):
a file path or ``sqlite:`` URL is SQLite, ``postgresql://`` PostgreSQL, an unknown
scheme a clear error, and a new backend is one ``register`` call. The backends' names
and schemes are listed once (cairn.config.locations), for the configuration and the
registry alike; no other code names them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cairn.config.locations import BACKEND_SCHEMES, FILE_BACKEND
from cairn.errors import StoreError
from cairn.model import SourceRoot
from cairn.store import Store, open_store, open_url, registry
from cairn.store.registry import Backend, backend_for, register
from cairn.store.sqlite import SQLiteStore


def _roots(store: Store) -> list[str]:
    try:
        return [r.path for r in store.roots()]
    finally:
        store.close()


def test_a_sqlite_url_opens_the_index_file_it_names(tmp_path: Path) -> None:
    db = tmp_path / "deep" / "index.db"
    store = open_url(f"sqlite://{db}")
    with store.transaction():
        store.upsert_root(SourceRoot(id="r1", path="/notes"))
    store.close()
    assert db.is_file()
    assert _roots(open_store(db)) == ["/notes"]  # the same file, opened as a path
    assert _roots(open_url(f"sqlite:{db}")) == ["/notes"]


def test_a_colon_in_a_file_name_is_not_a_url_scheme(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    open_url("notes:2024.db").close()
    open_store("sqlite:kept.db").close()  # a path is never read as a URL
    assert sorted(p.name for p in tmp_path.glob("*.db")) == ["notes:2024.db", "sqlite:kept.db"]


def test_an_unknown_scheme_is_refused_naming_it_without_the_password() -> None:
    with pytest.raises(StoreError) as err:
        open_url("mysql://ann:hunter2@db.example/notes")
    assert "mysql" in str(err.value) and "postgresql:" in str(err.value)
    assert "hunter2" not in str(err.value)


def test_a_remote_sqlite_url_is_refused() -> None:
    with pytest.raises(StoreError, match="local file"):
        open_url("sqlite://fileserver/share/index.db")


def test_postgres_urls_pick_the_postgres_backend_without_connecting() -> None:
    assert backend_for("postgresql://u@h/db").name == "postgres"
    assert backend_for("POSTGRES://u@h/db").name == "postgres"
    assert backend_for(Path("postgresql:x")).name == "sqlite"


def test_a_registered_backend_opens_its_scheme(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry, "BACKENDS", dict(registry.BACKENDS))
    opened: list[str] = []

    def open_mirror(location: str | Path) -> Store:
        opened.append(str(location))
        return SQLiteStore(tmp_path / "mirror.db")

    register(Backend("mirror", ("mirror",), open_mirror))
    store = open_url("mirror://anywhere/x")
    assert isinstance(store, SQLiteStore) and opened == ["mirror://anywhere/x"]
    store.close()
    with pytest.raises(ValueError, match="opened by 'postgres'"):
        register(Backend("other", ("postgresql",), open_mirror))


@pytest.mark.postgres
def test_a_postgresql_url_opens_the_postgres_backend(pg_url: str) -> None:
    from cairn.store.postgres import PostgresStore

    for url in (pg_url, "postgres://" + pg_url.split("://", 1)[1]):
        store = open_url(url)
        try:
            assert isinstance(store, PostgresStore)
            assert store.schema_version > 0
        finally:
            store.close()


def test_the_registry_opens_exactly_the_backends_the_configuration_knows() -> None:
    assert {b.name: b.schemes for b in registry.BACKENDS.values()} == dict(BACKEND_SCHEMES)
    assert backend_for(Path("index.db")).name == FILE_BACKEND


SRC = Path(__file__).resolve().parents[2] / "src" / "cairn"
NAMES_BACKENDS = {
    "config/locations.py", "store/registry.py",
    # a database's trained-model folder is keyed by its URL written with one scheme:
    # the key must not change, or trained models would be left behind
    "embed/profile.py",
}
"""The modules that may spell a backend's name or URL scheme in code (docstrings and
messages aside); the backends' own packages are theirs."""


def _backend_literals(path: Path) -> list[str]:
    """``"line: 'text'"`` of each string in ``path``'s code (not a docstring) that is a
    backend's name or starts with one of the schemes."""
    spelled = re.compile(
        "^(" + "|".join(re.escape(w) for n, s in BACKEND_SCHEMES.items() for w in (n, *s))
        + ")(:|$)", re.IGNORECASE)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(node.body[0].value) for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body and isinstance(node.body[0], ast.Expr)
    }
    return [f"{node.lineno}: {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docs and spelled.match(node.value)]


def test_no_code_but_the_registry_names_a_backend() -> None:
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in NAMES_BACKENDS or rel.startswith(("store/sqlite/", "store/postgres/")):
            continue
        bad += [f"{rel}:{hit}" for hit in _backend_literals(path)]
    assert not bad, "backends named outside the registry:\n" + "\n".join(bad)


def test_the_backend_name_check_sees_a_comparison_but_not_a_docstring(tmp_path: Path) -> None:
    code = tmp_path / "m.py"
    code.write_text('"""Opens postgresql://x."""\n'
                    'def f(u):\n    return u.startswith(("postgresql://", "Postgres:/"))\n')
    assert _backend_literals(code) == ["3: 'postgresql://'", "3: 'Postgres:/'"]
