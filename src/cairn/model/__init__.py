"""The vocabulary of cairn: plain frozen dataclasses, no I/O.

Every layer speaks in these types (``from cairn.model import Unit``). By role:
:mod:`~cairn.model.core` (documents, units, links, runs, hits),
:mod:`~cairn.model.views` (what the store gives back), :mod:`~cairn.model.graph`
(edges, stubs, link resolution) and :mod:`~cairn.model.search` (parsed queries and
filters, hit data, chunks, vectors).

Each name is loaded on first use (PEP 562: :func:`__getattr__` imports the one
submodule that defines it), so a process pays only for the dataclasses it touches — a
keyword ``cairn search`` never builds the graph, conversation or report types
(``bench/startup.py``). A new public name goes in both the ``TYPE_CHECKING`` imports
(what mypy and readers see) and :data:`_WHERE` (what runs);
``tests/core/test_model_lazy.py`` checks that they agree.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cairn.model.conversations import Conversation
    from cairn.model.core import (
        CODE,
        CONCEPT,
        EMBED,
        HEADING,
        LINK_KINDS,
        MARKDOWN_LINK,
        MESSAGE,
        ORG_FILE,
        ORG_HEADING,
        ORG_ID,
        PLANNING_ROLES,
        PREAMBLE,
        SEARCH_MODES,
        URL,
        WIKILINK,
        BlockRef,
        Diagnostic,
        Document,
        EmbedStep,
        Failure,
        FileState,
        GraphStep,
        Hit,
        Link,
        LinkKind,
        Run,
        SearchMode,
        Severity,
        SourceRoot,
        Timestamp,
        Unit,
        UnitKind,
    )
    from cairn.model.doors import UNTRUSTED_NOTICE, Provenance, RecentDocument
    from cairn.model.facets import FACET_FIELDS, FacetField, Facets, FacetValue
    from cairn.model.graph import (
        Arc,
        BuiltinRelation,
        CatalogDocument,
        CatalogUnit,
        DocumentBrief,
        Edge,
        EdgeOrigin,
        GraphCounts,
        GraphDocument,
        GraphNode,
        GraphUnit,
        LinkOccurrence,
        LinkResolution,
        NodeType,
        OrphanDocument,
        Stub,
        StubKind,
        UnitShape,
        UnitSpan,
    )
    from cairn.model.reliability import AppliedChanges, IndexSnapshot
    from cairn.model.reports import ReportRecord
    from cairn.model.search import (
        Chunk,
        ChunkSource,
        ContextUnit,
        Filter,
        HitUnit,
        Term,
        TextQuery,
        UnitFacts,
        VectorMatrix,
        VectorSpace,
    )
    from cairn.model.search_request import SearchRequest
    from cairn.model.views import (
        Backlink,
        DocumentView,
        FailedFile,
        FileView,
        ShowView,
        StoredDocument,
        StoredLink,
        StoredUnit,
        UnitView,
    )

_WHERE: dict[str, str] = {
    "Conversation": "conversations",
    "CODE": "core",
    "CONCEPT": "core",
    "EMBED": "core",
    "HEADING": "core",
    "LINK_KINDS": "core",
    "MARKDOWN_LINK": "core",
    "MESSAGE": "core",
    "ORG_FILE": "core",
    "ORG_HEADING": "core",
    "ORG_ID": "core",
    "PLANNING_ROLES": "core",
    "PREAMBLE": "core",
    "SEARCH_MODES": "core",
    "URL": "core",
    "WIKILINK": "core",
    "BlockRef": "core",
    "Diagnostic": "core",
    "Document": "core",
    "EmbedStep": "core",
    "Failure": "core",
    "FileState": "core",
    "Filter": "search",
    "GraphStep": "core",
    "Hit": "core",
    "Link": "core",
    "LinkKind": "core",
    "Run": "core",
    "SearchMode": "core",
    "Severity": "core",
    "SourceRoot": "core",
    "Timestamp": "core",
    "Unit": "core",
    "UnitKind": "core",
    "UNTRUSTED_NOTICE": "doors",
    "Provenance": "doors",
    "RecentDocument": "doors",
    "FACET_FIELDS": "facets",
    "FacetField": "facets",
    "Facets": "facets",
    "FacetValue": "facets",
    "Arc": "graph",
    "BuiltinRelation": "graph",
    "CatalogDocument": "graph",
    "CatalogUnit": "graph",
    "DocumentBrief": "graph",
    "Edge": "graph",
    "EdgeOrigin": "graph",
    "GraphCounts": "graph",
    "GraphDocument": "graph",
    "GraphNode": "graph",
    "GraphUnit": "graph",
    "LinkOccurrence": "graph",
    "LinkResolution": "graph",
    "NodeType": "graph",
    "OrphanDocument": "graph",
    "Stub": "graph",
    "StubKind": "graph",
    "UnitShape": "graph",
    "UnitSpan": "graph",
    "AppliedChanges": "reliability",
    "IndexSnapshot": "reliability",
    "ReportRecord": "reports",
    "Chunk": "search",
    "ChunkSource": "search",
    "ContextUnit": "search",
    "HitUnit": "search",
    "Term": "search",
    "TextQuery": "search",
    "UnitFacts": "search",
    "VectorMatrix": "search",
    "VectorSpace": "search",
    "SearchRequest": "search_request",
    "Backlink": "views",
    "DocumentView": "views",
    "FailedFile": "views",
    "FileView": "views",
    "ShowView": "views",
    "StoredDocument": "views",
    "StoredLink": "views",
    "StoredUnit": "views",
    "UnitView": "views",
}
"""Each public name → the submodule of :mod:`cairn.model` that defines it."""

__all__ = [
    "CODE",
    "CONCEPT",
    "EMBED",
    "FACET_FIELDS",
    "HEADING",
    "LINK_KINDS",
    "MARKDOWN_LINK",
    "MESSAGE",
    "ORG_FILE",
    "ORG_HEADING",
    "ORG_ID",
    "PLANNING_ROLES",
    "PREAMBLE",
    "SEARCH_MODES",
    "UNTRUSTED_NOTICE",
    "URL",
    "WIKILINK",
    "AppliedChanges",
    "Arc",
    "Backlink",
    "BlockRef",
    "BuiltinRelation",
    "CatalogDocument",
    "CatalogUnit",
    "Chunk",
    "ChunkSource",
    "ContextUnit",
    "Conversation",
    "Diagnostic",
    "Document",
    "DocumentBrief",
    "DocumentView",
    "Edge",
    "EdgeOrigin",
    "EmbedStep",
    "FacetField",
    "FacetValue",
    "Facets",
    "FailedFile",
    "Failure",
    "FileState",
    "FileView",
    "Filter",
    "GraphCounts",
    "GraphDocument",
    "GraphNode",
    "GraphStep",
    "GraphUnit",
    "Hit",
    "HitUnit",
    "IndexSnapshot",
    "Link",
    "LinkKind",
    "LinkOccurrence",
    "LinkResolution",
    "NodeType",
    "OrphanDocument",
    "Provenance",
    "RecentDocument",
    "ReportRecord",
    "Run",
    "SearchMode",
    "SearchRequest",
    "Severity",
    "ShowView",
    "SourceRoot",
    "StoredDocument",
    "StoredLink",
    "StoredUnit",
    "Stub",
    "StubKind",
    "Term",
    "TextQuery",
    "Timestamp",
    "Unit",
    "UnitFacts",
    "UnitKind",
    "UnitShape",
    "UnitSpan",
    "UnitView",
    "VectorMatrix",
    "VectorSpace",
]


def __getattr__(name: str) -> object:
    """``cairn.model.<name>``: imported from its submodule on first use, then kept.

    Raises:
        AttributeError: ``name`` is not a public name of :mod:`cairn.model`.
    """
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    __import__(f"{__name__}.{module}")  # not importlib: -X importtime sees this one
    value = getattr(sys.modules[f"{__name__}.{module}"], name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
