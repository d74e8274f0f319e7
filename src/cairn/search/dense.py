"""Dense retrieval: exact cosine top-k over the stored chunk vectors (numpy).

Vectors are unit length, so cosine similarity is a dot product: one matrix–vector
product over every chunk of the space, then ``argpartition`` for the best rows. A unit's
score is its best chunk's similarity; results are whole units, so the search widens
until it holds ``k`` distinct live units (or runs out of them).

The matrix is loaded from SQLite once and kept until the store's vector
``generation`` changes (any chunk or vector added or deleted, including chunks removed
by the cascade when a note is deleted), so a query never returns a deleted unit; it is
then patched (``store.vectors.matrix_since``: only the chunks added since are read, the
rows of chunks gone are dropped or marked ``dead``), not loaded again.

Exact search over 100,000 384-d vectors takes a few milliseconds (see
``bench/beir.py``), well inside the latency budget, so SQLite has no approximate index.
A store that searches a space itself (``store.vectors.indexed(space)``: pgvector's
HNSW index on PostgreSQL, for a large space) answers :meth:`DenseIndex.search` and
:meth:`DenseIndex.unit_similarity` through ``nearest``/``similarity``, and no matrix is
loaded.

Long-running servers (``cairn serve``, ``cairn mcp``) call :func:`serve_mode`: the
matrix is then reloaded by a background thread when the generation moves, and requests
go on searching the snapshot they have meanwhile (a full load takes 0.6 s of CPU on the
shared corpus, a patch after a small index run about 25 ms). Query vectors are
kept in a small LRU cache keyed by the embedder's fingerprint and the query text
(:func:`encode_query`), so a repeated query does not run the encoder again.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cairn.embed.base import Embedder
from cairn.model import VectorMatrix
from cairn.store import VectorIndex
from cairn.store.settle import wait_until_still

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class DenseHit:
    """A unit found by meaning: its id, best cosine, and the chunk that gave it
    (ordinal, and its ``start``/``end`` offsets in the unit body)."""

    unit_id: str
    score: float
    chunk: int
    start: int
    end: int


WHERE_WIDEST = 1024
"""How many of the best units :meth:`DenseIndex.search_where` asks a filter about
before it leaves a selective filter to the caller."""

QUERY_CACHE_SIZE = 512
"""Query vectors kept by :func:`encode_query` (about 1.5 KB each at 384 dimensions)."""
_query_cache: OrderedDict[tuple[str, str], npt.NDArray[np.float32]] = OrderedDict()
_query_lock = threading.Lock()
_background = {"reload": False}


def serve_mode(enabled: bool = True) -> None:
    """Reload stale matrices in a background thread from now on (for servers; see
    the module docstring). A process that searches right after indexing, like the
    CLI, keeps the default: the next search reloads before it answers.

    Also asks for one BLAS thread per matrix product (``OPENBLAS_NUM_THREADS`` and
    ``MKL_NUM_THREADS``, unless set; call this before numpy is imported): a server
    runs many searches at once, and each product spreading over every core made 16
    concurrent searches 2.7 times slower on 2 cores (``bench/serve.py``). Local
    embedding models built from then on use one thread unless ``[embed] threads`` says
    otherwise (:func:`cairn.embed.registry.set_default_threads`)."""
    from cairn.embed.registry import set_default_threads

    _background["reload"] = enabled
    set_default_threads(1 if enabled else None)
    if enabled:
        for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, "1")


def encode_query(embedder: Embedder, text: str) -> npt.NDArray[np.float32]:
    """The query's unit vector ``float32[dim]`` (read-only); uses
    ``embedder.embed_query`` (one thread for local models) when the provider has it.

    The last :data:`QUERY_CACHE_SIZE` vectors are cached per embedder fingerprint and
    query text: the same text always gives the same vector in a space."""
    key = (str(getattr(embedder, "fingerprint", id(embedder))), text)
    with _query_lock:
        hit = _query_cache.get(key)
        if hit is not None:
            _query_cache.move_to_end(key)
            return hit
    fn = getattr(embedder, "embed_query", None)
    vecs = fn([text]) if callable(fn) else embedder.embed([text])
    out: npt.NDArray[np.float32] = vecs[0].copy()
    out.flags.writeable = False
    with _query_lock:
        _query_cache[key] = out
        while len(_query_cache) > QUERY_CACHE_SIZE:
            _query_cache.popitem(last=False)
    return out


def _unit_index(unit_ids: tuple[str, ...],
                old: tuple[VectorMatrix, dict[str, int]] | None) -> dict[str, int]:
    """``unit id -> position in unit_ids``, from the old snapshot's when ``unit_ids``
    is the old list or the old list with units appended (as a patch that kept the old
    rows makes it): a copy of that dict extended, not one built anew."""
    if old is not None:
        before = old[0].unit_ids
        if unit_ids is before:
            return old[1]
        n = len(before)
        if len(unit_ids) >= n and unit_ids[:n] == before:
            index = dict(old[1])
            index.update(zip(unit_ids[n:], range(n, len(unit_ids)), strict=True))
            return index
    return {u: i for i, u in enumerate(unit_ids)}


class _Snapshots:
    """The loaded matrix of one space of one store, shared by every
    :class:`DenseIndex` over them: a search service builds a new ranker (and so a new
    ``DenseIndex``) after each index run, and must not load the matrix again from
    nothing while requests wait for it."""

    def __init__(self, vectors: VectorIndex, space: str) -> None:
        self.vectors, self.space = vectors, space
        self.snap: tuple[VectorMatrix, dict[str, int]] | None = None
        self.reload = threading.Lock()
        self.state = threading.Lock()
        self.stale = threading.Event()
        self.worker: threading.Thread | None = None

    def get(self) -> tuple[VectorMatrix, dict[str, int]]:
        """See :meth:`DenseIndex.snapshot`."""
        snap = self.snap
        gen = self.vectors.generation()
        if snap is not None and snap[0].generation == gen:
            return snap
        if snap is not None and _background["reload"]:
            self.wake()
            return snap
        if not self.reload.acquire(blocking=snap is None):
            assert snap is not None
            return snap  # another thread is reloading
        try:
            return self.load()
        finally:
            self.reload.release()

    def load(self) -> tuple[VectorMatrix, dict[str, int]]:
        """Load the matrix if the generation moved (the reload lock is held)."""
        snap = self.snap
        if snap is None:
            mat = self.vectors.matrix(self.space)
        elif snap[0].generation != self.vectors.generation():
            mat = self.vectors.matrix_since(self.space, snap[0])  # only what changed
        else:
            return snap
        if snap is None or mat is not snap[0]:
            snap = (mat, _unit_index(mat.unit_ids, snap))
            self.snap = snap
        return snap

    def wake(self) -> None:
        """Ask the background reloader (one thread per space, started on first use, so
        one SQLite connection) to reload (:func:`serve_mode`)."""
        with self.state:
            if self.worker is None:
                self.worker = threading.Thread(
                    target=self._reloader, name="cairn-dense-reload", daemon=True)
                self.worker.start()
        self.stale.set()

    def _reloader(self) -> None:
        """The background reloader's loop; a failed load leaves the old snapshot in
        place (the next search asks again). An index run commits a few times in a row
        (chunks, vectors, pruning): the patch waits until the generation has held still
        (:func:`cairn.store.settle.wait_until_still`), so one run costs one patch, not
        one per commit."""
        while True:
            self.stale.wait()
            self.stale.clear()
            try:
                self._settle()
            except Exception:  # the next search asks again
                continue
            with self.reload:
                try:
                    self.load()
                except Exception:  # the next search asks again
                    continue


    def _settle(self) -> None:
        wait_until_still(self.vectors.generation)


_shared: weakref.WeakKeyDictionary[VectorIndex, dict[str, _Snapshots]] = (
    weakref.WeakKeyDictionary())
_shared_lock = threading.Lock()


def _snapshots(vectors: VectorIndex, space: str) -> _Snapshots:
    """The shared snapshots of ``space`` in ``vectors`` (made on first use)."""
    with _shared_lock:
        try:
            spaces = _shared.setdefault(vectors, {})
        except TypeError:  # not weakly referenceable: this index's own
            return _Snapshots(vectors, space)
        if space not in spaces:
            spaces[space] = _Snapshots(vectors, space)
        return spaces[space]


class DenseIndex:
    """Exact cosine search over one embedding space of a store.

    Args:
        vectors: the store's vector index (``store.vectors``).
        space: the embedder fingerprint whose vectors are searched.
    """

    def __init__(self, vectors: VectorIndex, space: str) -> None:
        self.vectors = vectors
        self.space = space
        self._snaps = _snapshots(vectors, space)

    def matrix(self) -> VectorMatrix:
        """The current matrix, reloaded when the store's vector generation moved (see
        :meth:`snapshot`)."""
        return self.snapshot()[0]

    def snapshot(self) -> tuple[VectorMatrix, dict[str, int]]:
        """The current matrix with its ``unit id -> unit row`` index, reloaded when the
        store's vector generation moved; shared by every ``DenseIndex`` over the same
        ``vectors`` and space.

        One thread reloads at a time; while it does, other threads (concurrent
        requests of a server while an index run embeds) keep searching the snapshot
        they have instead of each loading its own copy. A unit deleted since simply
        finds no hit data and is dropped, so no deleted unit is ever returned. In
        :func:`serve_mode` the reload runs in a background thread and this call
        returns the snapshot it has at once (it waits only for the very first load).
        """
        return self._snaps.get()

    def indexed(self) -> bool:
        """Whether the store searches this space itself (a vector index of its own,
        :meth:`cairn.store.indexes.VectorIndex.indexed`): then no matrix is loaded."""
        return self.vectors.indexed(self.space)

    def size(self) -> int:
        """Live chunk vectors in the space."""
        if self.indexed():
            return self.vectors.size(self.space)
        return self.matrix().live()

    def similarities(
        self, q: npt.NDArray[np.float32], vm: VectorMatrix | None = None
    ) -> npt.NDArray[np.float32]:
        """Cosine of ``q`` with every row of the matrix (``vm``, else the current one)."""
        m = (vm or self.matrix()).matrix
        out: npt.NDArray[np.float32] = m @ q.astype(m.dtype, copy=False)
        return out

    def _rows(
        self,
        q: npt.NDArray[np.float32],
        k: int,
        allowed: Collection[str] | None,
        excluded: Collection[str],
        include_alternates: bool,
    ) -> tuple[VectorMatrix, npt.NDArray[np.float32], npt.NDArray[np.intp]] | None:
        """``(matrix, similarity of q to every row, rows that may be hits)`` over this
        thread's snapshot, or ``None`` when the matrix is empty or ``k <= 0``; a row
        may be a hit when it is on the canonical branch (or ``include_alternates``),
        its unit is in ``allowed`` (when given) and not in ``excluded``."""
        import numpy as np

        vm, index = self.snapshot()
        n = vm.matrix.shape[0]
        if n == 0 or k <= 0:
            return None
        sims = self.similarities(q, vm)
        mask = np.ones(n, dtype=bool) if vm.dead is None else ~vm.dead
        if not include_alternates:
            mask &= ~vm.alternate
        if allowed is not None:
            mask &= self._unit_mask(allowed, vm, index)
        if excluded:
            mask &= ~self._unit_mask(excluded, vm, index)
        return vm, sims, np.flatnonzero(mask)

    def _unit_mask(
        self, unit_ids: Collection[str], vm: VectorMatrix, index: dict[str, int]
    ) -> npt.NDArray[np.bool_]:
        """Per row of ``vm``: whether its unit is one of ``unit_ids``."""
        import numpy as np

        per_unit = np.zeros(len(vm.unit_ids), dtype=bool)
        pos = [i for i in (index.get(u) for u in unit_ids) if i is not None]
        if pos:
            per_unit[np.fromiter(pos, np.int64, len(pos))] = True
        out: npt.NDArray[np.bool_] = per_unit[vm.units]
        return out

    def search(
        self,
        q: npt.NDArray[np.float32],
        k: int,
        *,
        allowed: Collection[str] | None = None,
        excluded: Collection[str] = (),
        include_alternates: bool = False,
    ) -> list[DenseHit]:
        """The ``k`` best distinct live units for query vector ``q``, best first.

        Args:
            q: a unit query vector of the space's dimension.
            k: units wanted.
            allowed: when given, only these unit ids (filters already applied).
            excluded: unit ids to leave out (units matching ``-word`` terms).
            include_alternates: also units off a conversation's canonical branch.

        Returns:
            Up to ``k`` hits; fewer only when fewer units qualify.
        """
        import numpy as np

        if self.indexed():
            return [DenseHit(*h) for h in self.vectors.nearest(
                self.space, q, k, allowed, excluded=excluded,
                include_alternates=include_alternates)]
        rows = self._rows(q, k, allowed, excluded, include_alternates)
        if rows is None:
            return []
        vm, sims, idx = rows
        if idx.size == 0:
            return []
        sub = sims[idx]
        want = min(idx.size, max(4 * k, k + 32))
        while True:
            if want >= idx.size:
                top = np.argsort(-sub, kind="stable")
            else:
                part = np.argpartition(-sub, want - 1)[:want]
                top = part[np.argsort(-sub[part], kind="stable")]
            hits: list[DenseHit] = []
            seen: set[int] = set()
            for t in top:
                row = int(idx[t])
                u = int(vm.units[row])
                if u in seen:
                    continue
                seen.add(u)
                hits.append(
                    DenseHit(
                        vm.unit_ids[u],
                        float(sims[row]),
                        int(vm.ordinals[row]),
                        int(vm.starts[row]),
                        int(vm.ends[row]),
                    )
                )
                if len(hits) == k:
                    return hits
            if want >= idx.size:
                return hits
            want = min(idx.size, want * 4)

    def search_where(
        self,
        q: npt.NDArray[np.float32],
        k: int,
        keep: Callable[[Sequence[str]], Collection[str]],
        *,
        excluded: Collection[str] = (),
        include_alternates: bool = False,
        widest: int | None = None,
    ) -> list[DenseHit] | None:
        """:meth:`search` restricted to the units ``keep`` lets through, for a filter
        that many units pass: the best units are asked in growing batches (``keep``
        gets unit ids and returns those that pass) over one similarity pass, instead
        of listing every unit the filter passes first. The hits are exactly those of
        ``search(q, k, allowed=<every unit that passes>)``.

        Returns:
            Up to ``k`` hits, best first; ``None`` when fewer than ``k`` passed among
            the best ``widest`` units and more remain (a selective filter: then the
            caller lists the units it passes and calls :meth:`search`); ``widest``
            defaults to :data:`WHERE_WIDEST`.
        """
        import numpy as np

        widest = WHERE_WIDEST if widest is None else widest
        if self.indexed():
            return None
        rows = self._rows(q, k, None, excluded, include_alternates)
        if rows is None:
            return []
        vm, sims, idx = rows
        sub = sims[idx]
        order = np.argsort(-sub, kind="stable")  # every row: cheap next to the product
        hits: list[DenseHit] = []
        seen: set[int] = set()
        batch: list[DenseHit] = []
        want = max(1, min(max(4 * k, 64), widest))  # a batch never passes ``widest``
        for t in order.tolist():
            row = int(idx[t])
            u = int(vm.units[row])
            if u in seen:
                continue
            seen.add(u)
            batch.append(DenseHit(vm.unit_ids[u], float(sims[row]), int(vm.ordinals[row]),
                                  int(vm.starts[row]), int(vm.ends[row])))
            if len(batch) < want:
                continue
            ok = keep([h.unit_id for h in batch])
            hits.extend(h for h in batch if h.unit_id in ok)
            if len(hits) >= k:
                return hits[:k]
            if len(seen) >= widest:
                return None
            batch, want = [], want * 4
        ok = keep([h.unit_id for h in batch]) if batch else ()
        hits.extend(h for h in batch if h.unit_id in ok)
        return hits[:k]

    def unit_similarity(
        self, q: npt.NDArray[np.float32], unit_ids: Sequence[str]
    ) -> dict[str, float]:
        """Best-chunk cosine of ``q`` for each given unit that has vectors."""
        import numpy as np

        if self.indexed():
            return self.vectors.similarity(self.space, q, unit_ids)
        vm, index = self.snapshot()
        if not unit_ids or vm.matrix.shape[0] == 0:
            return {}
        mask = self._unit_mask(unit_ids, vm, index)
        if vm.dead is not None:
            mask &= ~vm.dead
        rows = np.flatnonzero(mask)
        if rows.size == 0:
            return {}
        sims = vm.matrix[rows] @ q.astype(np.float32, copy=False)
        out: dict[str, float] = {}
        for r, s in zip(rows.tolist(), sims.tolist(), strict=True):
            u = vm.unit_ids[int(vm.units[r])]
            if s > out.get(u, -2.0):
                out[u] = float(s)
        return out
