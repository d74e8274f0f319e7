"""Import a legacy NetworkX node-link graph (``knowledge_graph.json`` / ``.yaml``, as
``networkx.node_link_data`` writes it: ``{"nodes": [{"id", …attributes}], "links" (or
``"edges"``): [{"source", "target", "type"|"relation"|"label", …}]}``) into layer-2
concept files with typed relations, and report what could not be mapped.

Mapping: one concept per node (``concepts/active/concept-<sha of id>.md``): ``title``
from ``title``/``label``/``name`` else the id, ``description``, ``tags``,
``node_type`` (one of the OKF-MEMORY node types, else ``Fact`` and reported),
``confidence`` (0–1, else 1.0), ``pinned`` (``true`` only; any other value is
reported and imported as ``false``); every other attribute is kept under ``attributes``.
Links become ``relations`` of their source node; a link type outside the five relation
types becomes ``related`` and is reported; links to unknown nodes are reported and
skipped. Existing concept files are never overwritten (reported as skipped).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from cairn.memory.bundle import MemoryBundle, MemoryError_, now_iso, render_file
from cairn.memory.layout import CONCEPT_TYPE, NODE_TYPES, PRODUCER, RELATION_TYPES

_KNOWN = {
    "id",
    "title",
    "label",
    "name",
    "description",
    "tags",
    "node_type",
    "type",
    "confidence",
    "body",
    "text",
    "pinned",
}


@dataclass(frozen=True, slots=True)
class Unmapped:
    """A node, link or value of an imported graph that could not be mapped as is
    (written with a fallback, or skipped): ``what`` (``node``, ``link``), its ``id``
    (``#<position>`` when it has none; ``source->target`` for a link) and why."""

    what: str
    id: str
    reason: str


@dataclass
class ImportReport:
    """What an import did: ``concepts`` written, ``relations`` written, and
    ``unmapped``: every node, link or value that could not be mapped as is."""

    source: str
    concepts: int = 0
    relations: int = 0
    unmapped: list[Unmapped] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    dry_run: bool = False


def load_node_link(path: Path) -> dict[str, Any]:
    """Read a node-link graph from ``.json``, ``.yaml`` or ``.yml``.

    Raises:
        MemoryError_: unreadable, not JSON/YAML, or not a mapping with a ``nodes`` list.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MemoryError_(f"{path}: cannot read: {exc}") from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else YAML(typ="safe").load(text)
    except (json.JSONDecodeError, YAMLError) as exc:
        raise MemoryError_(f"{path}: not a node-link graph: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise MemoryError_(f"{path}: not a node-link graph (no 'nodes' list)")
    return data


def concept_path(node_id: str) -> str:
    """The bundle-relative file of an imported node."""
    return f"concepts/active/concept-{hashlib.sha256(node_id.encode()).hexdigest()[:12]}.md"


def import_node_link(bundle: MemoryBundle, data: Mapping[str, Any], source: str) -> ImportReport:
    """Write one concept per node of ``data`` (see the module docstring)."""
    rep = ImportReport(source, dry_run=bundle.dry_run)
    nodes: dict[str, dict[str, Any]] = {}
    for i, n in enumerate(data.get("nodes") or []):
        if not isinstance(n, dict) or n.get("id") is None:
            rep.unmapped.append(Unmapped("node", f"#{i}", "no id"))
            continue
        nid = str(n["id"])
        if nid in nodes:
            rep.unmapped.append(Unmapped("node", nid, "duplicate id"))
            continue
        nodes[nid] = n
    rels: dict[str, list[dict[str, Any]]] = {k: [] for k in nodes}
    links = data.get("links", data.get("edges")) or []
    for i, link in enumerate(links if isinstance(links, list) else []):
        if not isinstance(link, dict):
            rep.unmapped.append(Unmapped("link", f"#{i}", "not a mapping"))
            continue
        s, t = str(link.get("source")), str(link.get("target"))
        lid = f"{s}->{t}"
        if s not in nodes or t not in nodes:
            rep.unmapped.append(Unmapped("link", lid, "unknown node"))
            continue
        if s == t:
            rep.unmapped.append(Unmapped("link", lid, "link to itself"))
            continue
        rtype = str(link.get("type") or link.get("relation") or link.get("label") or "related")
        if rtype not in RELATION_TYPES:
            rep.unmapped.append(
                Unmapped("link", lid, f"type {rtype!r} imported as 'related'")
            )
            rtype = "related"
        conf = link.get("confidence", link.get("weight", 1.0))
        if not isinstance(conf, int | float) or isinstance(conf, bool) or not 0 <= conf <= 1:
            conf = 1.0
        rels[s].append({"target": "/" + concept_path(t), "type": rtype, "confidence": float(conf)})
    stamp = now_iso()
    for nid, n in nodes.items():
        rel = concept_path(nid)
        if bundle.abs(rel).exists():
            rep.unmapped.append(Unmapped("node", nid, f"{rel} exists; skipped"))
            continue
        node_type = str(n.get("node_type") or n.get("type") or "Fact")
        if node_type not in NODE_TYPES:
            rep.unmapped.append(
                Unmapped("node", nid, f"node type {node_type!r} imported as Fact")
            )
            node_type = "Fact"
        conf = n.get("confidence", 1.0)
        if not isinstance(conf, int | float) or isinstance(conf, bool) or not 0 <= conf <= 1:
            conf = 1.0
        if n.get("pinned") is not None and not isinstance(n.get("pinned"), bool):
            rep.unmapped.append(
                Unmapped("node", nid, f"pinned {n['pinned']!r} imported as false")
            )
        tags = n.get("tags")
        title = str(n.get("title") or n.get("label") or n.get("name") or nid)
        meta: dict[str, Any] = {
            "type": CONCEPT_TYPE,
            "title": title,
            "description": str(n.get("description") or title),
            "tags": [str(t) for t in tags] if isinstance(tags, list) else [],
            "timestamp": stamp,
            "generated": {"by": PRODUCER, "at": stamp},
            "node_type": node_type,
            "sources": [{"id": f"networkx:{nid}", "resource": source}],
            "confidence": float(conf),
            "retrieval_count": 0,
            "pinned": n.get("pinned") is True,
            "status": "active",
            "relations": rels[nid],
        }
        extra = {k: v for k, v in n.items() if k not in _KNOWN}
        if extra:
            meta["attributes"] = json.loads(json.dumps(extra, default=str))
        body = str(n.get("body") or n.get("text") or n.get("description") or title)
        bundle.create(rel, render_file(meta, f"# Details\n\n{body}\n"))
        rep.concepts += 1
        rep.relations += len(rels[nid])
        rep.paths.append(rel)
    bundle.note(
        f"**Creation**: imported {rep.concepts} concepts and {rep.relations} relations "
        f"from a node-link graph ({len(rep.unmapped)} not mapped as is)"
    )
    bundle.flush_log()
    return rep
