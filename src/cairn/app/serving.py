"""What a long-running server process (and each of its child processes) asks of the
engine before it opens an index (the doors and :mod:`cairn.serving` may import only
``app`` and ``config``); :data:`INDEX_NICE`, the lower CPU priority of a server's index
runs."""

from __future__ import annotations

from cairn.ingest.background import INDEX_NICE
from cairn.search.dense import serve_mode as _dense_serve_mode
from cairn.store.sql.waiting import count_in_background

__all__ = ["INDEX_NICE", "child_mode", "serve_mode"]


def serve_mode(enabled: bool = True) -> None:
    """What a server sets before it opens an index: stale vector matrices are
    patched in a background thread (:func:`cairn.search.dense.serve_mode`, which also
    asks for one BLAS thread; call this before numpy is imported), and so is the count
    of units waiting for a vector (:func:`cairn.store.sql.waiting.count_in_background`):
    no request waits for either after an index run."""
    _dense_serve_mode(enabled)
    count_in_background(enabled)


def child_mode() -> None:
    """What a server's child process sets before it opens an index: one thread per
    local embedding model (the server's requests keep the other cores)."""
    from cairn.embed.registry import set_default_threads

    set_default_threads(1)
