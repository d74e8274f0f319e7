"""The PostgreSQL backend of the store protocol (:mod:`cairn.store.base`), through
``psycopg`` 3: ``base`` (connections, transactions, migrations, the writers' advisory
lock), ``dialect`` (the shared SQL rendered for PostgreSQL), ``search`` (``tsvector``
keyword search). Install with ``pip install 'cairn[postgres]'``.
"""

from __future__ import annotations

from cairn.store.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
