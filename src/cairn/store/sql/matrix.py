"""The in-process vector matrix of one space, loaded whole or patched from an older one
(:meth:`cairn.store.sql.vectors.SQLiteVectors.matrix` and ``matrix_since``).

Chunks are immutable rows: a changed unit's chunks are deleted (with the unit) and new
ones inserted under new ``AUTOINCREMENT`` ids, and a vector is keyed by the hash of the
text it embeds. So the live rows of a space are fully named by the ids of the chunks
that have a vector in it, and a matrix loaded earlier becomes the current one by
dropping the rows whose chunk id is gone and reading only the rows whose id is new —
after an index run that changed a few notes, a small part of the cost of a whole
reload. The rows keep the order of a
full load (by chunk id) and the unit list its first-appearance order, so a patched
matrix equals a freshly loaded one.

Both read inside one read transaction (a WAL snapshot), so the generation they record
is exactly that of the rows they hold. A live chunk never loses its vector (pruning
removes only vectors no chunk uses) unless its whole space is dropped, which records
the generation after it (:data:`DROPPED_AT`; an older matrix is then loaded whole):
so a patch reads only the chunk ids, as one row of text (a row per id would hand
the interpreter lock back and forth once per chunk in a busy server), and the rows
of the chunks it did not hold.

A patch does not copy the matrix (tens of megabytes for a corpus of notes, and the page
faults of a fresh allocation, as often as a server re-indexes): the rows of chunks gone
stay in place, marked ``dead``, and new rows are written into spare rows after the old
matrix's end, in the buffer it is a view of (:func:`_append`). Readers of the old matrix
never see them: it ends where they begin, and only the newest matrix of a buffer appends
to it. Once dead rows pass :data:`DEAD_SHARE` of the rows, the buffer is full, or new
rows would break the chunk-id order, the patch copies the live rows into a new buffer
with room to spare (:func:`_merge`): that matrix equals a full load.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from cairn.model import VectorMatrix

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

PATCH_SHARE = 0.25
"""A patch reads at most this share of the rows anew; beyond it a full load is cheaper
(one statement instead of several)."""

# chunks first, by id (CROSS JOIN fixes SQLite's join order): left to itself the
# planner walks every vector of the space and looks each chunk up by hash, so reading
# a few chunks by id costs as much as reading them all, and a full load then also
# sorts what it read
_ROW_SQL = (
    "SELECT c.id, c.unit_id, c.ordinal, c.start, c.end, u.alternate, e.vector FROM chunks c "
    "CROSS JOIN units u CROSS JOIN embeddings e "
    "WHERE u.id = c.unit_id AND e.space = ? AND e.hash = c.hash"
)
# the ids as one row of text (SQLite builds it without the interpreter lock)
_IDS_SQL = "SELECT group_concat(id) FROM (SELECT id FROM chunks ORDER BY id)"
_VECTOR_IDS_SQL = (
    "SELECT group_concat(id) FROM (SELECT c.id FROM chunks c JOIN embeddings e "
    "ON e.space = ? AND e.hash = c.hash ORDER BY c.id)"
)
DROPPED_AT = "dropped_at"
"""The ``vector_meta`` key :meth:`~cairn.store.sql.vectors.SQLiteVectors.drop_space`
sets to the vector generation after it: a matrix loaded at that generation or later
holds no vector a drop removed since."""
_BATCH = 500
_MAX_RUNS = 2000
DEAD_SHARE = 1 / 16
"""A patch keeps the rows of chunks gone (``VectorMatrix.dead``) up to this share of the
rows; past it, it copies the live rows into a new buffer (each search multiplies the
dead rows too)."""
SPARE_SHARE = 1 / 8
"""Room for new rows a copied matrix's buffer gets, as a share of its rows (at least
:data:`SPARE_MIN`)."""
SPARE_MIN = 256


class _Tail:
    """A buffer's bookkeeping: how many of its rows the newest matrix on it holds (only
    that matrix may append), and that matrix's ``unit id -> unit number``."""

    __slots__ = ("index", "rows")

    def __init__(self, rows: int, index: dict[str, int]) -> None:
        self.rows, self.index = rows, index


_tails: dict[int, _Tail] = {}
"""``id(buffer) -> _Tail`` of the buffers patches may append to (dropped with the buffer)."""
_tails_lock = threading.Lock()


@contextmanager
def read_snapshot(db: Any) -> Iterator[None]:
    """One read transaction on ``db`` for the statements inside (a consistent WAL
    snapshot); a connection already inside a transaction keeps its own."""
    if not isinstance(db, sqlite3.Connection) or db.in_transaction:
        yield
        return
    db.execute("BEGIN")
    try:
        yield
    finally:
        db.execute("COMMIT")


def generation(db: Any) -> int:
    """The vector generation (see :mod:`cairn.store.sql.vectors`)."""
    row = db.execute("SELECT value FROM vector_meta WHERE key='generation'").fetchone()
    return int(row[0]) if row else 0


def dropped_at(db: Any) -> int:
    """The vector generation right after the last ``drop_space`` (0: never)."""
    row = db.execute("SELECT value FROM vector_meta WHERE key=?", (DROPPED_AT,)).fetchone()
    return int(row[0]) if row else 0


def load_matrix(db: Any, space: str, dim: int, dtype: str) -> VectorMatrix:
    """Every live chunk vector of ``space`` (``dim`` values of numpy ``dtype`` each),
    ordered by chunk id.

    Returns:
        The :class:`VectorMatrix` with ``chunk_ids`` (``int64[n]``, ascending).
    """
    with read_snapshot(db):
        gen = generation(db)
        rows = db.execute(_ROW_SQL + " ORDER BY c.id", (space,)).fetchall()
    return _build(space, gen, dim, dtype, rows)


def patch_matrix(
    db: Any, old: VectorMatrix, space: str, dim: int, dtype: str
) -> VectorMatrix | None:
    """The current matrix of ``space`` made from ``old`` (a matrix of the same space
    this store loaded before): rows of chunks gone are dropped, rows of chunks that got
    a vector since are read and merged in chunk-id order.

    Returns:
        The new matrix (``old`` itself when nothing moved), or ``None`` when a full
        :func:`load_matrix` is the better way: ``old`` is empty or has no chunk ids
        or another dimension, the space was dropped since it was loaded, or more
        than :data:`PATCH_SHARE` of the rows would be read anew.
    """
    import numpy as np

    if (old.chunk_ids is None or old.space != space or not len(old.chunk_ids)
            or old.matrix.shape[1] != dim):
        return None
    with read_snapshot(db):
        gen = generation(db)
        if gen == old.generation:
            return old
        if dropped_at(db) > old.generation:  # its vectors went, new ones may be back
            return None
        old_ids: npt.NDArray[np.int64] = old.chunk_ids
        # A live chunk keeps its vector (prune removes only vectors no chunk uses, and
        # a drop of the space since ``old`` means a full load): so the ids of the
        # chunks alone name the rows to keep, and those not in ``old`` are the only
        # ones that may have got a vector (their rows are read to find out).
        exact = False
        while True:
            text = db.execute(_VECTOR_IDS_SQL if exact else _IDS_SQL,
                              (space,) if exact else ()).fetchone()[0]
            now = np.fromstring(text or "", dtype=np.int64, sep=",")
            keep = _member(old_ids, now)
            fresh = now[~_member(now, old_ids)]
            if fresh.size <= PATCH_SHARE * max(now.size, 1):
                break
            if exact:
                return None
            exact = True  # many chunks without vectors in ``old``: ask which have one
        rows: list[Sequence[Any]] = []
        ids = fresh.tolist()
        for i in range(0, len(ids), _BATCH):
            part = ids[i : i + _BATCH]
            rows.extend(db.execute(
                _ROW_SQL + f" AND c.id IN ({','.join('?' * len(part))})", (space, *part)
            ).fetchall())
    if exact and len(rows) != fresh.size:  # cannot happen inside one snapshot; be safe
        return None
    rows.sort(key=lambda r: int(r[0]))
    add = _build(space, gen, dim, dtype, rows)
    appended = _append(old, keep, add, gen)
    return appended if appended is not None else _merge(old, keep, add, gen)


def _append(old: VectorMatrix, keep: npt.NDArray[np.bool_], add: VectorMatrix, gen: int
            ) -> VectorMatrix | None:
    """``old`` with its rows not in ``keep`` marked dead and ``add``'s rows written after
    its end, in the buffer ``old.matrix`` is a view of, without copying ``old``'s rows;
    ``None`` when that cannot be done: dead rows would pass :data:`DEAD_SHARE`, ``add``
    holds a chunk id below ``old``'s last (the rows must stay in chunk-id order), or
    there are rows to write and ``old`` is not the newest matrix of a buffer with room
    for them (a copied matrix's buffer has; a full load's has not)."""
    import numpy as np

    n_old, n_add = old.matrix.shape[0], add.chunk_ids.size
    dead = ~keep  # a row dead in ``old`` has its chunk gone: not in ``keep`` either
    if int(dead.sum()) > DEAD_SHARE * (n_old + n_add) or (
            n_add and n_old and int(add.chunk_ids[0]) <= int(old.chunk_ids[-1])):
        return None
    if not n_add:
        return dataclasses.replace(old, generation=gen, dead=dead if dead.any() else None)
    buf = old.matrix.base
    if buf is None or buf.ndim != 2 or old.matrix.dtype != buf.dtype:
        return None
    with _tails_lock:
        tail = _tails.get(id(buf))
        if (tail is None or tail.rows != n_old or buf.shape[0] < n_old + n_add
                or old.matrix.ctypes.data != buf.ctypes.data):
            return None
        index = tail.index
        fresh = [u for u in add.unit_ids if u not in index]
        first = len(old.unit_ids)
        index.update(zip(fresh, range(first, first + len(fresh)), strict=True))
        number = np.fromiter((index[u] for u in add.unit_ids), np.int64, len(add.unit_ids))
        buf[n_old : n_old + n_add] = add.matrix
        tail.rows = n_old + n_add
    return VectorMatrix(
        old.space,
        gen,
        (*old.unit_ids, *fresh),
        np.concatenate([old.units, number[add.units]]),
        np.concatenate([old.ordinals, add.ordinals]),
        np.concatenate([old.starts, add.starts]),
        np.concatenate([old.ends, add.ends]),
        np.concatenate([old.alternate, add.alternate]),
        buf[: n_old + n_add],
        np.concatenate([old.chunk_ids, add.chunk_ids]),
        np.concatenate([dead, np.zeros(n_add, bool)]),
    )


def _with_room(rows: int, dim: int, dtype: Any, unit_ids: Sequence[str]
               ) -> npt.NDArray[np.float32]:
    """An uninitialised buffer of ``rows`` rows plus room to spare (see
    :data:`SPARE_SHARE`), registered for :func:`_append` as holding a matrix of
    ``rows`` rows over ``unit_ids``; returns the buffer."""
    import numpy as np

    buf: npt.NDArray[np.float32] = np.empty(
        (rows + max(SPARE_MIN, int(rows * SPARE_SHARE)), dim), dtype=dtype)
    key = id(buf)
    with _tails_lock:
        _tails[key] = _Tail(rows, {u: i for i, u in enumerate(unit_ids)})
    weakref.finalize(buf, _forget, key)
    return buf


def _forget(key: int) -> None:
    with _tails_lock:
        _tails.pop(key, None)


def _member(a: npt.NDArray[np.int64], b: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Per element of sorted ``a``: whether it is in sorted ``b``."""
    import numpy as np

    if b.size == 0:
        return np.zeros(a.size, dtype=bool)
    pos = np.minimum(np.searchsorted(b, a), b.size - 1)
    out: npt.NDArray[np.bool_] = b[pos] == a
    return out


def _build(space: str, gen: int, dim: int, dtype: str, rows: Sequence[Sequence[Any]]
           ) -> VectorMatrix:
    """A matrix from rows ``(chunk id, unit id, ordinal, start, end, alternate,
    vector blob)`` in chunk-id order."""
    import numpy as np

    n = len(rows)
    if n == 0 or dim == 0:
        empty = np.zeros(0, np.int64)
        return VectorMatrix(space, gen, (), empty, empty, empty, empty, np.zeros(0, bool),
                            np.zeros((0, max(dim, 1)), np.float32), empty)
    index: dict[str, int] = {}
    units = np.fromiter((index.setdefault(r[1], len(index)) for r in rows), np.int64, n)
    raw = np.frombuffer(b"".join(r[6] for r in rows), dtype=dtype)
    mat = raw.reshape(n, dim)
    return VectorMatrix(
        space,
        gen,
        tuple(index),
        units,
        np.fromiter((r[2] for r in rows), np.int64, n),
        np.fromiter((r[3] for r in rows), np.int64, n),
        np.fromiter((r[4] for r in rows), np.int64, n),
        np.fromiter((bool(r[5]) for r in rows), bool, n),
        np.ascontiguousarray(mat, dtype=np.float32),
        np.fromiter((r[0] for r in rows), np.int64, n),
    )


def _kept_rows(m: npt.NDArray[np.float32], keep: npt.NDArray[np.bool_],
               tail: npt.NDArray[np.float32], out: npt.NDArray[np.float32] | None = None
               ) -> npt.NDArray[np.float32]:
    """``concatenate([m[keep], tail])``, copied as contiguous runs of kept rows: a patch
    drops a few rows here and there, and a boolean gather of the whole matrix (25,000
    × 384 float32, 38 MB) costs about twice the plain copies of its runs. Written into
    the first rows of ``out`` when given (then a view of them is returned)."""
    import numpy as np

    edges = np.flatnonzero(np.diff(np.concatenate(([0], keep.view(np.int8), [0]))))
    n = int(keep.sum()) + tail.shape[0]
    if out is None:
        out = np.empty((n, m.shape[1]), dtype=m.dtype)
    out = out[:n]
    if edges.size > 2 * _MAX_RUNS:  # rows dropped all over: one gather is cheaper
        np.concatenate([m[keep], tail], out=out)
        return out
    pos = 0
    for start, end in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
        out[pos : pos + end - start] = m[start:end]
        pos += end - start
    out[pos:] = tail
    return out


def _appended_units(old: VectorMatrix, keep: npt.NDArray[np.bool_], add: VectorMatrix
                    ) -> tuple[tuple[str, ...], npt.NDArray[np.int64]] | None:
    """The unit list and per-row unit numbers of ``old``'s kept rows followed by
    ``add``'s rows (already in chunk-id order), in first-appearance order as a full
    load numbers them, worked out in numpy from the old numbers; ``None`` when that
    shortcut does not hold (a kept unit's first kept row comes after another's that
    was numbered later, or an added row belongs to a kept unit): then the caller
    numbers the rows one by one (about 30 ms for the shared corpus's 25,000 rows)."""
    import numpy as np

    codes = old.units[keep]
    n = len(old.unit_ids)
    first = np.full(n, codes.size, np.int64)
    np.minimum.at(first, codes, np.arange(codes.size, dtype=np.int64))
    present = first < codes.size
    if not bool((np.diff(first[present]) > 0).all()):
        return None
    kept = [old.unit_ids[i] for i in np.flatnonzero(present).tolist()]
    if add.unit_ids and not set(add.unit_ids).isdisjoint(kept):
        return None
    renumber = np.cumsum(present, dtype=np.int64) - 1
    units = np.concatenate([renumber[codes], add.units + len(kept)]).astype(np.int64)
    return (*kept, *add.unit_ids), units


def _merge(old: VectorMatrix, keep: npt.NDArray[np.bool_], add: VectorMatrix, gen: int
           ) -> VectorMatrix:
    """The rows of ``old`` where ``keep`` and every row of ``add``, in chunk-id order,
    with the unit list rebuilt in first-appearance order: what a full load makes, in a
    buffer with room for :func:`_append` when the rows are in order."""
    import numpy as np

    if not add.chunk_ids.size and keep.all():
        return dataclasses.replace(old, generation=gen, dead=None)
    ids = np.concatenate([old.chunk_ids[keep], add.chunk_ids])
    # new chunks usually have the highest ids: then the rows are in order already
    order: Any = (slice(None) if bool((ids[1:] > ids[:-1]).all())
                  else np.argsort(ids, kind="stable"))

    def cat(a: Any, b: Any) -> Any:
        return np.concatenate([a[keep], b])[order]

    fast = _appended_units(old, keep, add) if isinstance(order, slice) else None
    if fast is not None:
        unit_ids, units = fast
    else:
        names = np.concatenate([
            np.asarray(old.unit_ids, dtype=object)[old.units[keep]],
            np.asarray(add.unit_ids or ("",), dtype=object)[add.units],
        ])[order]
        index: dict[str, int] = {}
        units = np.fromiter((index.setdefault(u, len(index)) for u in names.tolist()),
                            np.int64, names.size)
        unit_ids = tuple(index)
    dim = old.matrix.shape[1]
    room = (_with_room(ids.size, dim, old.matrix.dtype, unit_ids)
            if isinstance(order, slice) else None)
    mat = _kept_rows(old.matrix, keep, add.matrix.reshape(-1, dim), room)
    return VectorMatrix(
        old.space,
        gen,
        unit_ids,
        units,
        cat(old.ordinals, add.ordinals),
        cat(old.starts, add.starts),
        cat(old.ends, add.ends),
        cat(old.alternate, add.alternate),
        mat if isinstance(order, slice) else np.ascontiguousarray(mat[order]),
        ids[order],
    )

