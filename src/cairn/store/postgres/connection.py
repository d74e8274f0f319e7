"""One thread's connection to PostgreSQL, speaking the store's shared SQL.

Statements are the shared SQL (SQLite's dialect, ``?`` parameters) rendered by
:mod:`cairn.store.postgres.dialect`; rows support index and column-name access like
``sqlite3.Row``; every ``psycopg`` error becomes a :class:`cairn.errors.StoreError`
naming the database (password removed), the operation and the server's reason. The
store that owns the connections, their pool and the transactions is
:class:`cairn.store.postgres.base.PostgresBase`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from cairn.errors import StoreError, StoreUnwritable
from cairn.store.postgres.dialect import translate, translate_trigger


class Owner(Protocol):
    """What a connection reads of its store: the name it gives in messages and the
    tables' primary keys (an upsert is rendered with them)."""

    path: str
    primary_keys: dict[str, tuple[str, ...]]


class Row(tuple[Any, ...]):
    """A result row: a tuple that can also be indexed by column name."""

    _names: dict[str, int]

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        """The column names, in order."""
        return list(self._names)


def row_factory(cursor: Any) -> Any:
    """psycopg's row factory for :class:`Row`: the cursor's column names, once per
    result."""
    desc = cursor.description
    names = {d.name: i for i, d in enumerate(desc or ())}

    def make(values: Sequence[Any]) -> Row:
        row = Row(values)
        row._names = names
        return row

    return make


def error_class(exc: Exception) -> type[StoreError]:
    """The cairn error a server error becomes: :class:`~cairn.errors.StoreUnwritable`
    for a full disk or a read-only database, else :class:`~cairn.errors.StoreError`."""
    state = getattr(getattr(exc, "diag", None), "sqlstate", None) or ""
    if state in ("53100", "25006") or state.startswith("53"):  # disk full, read-only
        return StoreUnwritable
    return StoreError


class Connection:
    """One thread's connection, speaking the store's shared SQL (see the module doc)."""

    def __init__(self, raw: Any, store: Owner) -> None:
        self.raw = raw
        self._store = store

    def _sql(self, sql: str) -> str:
        return translate(sql, self._store.primary_keys)

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        """Run one statement; returns the cursor (iterable of :class:`Row`).

        Raises:
            StoreError: the server refused it.
        """
        import psycopg

        head = sql.lstrip()[:16].upper()
        try:
            if head.startswith("CREATE TRIGGER"):
                cur = None
                for stmt in translate_trigger(sql):
                    cur = self.raw.execute(stmt, ())
                return cur
            return self.raw.execute(self._sql(sql), tuple(params or ()))
        except psycopg.Error as exc:
            raise error_class(exc)(f"{self._store.path}: {exc}".strip()) from exc

    def run(self, sql: str, *, rendered: bool) -> Any:
        """Run one statement already in PostgreSQL's dialect; ``rendered``: it came
        through :func:`cairn.store.postgres.dialect.translate` (its ``%`` escaped, so it
        takes an empty parameter list).

        Raises:
            StoreError: the server refused it.
        """
        import psycopg

        try:
            return self.raw.execute(sql, () if rendered else None)
        except psycopg.Error as exc:
            raise error_class(exc)(f"{self._store.path}: {exc}".strip()) from exc

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]] | Any) -> Any:
        """Run one statement for each parameter row (pipelined).

        Raises:
            StoreError: the server refused it.
        """
        import psycopg

        rows = [tuple(r) for r in rows]
        cur = self.raw.cursor()
        if not rows:
            return cur
        try:
            cur.executemany(self._sql(sql), rows)
        except psycopg.Error as exc:
            raise error_class(exc)(f"{self._store.path}: {exc}".strip()) from exc
        return cur

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on this connection."""
        from psycopg.pq import TransactionStatus

        return bool(self.raw.info.transaction_status != TransactionStatus.IDLE)


def configure(raw: Any) -> None:
    """Set up a new connection: Python booleans as integers, as the shared schema
    stores them, and every statement planned for its own parameters: a generic plan
    (chosen once psycopg has prepared a statement) suits a rare word and ruins a common
    one, so every search after the first few would slow down."""
    import psycopg
    from psycopg.adapt import Dumper

    class _BoolAsInt(Dumper):
        oid = psycopg.adapters.types["int8"].oid

        def dump(self, obj: Any) -> bytes:
            return b"1" if obj else b"0"

    raw.adapters.register_dumper(bool, _BoolAsInt)
    raw.execute("SET plan_cache_mode = force_custom_plan")


