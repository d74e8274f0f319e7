"""Graph export: node-link JSON (NetworkX), GraphML, and Cytoscape.js elements.

Input is the plain data of :func:`cairn.graph.traverse.graph_data` (``{"directed",
"nodes", "edges"}``). All three formats keep every node attribute (``type`` unit or
stub, ``label``, ``kind``, ``path``, ``line``, ``document_id``) and every edge attribute
(``relation``, ``origin``, ``weight``, ``count``, ``evidence``). Several edges may join
the same two nodes (different relations or origins), so the graph is a directed
multigraph; the edge key is its deterministic id.

* ``json`` — ``networkx.node_link_data`` layout with ``"edges"`` (NetworkX >= 3.4's
  default key): ``networkx.node_link_graph(json.loads(text))`` reads it back as a
  ``MultiDiGraph``.
* ``graphml`` — GraphML 1.0 with typed ``<key>`` declarations; ``evidence`` is a JSON
  string. Readable by ``networkx.read_graphml``, Gephi, yEd, Cytoscape desktop.
* ``cytoscape`` — ``{"elements": {"nodes": [{"data": …}], "edges": [{"data": …}]}}``,
  what ``cytoscape({elements: …})`` draws in a browser (also vis-network after a rename).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from cairn.model.graph_results import NodeLinkGraph

FORMATS = ("json", "graphml", "cytoscape")

_NODE_ATTRS: tuple[tuple[str, str], ...] = (
    ("label", "string"),
    ("type", "string"),
    ("kind", "string"),
    ("path", "string"),
    ("line", "int"),
    ("document_id", "string"),
    ("doc_title", "string"),
    ("reason", "string"),
)
_EDGE_ATTRS: tuple[tuple[str, str], ...] = (
    ("relation", "string"),
    ("origin", "string"),
    ("weight", "double"),
    ("count", "int"),
    ("evidence", "string"),
)
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def node_link(data: Mapping[str, Any]) -> dict[str, Any]:
    """Node-link data as ``networkx.node_link_data(G, edges="edges")`` writes it for a
    ``MultiDiGraph`` (``key`` = edge id; see :class:`NodeLinkGraph`)."""
    return NodeLinkGraph(tuple(data["nodes"]), tuple(data["edges"])).to_mapping()


def cytoscape(data: Mapping[str, Any]) -> dict[str, Any]:
    """Cytoscape.js elements: node ``data`` has ``id`` and ``label``; edge ``data`` has
    ``id``, ``source``, ``target``, ``label`` (the relation) and the attributes."""
    return {
        "elements": {
            "nodes": [
                {"data": {k: v for k, v in n.items() if v is not None},
                 "classes": f"{n.get('type')} {n.get('kind') or ''}".strip()}
                for n in data["nodes"]
            ],
            "edges": [
                {"data": {**e, "label": e["relation"]}, "classes": f"{e['origin']} {e['relation']}"}
                for e in data["edges"]
            ],
        }
    }


def _x(value: Any) -> str:
    return _XML_BAD.sub("\ufffd", str(value))


def graphml(data: Mapping[str, Any]) -> str:
    """GraphML 1.0 text (UTF-8, ``edgedefault="directed"``)."""
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
        'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">',
    ]
    for name, typ in _NODE_ATTRS:
        out.append(f'  <key id="n_{name}" for="node" attr.name="{name}" attr.type="{typ}"/>')
    for name, typ in _EDGE_ATTRS:
        out.append(f'  <key id="e_{name}" for="edge" attr.name="{name}" attr.type="{typ}"/>')
    out.append('  <graph id="cairn" edgedefault="directed">')
    for n in data["nodes"]:
        out.append(f"    <node id={quoteattr(_x(n['id']))}>")
        for name, _typ in _NODE_ATTRS:
            v = n.get(name)
            if v is not None:
                out.append(f'      <data key="n_{name}">{escape(_x(v))}</data>')
        out.append("    </node>")
    for e in data["edges"]:
        out.append(
            f"    <edge id={quoteattr(_x(e['id']))} source={quoteattr(_x(e['source']))} "
            f"target={quoteattr(_x(e['target']))}>"
        )
        for name, _typ in _EDGE_ATTRS:
            v = e.get(name)
            if name == "evidence":
                v = json.dumps(v, ensure_ascii=False)
            if v is not None:
                out.append(f'      <data key="e_{name}">{escape(_x(v))}</data>')
        out.append("    </edge>")
    out.append("  </graph>")
    out.append("</graphml>")
    return "\n".join(out) + "\n"


def render(data: Mapping[str, Any], fmt: str) -> str:
    """The graph as text in ``fmt`` (``json``, ``graphml`` or ``cytoscape``).

    Raises:
        ValueError: unknown format.
    """
    f = fmt.casefold()
    if f in ("json", "node-link", "nodelink"):
        return json.dumps(node_link(data), ensure_ascii=False, indent=1) + "\n"
    if f == "graphml":
        return graphml(data)
    if f in ("cytoscape", "cyjs", "cytoscape.js"):
        return json.dumps(cytoscape(data), ensure_ascii=False, indent=1) + "\n"
    raise ValueError(f"unknown graph export format {fmt!r}; use one of {', '.join(FORMATS)}")
