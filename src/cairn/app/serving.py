"""What a long-running server process asks of the engine before it opens an index
(the doors may import only ``app`` and ``config``)."""

from __future__ import annotations

from cairn.search.dense import serve_mode

__all__ = ["serve_mode"]
