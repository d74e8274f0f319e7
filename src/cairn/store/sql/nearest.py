"""Exact nearest-neighbour search over an in-process :class:`cairn.model.VectorMatrix`
(SQLite's :meth:`~cairn.store.indexes.VectorIndex.nearest` and ``similarity``; the
PostgreSQL store without pgvector uses them through the same methods)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from cairn.model import VectorMatrix
    from cairn.store.indexes import NearChunk


def exact_nearest(
    vm: VectorMatrix,
    vector: npt.NDArray[np.float32],
    k: int,
    candidates: Collection[str] | None = None,
    *,
    excluded: Collection[str] = (),
    include_alternates: bool = False,
) -> list[NearChunk]:
    """The ``k`` best distinct units of ``vm`` by cosine with ``vector`` (unit vectors:
    the dot product), each ``(unit_id, cosine, ordinal, start, end)`` of its best chunk,
    best first; only ``candidates`` when given, never ``excluded``, alternates only
    with ``include_alternates``."""
    import numpy as np

    if vm.matrix.shape[0] == 0 or k <= 0:
        return []
    sims = vm.matrix @ np.asarray(vector, np.float32)
    keep = np.ones(len(vm.unit_ids), dtype=bool)
    drop = set(excluded)
    allowed = None if candidates is None else set(candidates)
    for i, uid in enumerate(vm.unit_ids):
        if uid in drop or (allowed is not None and uid not in allowed):
            keep[i] = False
    mask = keep[vm.units]
    if not include_alternates:
        mask &= ~vm.alternate
    if vm.dead is not None:
        mask &= ~vm.dead
    out: list[NearChunk] = []
    seen: set[int] = set()
    for row in np.flatnonzero(mask)[np.argsort(-sims[mask], kind="stable")]:
        u = int(vm.units[row])
        if u not in seen:
            seen.add(u)
            out.append((vm.unit_ids[u], float(sims[row]), int(vm.ordinals[row]),
                        int(vm.starts[row]), int(vm.ends[row])))
            if len(out) == k:
                break
    return out


def best_similarity(
    vm: VectorMatrix, vector: npt.NDArray[np.float32], unit_ids: Sequence[str]
) -> dict[str, float]:
    """Best-chunk cosine with ``vector`` per unit of ``unit_ids`` that has a vector."""
    import numpy as np

    wanted = set(unit_ids)
    sims = vm.matrix @ np.asarray(vector, np.float32)
    dead = [False] * len(sims) if vm.dead is None else vm.dead.tolist()
    out: dict[str, float] = {}
    for row, s in enumerate(sims.tolist()):
        u = vm.unit_ids[int(vm.units[row])]
        if u in wanted and not dead[row] and s > out.get(u, -2.0):
            out[u] = float(s)
    return out
