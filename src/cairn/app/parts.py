"""What the role mixins of :class:`cairn.app.Cairn` may use (its constructor sets it)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # type-only: a keyword search loads no graph builders or parsers
    from cairn.config import Config
    from cairn.formats.types import RootTypes
    from cairn.graph.service import GraphService
    from cairn.ingest.embed_step import EmbeddingStep
    from cairn.redact.service import RedactService
    from cairn.search.service import SearchService
    from cairn.store import Store
    from cairn.store.lock import WriterLock


class Parts:
    """The services one :class:`cairn.app.Cairn` holds."""

    config: Config
    store: Store
    semantic: SearchService
    types: RootTypes
    writer_lock: WriterLock
    _index_running: int
    _graph_refresh: threading.Lock

    @property
    def graph_service(self) -> GraphService:
        """The graph service (built on first use)."""
        raise NotImplementedError

    @property
    def redact(self) -> RedactService:
        """The redaction service (:mod:`cairn.redact.service`)."""
        raise NotImplementedError

    @property
    def embedding(self) -> EmbeddingStep:
        """The embedding step on its own (:mod:`cairn.ingest.embed_step`)."""
        raise NotImplementedError

    def _load_types(self) -> RootTypes:
        raise NotImplementedError

