"""The ``cairn`` console script as a real process, for what only a process shows: its
exit status and what reaches file descriptors 1 and 2 (an error never on stdout, a JSON
document alone on it). ``test_cli_fast.py`` (what a new process loads) and the
writer-lock, kill and Ctrl-C tests of ``tests/reliability`` are real processes too, for
the same reason. Every other CLI test runs the same entry point in process (the ``cli``
fixture of ``tests/conftest.py``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "sample"
SRC = Path(__file__).resolve().parents[2] / "src"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    return {**env, "PYTHONPATH": str(SRC), "CAIRN_EMBED": "none", "COLUMNS": "200"}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory, cli: Callable[..., Any]) -> Path:
    folder = tmp_path_factory.mktemp("process")
    shutil.copytree(SAMPLE, folder / "sample")
    path = folder / "index.db"
    cli("--db", str(path), "index", str(folder / "sample"), "--no-embed")
    return path


def _cairn(db: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "cairn.interfaces.cli", "--db", str(db), *args],
        capture_output=True, env=_env(), timeout=120,
    )


def test_an_error_goes_to_stderr_and_its_json_alone_to_stdout(db: Path) -> None:
    plain = _cairn(db, "show", "no/such/file.org")
    assert plain.returncode == 1 and plain.stdout == b""
    assert b"no document, unit or indexed file" in plain.stderr
    assert b"Traceback" not in plain.stderr
    as_json = _cairn(db, "show", "no/such/file.org", "--json")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["type"] == "NotFound"  # one document, nothing else
    assert b"Traceback" not in as_json.stderr

