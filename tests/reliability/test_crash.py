"""Crash safety: SIGKILL cairn at random moments of indexing, watching and embedding
(``bench/crash.py``); after each kill the index passes ``PRAGMA integrity_check`` and
``cairn check``, answers searches, and a converging run equals a clean build."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import crash

pytestmark = pytest.mark.corpus


def _run(tmp_path: Path, kills: int, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_WORKERS", "1")  # the converging runs, in this process
    lines: list[str] = []
    tally = crash.run_trials(tmp_path, kills, seed, log=lines.append)
    assert tally.kills == kills
    assert tally.ok, "\n".join(tally.details)
    assert (tally.corrupt, tally.check_problems, tally.search_errors, tally.divergent) == (
        0,
        0,
        0,
        0,
    )


def test_a_few_kills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The short version of the default run: 6 kills, two of each kind."""
    _run(tmp_path, 6, 7, monkeypatch)


@pytest.mark.slow
def test_fifty_kills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The long version (about 100 s): 51 kills, 17 of each kind."""
    _run(tmp_path, 51, 11, monkeypatch)
