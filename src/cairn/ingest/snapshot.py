"""What an index run produced, in a comparable form: :func:`index_snapshot`, which the
watcher, crash and concurrency tests compare between two indexes of the same files."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from cairn.model import IndexSnapshot
from cairn.store import Store

if TYPE_CHECKING:
    from cairn.graph.service import GraphService


def index_snapshot(store: Store, graph: GraphService) -> IndexSnapshot:
    """Everything an index run produces, in a comparable form: two indexes of the
    same files give equal snapshots (what the watcher and crash tests compare).

    Args:
        store: the index.
        graph: its graph, up to date (``Cairn.graph.fresh()``): its edges are compared.

    Returns:
        an :class:`IndexSnapshot`; vectors are left out (a cache may keep more),
        chunks are in.
    """
    files: list[tuple[str, str, str, str]] = []
    docs: list[tuple[str, ...]] = []
    units: list[tuple[Any, ...]] = []
    links: list[tuple[Any, ...]] = []
    chunks: list[tuple[str, int, str]] = []
    vectors = store.vectors
    for root in sorted(store.roots(), key=lambda r: r.path):
        states = store.file_states(root.id)
        for rel in sorted(states):
            st = states[rel]
            files.append((root.path, rel, st.status, st.hash))
            for d in store.documents_at(root.id, rel):
                docs.append((d.id, root.path, rel, d.key or "", d.title, d.format))
                us = store.units_of(d.id)
                for u in us:
                    units.append(
                        (
                            u.id,
                            d.id,
                            u.ordinal,
                            u.kind,
                            u.title,
                            u.outline_path,
                            u.line_start,
                            u.line_end,
                            u.body,
                            u.tags,
                            u.inherited_tags,
                        )
                    )
                    cs = vectors.chunks_of(u.id)
                    chunks.append((u.id, len(cs), ",".join(c.hash for c in cs)))
                for lk in store.links_of([u.id for u in us]):
                    links.append(
                        (
                            lk.unit_id,
                            lk.kind,
                            lk.target,
                            lk.anchor or "",
                            lk.line or 0,
                            lk.resolved_document_id or "",
                            lk.resolved_unit_id or "",
                        )
                    )
    exported = json.loads(graph.export("json"))
    edges = sorted(
        (
            str(e.get("source")),
            str(e.get("target")),
            str(e.get("relation", "")),
            str(e.get("origin", "")),
        )
        for e in exported.get("links", exported.get("edges", []))
    )
    return IndexSnapshot(
        files=tuple(files),
        documents=tuple(sorted(docs)),
        units=tuple(sorted(units, key=repr)),
        links=tuple(sorted(links, key=repr)),
        edges=tuple(edges),
        chunks=tuple(sorted(chunks)),
    )
