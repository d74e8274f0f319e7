"""The data flow of DESIGN.md, enforced: a test reads every module's imports.

files → sources → formats → model → ingest → store ← search ← interfaces. Each layer
may import the layers listed for it below (and always ``model``, ``errors``,
``config``); ``app`` is the composition root and may import anything; interfaces may
import only ``app`` and the vocabulary, never a backend or a parser.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "cairn"

BASE = {"model", "errors", "text"}
ALLOWED: dict[str, set[str]] = {
    "model": set(),
    "errors": set(),
    "text": set(),
    "config": {"errors"},
    "sources": BASE,
    "formats": BASE | {"formats", "sources"},
    "redact": BASE,
    "store": BASE | {"store", "config"},
    "embed": BASE | {"embed", "config", "store"},
    "graph": BASE | {"graph", "store", "config", "formats"},
    "ingest": BASE | {"ingest", "sources", "formats", "store", "graph", "embed", "config"},
    "search": BASE | {"search", "store", "embed", "graph", "config", "ingest"},
    "maintain": BASE | {"maintain", "store", "graph", "search", "formats", "config"},
    "memory": BASE | {"memory", "store", "search", "formats", "ingest", "config"},
    "enrich": BASE | {"enrich", "config"},
    "export": BASE | {"export", "store", "graph", "config"},
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
