"""``cairn.model`` loads each public name's submodule on first use (start-up time of a
new process, ``bench/startup.py``): the runtime table and the typed imports agree, every
public name resolves, and importing the package builds no dataclass."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import cairn.model
from cairn.model import FACET_FIELDS
from cairn.model import __all__ as public

INIT = Path(cairn.model.__file__)


def _typed_imports() -> dict[str, str]:
    """``{name: submodule}`` of the ``if TYPE_CHECKING:`` imports of the package."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module
                for alias in imp.names:
                    out[alias.asname or alias.name] = imp.module.rsplit(".", 1)[1]
    return out


def test_the_table_the_typed_imports_and_all_agree() -> None:
    typed = _typed_imports()
    assert typed == cairn.model._WHERE
    assert sorted(typed) == sorted(public)


def test_every_public_name_resolves_to_its_submodule() -> None:
    for name in public:
        value = getattr(cairn.model, name)
        module = sys.modules[f"cairn.model.{cairn.model._WHERE[name]}"]
        assert value is getattr(module, name), name
    assert set(public) <= set(dir(cairn.model))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        cairn.model.NoSuchThing  # noqa: B018
    with pytest.raises(ImportError):
        exec("from cairn.model import NoSuchThing", {})


def test_importing_the_package_builds_nothing() -> None:
    code = (
        "import sys, cairn.model\n"
        "from cairn.model import Hit\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('cairn.model.'))))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.split() == ["cairn.model.core"]


def test_the_store_counts_the_facet_fields_in_their_order() -> None:
    from cairn.store.sql.facets import _FIELDS

    assert _FIELDS == FACET_FIELDS
