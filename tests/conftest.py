"""Shared fixtures and the ``corpus`` marker.

Tests that read ``../shared`` (the real corpus and the cases) are marked ``corpus``; in a
clone without ``../shared`` beside it they are skipped with that reason.
"""

from __future__ import annotations

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


@pytest.fixture
def cases() -> Path:
    """Path to ``../shared/cases``."""
    return CASES


@pytest.fixture
def corpus() -> Path:
    """Path to ``../shared/corpus``."""
    return CORPUS
