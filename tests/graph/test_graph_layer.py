"""graph/ reaches storage only through the store protocols (``cairn.store.base`` and
the narrow ones it is made of): it imports neither ``sqlite3`` nor ``cairn.store.sqlite``
nor ``cairn.formats``, touches no ``.db`` attribute, and no module is over ~600 lines."""

from __future__ import annotations

import ast
from pathlib import Path

GRAPH = Path(__file__).resolve().parents[2] / "src" / "cairn" / "graph"
PROTOCOLS = ("Store", "EdgeIndex", "LinkIndex", "DocumentIndex", "base")
"""What graph/ may take from ``cairn.store``: protocols, never an opener or a backend."""
ALLOWED = ("cairn.graph", "cairn.model", "cairn.errors", "cairn.config", "cairn.text",
           "cairn.store.base", "cairn.store")


def test_graph_imports_only_the_protocol_and_the_vocabulary() -> None:
    bad: list[str] = []
    for path in sorted(GRAPH.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                if name == "sqlite3" or (name.startswith("cairn")
                                         and not name.startswith(ALLOWED)):
                    bad.append(f"{path.name}:{node.lineno} imports {name}")
                if name == "cairn.store" and isinstance(node, ast.ImportFrom):
                    bad += [f"{path.name}:{node.lineno} imports cairn.store.{a.name}"
                            for a in node.names if a.name not in PROTOCOLS]
            if isinstance(node, ast.Attribute) and node.attr == "db":
                bad.append(f"{path.name}:{node.lineno} uses .db")
    assert not bad, "\n".join(bad)


def test_no_graph_module_is_over_600_lines() -> None:
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines())
             for p in GRAPH.glob("*.py")}
    assert max(sizes.values()) <= 600, sizes
