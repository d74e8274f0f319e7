"""Shared fixtures, the ``corpus`` marker and the test tiers.

Tests that read ``../shared`` (the real corpus and the cases) are marked ``corpus``; in a
clone without ``../shared`` beside it they are skipped with that reason.

Tiers: a bare ``pytest`` runs the fast tier, leaving out the tests marked with one of
:data:`SLOW_TIERS` (real server processes under faults, the whole shared corpus, a real
PostgreSQL, Chromium, large generated inputs). ``pytest --tier all`` (what
``scripts/test.sh`` and CI run), ``-m EXPR``, or naming test files or folders runs what
was asked for, every tier included.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"
CASES = SHARED / "cases"
HAVE_SHARED = CORPUS.is_dir() and CASES.is_dir()


SLOW_TIERS = ("slow", "faults", "browser", "postgres", "corpus")
"""Markers of the tests a bare ``pytest`` leaves out (``--tier all`` runs them)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--tier fast|all``."""
    parser.addoption(
        "--tier", choices=("fast", "all"), default=None,
        help="fast: leave out the tests marked " + ", ".join(SLOW_TIERS) + "; all: run "
             "every tier. Default: fast for a bare run, all when -m, test files or "
             "folders are given.")


def _tier(config: pytest.Config) -> str:
    """The tier asked for: ``--tier``, else ``all`` when the run names its tests (paths
    or ``-m``), else ``fast``."""
    asked: str | None = config.getoption("--tier")
    if asked is not None:
        return asked
    named = config.args_source == pytest.Config.ArgsSource.ARGS
    return "all" if named or config.getoption("markexpr") else "fast"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the slower tiers from a fast run; skip ``corpus``-marked tests when
    ``../shared`` is missing."""
    if _tier(config) == "fast":
        left_out = [i for i in items if any(m in i.keywords for m in SLOW_TIERS)]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            gone = set(map(id, left_out))
            items[:] = [i for i in items if id(i) not in gone]
    if HAVE_SHARED:
        return
    skip = pytest.mark.skip(reason="../shared (corpus and cases) is not beside this clone")
    for item in items:
        if "corpus" in item.keywords:
            item.add_marker(skip)


def pytest_report_header(config: pytest.Config) -> str:
    """Say which tier runs."""
    if _tier(config) == "fast":
        return ("tier: fast (leaves out tests marked " + ", ".join(SLOW_TIERS)
                + "; --tier all runs them)")
    return "tier: all"


@pytest.fixture(autouse=True, scope="session")
def _keyword_only() -> Iterator[None]:
    """Tests index without embeddings (``CAIRN_EMBED=none``) unless marked ``embed``:
    most tests are about parsing, keyword search and the graph, and embedding every
    test vault would only slow them down. Set for the whole session, so module-scoped
    fixtures see it too."""
    old = os.environ.get("CAIRN_EMBED")
    os.environ["CAIRN_EMBED"] = "none"
    yield
    if old is None:
        os.environ.pop("CAIRN_EMBED", None)
    else:
        os.environ["CAIRN_EMBED"] = old


@pytest.fixture(autouse=True)
def _embed_when_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests marked ``embed`` run the shipped model through ``Cairn``."""
    if request.node.get_closest_marker("embed") is not None:
        monkeypatch.delenv("CAIRN_EMBED", raising=False)


@pytest.fixture
def cases() -> Path:
    """Path to ``../shared/cases``."""
    return CASES


@pytest.fixture
def corpus() -> Path:
    """Path to ``../shared/corpus``."""
    return CORPUS
