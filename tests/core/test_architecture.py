"""The data flow of DESIGN.md, enforced: a test reads every module's imports.

files → sources → formats → model → ingest → store ← search ← interfaces. Each layer
may import the layers listed for it below (and always ``model``, ``errors``, ``text``);
``app`` is the composition root and may import anything; ``evaluation`` composes an
index run and searches over a throwaway store; interfaces may import only ``app`` and
the vocabulary, never a backend or a parser. Besides the layers: ``sqlite3`` and the
``.db`` connection stay inside ``store/``; ``cairn.store.sqlite`` is imported only by
``store/`` itself and the composition root; search never imports ingest, graph never
imports formats; module-level imports form no cycle.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "cairn"

BASE = {"model", "errors", "text"}
ALLOWED: dict[str, set[str]] = {
    "model": {"errors"},  # a SearchRequest checks its fields and raises QueryError
    "errors": set(),
    "text": set(),
    "config": {"errors"},
    "globs": {"errors"},
    "sources": BASE | {"globs"},
    "formats": BASE | {"formats", "sources"},
    "redact": BASE,
    "writeback": BASE | {"writeback"},
    "store": BASE | {"store", "config"},
    "embed": BASE | {"embed", "config"},
    "graph": BASE | {"graph", "store", "config"},
    "ingest": BASE | {
        "ingest", "sources", "globs", "formats", "store", "graph", "embed", "config",
    },
    "search": BASE | {"search", "store", "embed", "graph", "config"},
    "maintain": BASE | {
        "maintain", "writeback", "store", "graph", "search", "formats", "config", "memory",
    },
    "memory": BASE | {"memory", "writeback", "store", "search", "formats", "ingest", "config"},
    "enrich": BASE | {"enrich", "config"},
    "export": BASE | {"export", "writeback", "store", "graph", "config", "formats"},
    "evaluation": BASE | {"store", "ingest", "search", "embed", "config"},
    "interfaces": BASE | {"interfaces", "app", "config"},
    "app": None,  # type: ignore[dict-item]  # the composition root
}


def _layer(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def _cairn_imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("cairn."):
                    out.append((node.lineno, a.name.split(".")[1]))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("cairn."):
                out.append((node.lineno, node.module.split(".")[1]))
            elif node.module == "cairn":
                out.extend((node.lineno, a.name) for a in node.names)
    return out


def test_every_module_imports_only_layers_to_its_left() -> None:
    bad: list[str] = []
    modules = [p for p in SRC.rglob("*.py") if p.name != "__init__.py" or p.parent != SRC]
    assert len(modules) > 10
    for path in modules:
        layer = _layer(path)
        assert layer in ALLOWED, f"{path}: layer {layer!r} is not in DESIGN.md's map"
        allowed = ALLOWED[layer]
        if allowed is None:
            continue
        for line, target in _cairn_imports(path):
            if target != layer and target not in allowed:
                bad.append(f"{path.relative_to(SRC)}:{line} ({layer}) imports cairn.{target}")
    assert not bad, "imports against the data flow:\n" + "\n".join(bad)


def test_the_checker_catches_a_backward_import(tmp_path: Path) -> None:
    fake = tmp_path / "m.py"
    fake.write_text("from cairn.store import open_store\nimport cairn.app\n")
    assert [t for _, t in _cairn_imports(fake)] == ["store", "app"]
    assert "store" not in ALLOWED["formats"]  # so a parser importing it would be flagged
    assert "store" not in ALLOWED["interfaces"]


def test_heavy_libraries_are_not_imported_at_cli_start() -> None:
    import subprocess
    import sys

    code = (
        "import sys, cairn.interfaces.cli\n"
        "heavy = [m for m in ('numpy', 'torch', 'onnxruntime', 'fastapi', 'mcp', "
        "'sentence_transformers') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == ""


def _modules() -> list[Path]:
    return [p for p in SRC.rglob("*.py") if p.name != "__init__.py" or p.parent != SRC]


def _name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def test_sqlite_and_the_connection_stay_in_the_store() -> None:
    bad: list[str] = []
    for path in _modules():
        if _layer(path) == "store":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Import) and any(a.name == "sqlite3" for a in node.names)) or (
                isinstance(node, ast.ImportFrom) and node.module == "sqlite3"
            ):
                bad.append(f"{path.relative_to(SRC)}:{node.lineno} imports sqlite3")
            elif isinstance(node, ast.Attribute) and node.attr == "db":
                bad.append(f"{path.relative_to(SRC)}:{node.lineno} uses .db")
            elif (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("cairn.store.sqlite")
                and _layer(path) != "app"
            ):
                bad.append(f"{path.relative_to(SRC)}:{node.lineno} imports {node.module}")
    assert not bad, "storage outside the store:\n" + "\n".join(bad)


def _top_level_imports(path: Path) -> set[str]:
    """cairn modules imported at module level (not inside functions or TYPE_CHECKING)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _name(path)
    out: set[str] = set()

    def visit(stmts: list[ast.stmt]) -> None:
        for node in stmts:
            if isinstance(node, ast.If):
                test = node.test
                if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
                    continue
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name.startswith("cairn."))
            elif isinstance(node, ast.ImportFrom) and node.module:
                mod = node.module
                if node.level:
                    base = here.split(".")
                    if path.name != "__init__.py":
                        base = base[:-1]
                    base = base[: len(base) - node.level + 1]
                    mod = ".".join([*base, node.module])
                if mod.startswith("cairn."):
                    out.add(mod)
                    out.update(f"{mod}.{a.name}" for a in node.names)

    visit(tree.body)
    return out


def test_no_import_cycles() -> None:
    names = {_name(p): p for p in _modules()}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in names.items():
        graph[name] = {m for m in _top_level_imports(path) if m in names and m != name}
    # a package's __init__ importing its own submodules is not a cycle
    for name in list(graph):
        graph[name] = {m for m in graph[name] if not m.startswith(name + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def dfs(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                cycles.append([*stack[stack.index(m) :], m])
            elif m not in state:
                dfs(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            dfs(n)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles[:10])


def test_the_cycle_and_storage_checks_catch_offenders(tmp_path: Path) -> None:
    fake = tmp_path / "x.py"
    fake.write_text("import sqlite3\nfrom cairn.store.sqlite import SQLiteStore\n")
    tree = ast.parse(fake.read_text())
    assert any(isinstance(n, ast.Import) and n.names[0].name == "sqlite3" for n in ast.walk(tree))
    assert "search" not in ALLOWED["graph"] and "ingest" not in ALLOWED["search"]
    assert "formats" not in ALLOWED["graph"]
