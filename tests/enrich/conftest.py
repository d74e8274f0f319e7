"""Fixtures of the enrichment tests: a replaying OpenAI-compatible server on loopback
(:mod:`enrich_replay`); the vault is :mod:`enrich_vault`."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from enrich_replay import ReplayServer, replay_server


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    """A replaying OpenAI-compatible server on loopback."""
    with replay_server("openai") as s:
        yield s
