"""Waiting for an index to hold still (a server's background work after an index run).

An index run commits a few times in a row (units, chunks, vectors, pruning). Work a
server does in the background after a change — patching the vector matrix, counting the
units still waiting for a vector — should run once per run, not once per commit: it
waits until the store's vector generation has held still for :data:`SETTLE` seconds, at
most :data:`SETTLE_MAX` seconds after it started waiting.
"""

from __future__ import annotations

import time
from collections.abc import Callable

SETTLE = 0.1
"""Seconds the generation must hold still before background work runs."""
SETTLE_MAX = 1.0
"""The longest background work waits for the generation to hold still, in seconds."""


def wait_until_still(generation: Callable[[], int], *, settle: float = SETTLE,
                     most: float = SETTLE_MAX) -> None:
    """Return once ``generation()`` gave the same value twice ``settle`` seconds apart,
    or after about ``most`` seconds of waiting, whichever comes first.

    Args:
        generation: reads a counter that changes on every write (e.g.
            ``VectorIndex.generation``).
        settle: the quiet interval, in seconds.
        most: the longest wait, in seconds.

    Raises:
        Whatever ``generation`` raises (e.g. a closed store's error).
    """
    first = time.monotonic()
    gen = generation()
    while time.monotonic() - first < most:
        time.sleep(settle)
        now = generation()
        if now == gen:
            return
        gen = now
