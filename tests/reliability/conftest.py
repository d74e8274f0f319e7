"""Fixtures of the reliability tests (helpers in ``_reliability.py``)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _reliability import Watching, copy_notes


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A scratch copy of corpus notes."""
    return copy_notes(tmp_path / "vault")


@pytest.fixture
def watching(tmp_path: Path) -> Iterator[Callable[..., Watching]]:
    """``watching(folder, **opts)``: a started :class:`Watching` on ``tmp_path/w.db``."""
    started: list[Watching] = []

    def start(folder: Path, **opts: Any) -> Watching:
        w = Watching(folder, tmp_path / "w.db", **opts)
        w.__enter__()
        started.append(w)
        return w

    yield start
    for w in started:
        w.__exit__(None, None, None)
