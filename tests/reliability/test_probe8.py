"""Regression tests of the defects the eighth wave's fresh-user probe found, on real
files, a real index and the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.errors import StoreError
from cairn.store import open_store

SRC = Path(__file__).resolve().parents[2] / "src"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    return subprocess.run(
        [sys.executable, "-m", "cairn.interfaces.cli", *args], capture_output=True, text=True,
        env={**env, "PYTHONPATH": str(SRC), "CAIRN_EMBED": "none", "COLUMNS": "200"},
    )


def test_a_folder_given_as_the_index_says_so(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as exc:
        open_store(tmp_path)
    assert str(tmp_path) in str(exc.value) and "a folder, not an index file" in str(exc.value)
    res = _cli("--db", str(tmp_path), "index", str(tmp_path))
    assert res.returncode == 2 and "a folder, not an index file" in res.stderr
    assert list(tmp_path.iterdir()) == []  # nothing was made in it
