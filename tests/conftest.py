"""Shared fixtures and the ``corpus`` marker.

Tests that read ``../shared`` (the real corpus and the cases) are marked ``corpus``; in a
clone without ``../shared`` beside it they are skipped with that reason.
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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``corpus``-marked tests when ``../shared`` is missing."""
    if HAVE_SHARED:
        return
    skip = pytest.mark.skip(reason="../shared (corpus and cases) is not beside this clone")
    for item in items:
        if "corpus" in item.keywords:
            item.add_marker(skip)


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
