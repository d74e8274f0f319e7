"""The count of units semantic search cannot find yet (``VectorIndex.waiting_units``).

A unit waits when it is chunkable and has no chunks, or has a chunk lacking a vector in
the space asked about. Counting scans the units (tens of milliseconds on a large index),
so :class:`WaitingCounts` keeps the count until a chunk, vector or unit changes, lets one
thread count at a time, and — in a server, after :func:`count_in_background` — answers a
stale count at once and counts again in a background thread once the index holds still
(:func:`cairn.store.settle.wait_until_still`).

An index run leaves its final count in the index (:meth:`WaitingCounts.record_waiting`,
``vector_meta`` key ``waiting:<space>``, with the generation and last unit it counted):
a process that finds the index as that run left it takes the count from there instead
of scanning — a server after each run of its index process (as often as it re-indexes),
a new ``cairn search``.
"""

from __future__ import annotations

import sqlite3
import threading
import time

from cairn.store.settle import SETTLE, wait_until_still

CHUNKABLE = "(trim(u.body, char(32, 9, 10, 13)) != '' OR u.kind != 'preamble')"
"""SQL over ``units u``: the unit has text to embed (a bare title preamble has none)."""

_background = {"counts": False}
IDLE = 1.0
"""Seconds the index must hold still before the background counter counts on its own
instead of waiting for the count an index run leaves."""
PATIENCE = 5.0
"""The longest the background counter waits for an index run's count, in seconds."""
RECORDED = "waiting:"
"""The ``vector_meta`` key prefix of a recorded count (then the space): ``"<generation>
<last unit rowid> <count>"``."""

_COUNT = (
    "SELECT (SELECT count(*) FROM units u WHERE NOT EXISTS (SELECT 1 FROM "
    "chunks c WHERE c.unit_id = u.id) AND " + CHUNKABLE + ") + (SELECT "
    "count(DISTINCT c.unit_id) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM "
    "embeddings e WHERE e.space = ? AND e.hash = c.hash))"
)
"""The waiting count in portable SQL."""
_COUNT_SQLITE = (
    "SELECT (SELECT count(*) FROM units u WHERE u.rowid IN (SELECT x.rowid FROM units x "
    "WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.unit_id = x.id)) AND " + CHUNKABLE
    + ") + (SELECT count(DISTINCT c.unit_id) FROM chunks c WHERE c.id IN (SELECT x.id "
    "FROM chunks x WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.space = ? AND "
    "e.hash = x.hash)))"
)
"""The same count for SQLite, about half the work: SQLite then walks the units and
chunks in their narrow covering indexes (the ids; the hashes) and reads only the rows
that wait (a scan of the ``units`` table reads every body)."""


def count_in_background(enabled: bool = True) -> None:
    """From now on, answer a stale :meth:`WaitingCounts.waiting_units` at once and
    count it again in a background thread (for servers: a search never waits for the
    scan, and one index run costs one count). A process that searches right after
    indexing, like the CLI, keeps the default: the count is exact before it answers."""
    _background["counts"] = enabled


class WaitingCounts:
    """Mixin of :class:`cairn.store.sql.vectors.SQLiteVectors`: the waiting count.

    The host provides ``db`` (this thread's connection) and ``generation()``, and calls
    :meth:`_init_waiting` from its constructor.
    """

    @property
    def db(self) -> sqlite3.Connection:  # provided by the host
        raise NotImplementedError

    def generation(self) -> int:  # provided by the host
        raise NotImplementedError

    def meta(self, key: str) -> str | None:  # provided by the host
        raise NotImplementedError

    def set_meta(self, key: str, value: str) -> None:  # provided by the host
        raise NotImplementedError

    def _init_waiting(self) -> None:
        self._waiting: dict[str, tuple[tuple[object, ...], int]] = {}
        self._counting = threading.Lock()
        self._counter: threading.Thread | None = None
        self._counter_state = threading.Lock()
        self._counter_wake = threading.Event()
        self._stale_spaces: set[str] = set()

    def waiting_units(self, space: str) -> int:
        """Units semantic search in ``space`` cannot find yet: chunkable units without
        chunks, or with a chunk lacking a vector in ``space``. The count (a scan of the
        units, tens of milliseconds on a large index) is kept until a chunk or vector
        changes or a unit is added, so a search asks it cheaply. One thread counts at a
        time: while it does, others answer the last count (the index changed under it
        by one run at most) instead of all scanning at once; with no count yet they
        wait for it. After :func:`count_in_background` (a server), a stale count is
        answered at once and counted again by a background thread of this index, once
        the index has held still for :data:`SETTLE` seconds (one count per index run,
        not one per commit, and none inside a request)."""
        key = self._waiting_key(space)
        cached = self._waiting.get(space)
        if cached is not None and cached[0] == key:
            return cached[1]
        recorded = self._recorded(space, key)
        if recorded is not None:  # the index is as the run that counted it left it
            self._waiting[space] = (key, recorded)
            return recorded
        if cached is not None and _background["counts"]:
            self._wake_counter(space)
            return cached[1]
        return self._count_waiting(space, key, blocking=cached is None)

    def record_waiting(self, space: str) -> int:
        """Count :meth:`waiting_units` now and leave the count in the index with what
        it counted (the generation and the last unit), for other processes to take
        while the index stays so. Call inside a write transaction (the count and what
        it names are then one state); an index run does, at its end. Only SQLite
        keeps it (another backend just counts).

        Returns:
            The count.
        """
        key = self._waiting_key(space)
        n = self._count_waiting(space, key, blocking=True)
        if isinstance(self.db, sqlite3.Connection):
            self.set_meta(RECORDED + space, f"{key[1]} {key[2]} {n}")
        return n

    def _recorded(self, space: str, key: tuple[object, ...]) -> int | None:
        """The count an index run left for ``space`` (:meth:`record_waiting`) when it
        counted the index at ``key``; else ``None``."""
        if not isinstance(self.db, sqlite3.Connection):
            return None
        value = self.meta(RECORDED + space)
        parts = value.split() if value else []
        if len(parts) != 3 or (parts[0], parts[1]) != (str(key[1]), str(key[2])):
            return None
        return int(parts[2])

    def _waiting_key(self, space: str) -> tuple[object, ...]:
        return (
            space,
            self.generation(),
            self.db.execute("SELECT coalesce(max(rowid), 0) FROM units").fetchone()[0],
        )

    def _count_waiting(self, space: str, key: tuple[object, ...], *, blocking: bool) -> int:
        """Count :meth:`waiting_units` now under the counting lock (or, when
        ``blocking`` is false and another thread counts, answer the last count)."""
        cached = self._waiting.get(space)
        if not self._counting.acquire(blocking=blocking):
            assert cached is not None
            return cached[1]
        try:
            again = self._waiting.get(space)
            if again is not None and again[0] == key:
                return again[1]
            recorded = self._recorded(space, key)
            if recorded is not None:  # the index is as the run that counted it left it
                self._waiting[space] = (key, recorded)
                return recorded
            # two disjoint counts (half the work of one scan testing both per unit):
            # chunkable units without chunks, and units with a chunk lacking a vector
            sql = _COUNT_SQLITE if isinstance(self.db, sqlite3.Connection) else _COUNT
            n = int(self.db.execute(sql, (space,)).fetchone()[0])
            self._waiting[space] = (key, n)
            return n
        finally:
            self._counting.release()

    def _wake_counter(self, space: str) -> None:
        """Ask this index's background counter (one thread, started on first use, so
        one connection of its own) to count ``space`` again."""
        with self._counter_state:
            self._stale_spaces.add(space)
            if self._counter is None:
                self._counter = threading.Thread(
                    target=self._count_loop, name="cairn-waiting-count", daemon=True)
                self._counter.start()
        self._counter_wake.set()

    def _count_loop(self) -> None:
        """The background counter: waits to be woken, lets the index settle, counts
        each stale space; a failed count keeps the last one (the next search asks
        again)."""
        while True:
            self._counter_wake.wait()
            self._counter_wake.clear()
            with self._counter_state:
                spaces, self._stale_spaces = self._stale_spaces, set()
            try:
                wait_until_still(self.generation)
                for space in spaces:
                    self._count_when_idle(space)
            except Exception:  # e.g. the store closed; the next search asks again
                continue

    def _count_when_idle(self, space: str) -> None:
        """The background count of ``space``: the count an index run leaves at its end
        when one comes (polled every :data:`SETTLE` seconds), else a count of our own
        once the index has held still for :data:`IDLE` seconds (nothing is running
        that would leave one) or after :data:`PATIENCE` seconds. An index run pauses
        its writes while it embeds: a count then was one per run, of a state the run
        was about to change."""
        start = still = time.monotonic()
        last: tuple[object, ...] | None = None
        while True:
            key = self._waiting_key(space)
            now = time.monotonic()
            if key != last:
                last, still = key, now
            recorded = self._recorded(space, key)
            if recorded is not None:
                self._waiting[space] = (key, recorded)
                return
            if now - still >= IDLE or now - start >= PATIENCE:
                break
            time.sleep(SETTLE)
        self._count_waiting(space, key, blocking=True)
