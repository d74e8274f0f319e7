"""What a long-running server process asks of the engine before it opens an index
(the doors may import only ``app`` and ``config``)."""

from __future__ import annotations

from cairn.search.dense import serve_mode as _dense_serve_mode
from cairn.store.sql.waiting import count_in_background

__all__ = ["serve_mode"]


def serve_mode(enabled: bool = True) -> None:
    """What a server sets before it opens an index: stale vector matrices are
    patched in a background thread (:func:`cairn.search.dense.serve_mode`, which also
    asks for one BLAS thread; call this before numpy is imported), and so is the count
    of units waiting for a vector (:func:`cairn.store.sql.waiting.count_in_background`):
    no request waits for either after an index run."""
    _dense_serve_mode(enabled)
    count_in_background(enabled)
