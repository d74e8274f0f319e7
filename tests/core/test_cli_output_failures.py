"""What the ``cairn`` process does when its output cannot be written as asked: a
stream whose encoding lacks a character (``PYTHONIOENCODING=ascii``, Latin-1), a full
disk (``> /dev/full``), a working folder deleted under it. Real processes: only a
process has these streams."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory, cli: Callable[..., Any]) -> Path:
    folder = tmp_path_factory.mktemp("encodings")
    notes = folder / "notes"
    notes.mkdir()
    (notes / "ever.org").write_text(
        "* Evergreen 🌲 notes :🌲:\nevergreen trees … café 日本語\n", encoding="utf-8")
    path = folder / "index.db"
    cli("--db", str(path), "index", str(notes), "--no-embed")
    return path


def _cairn(*args: str, encoding: str | None = None, cwd: Path | None = None,
           stdout: Any = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    env.update(PYTHONPATH=str(SRC), CAIRN_EMBED="none", CAIRN_NO_WARM="1", COLUMNS="200")
    if encoding:
        env["PYTHONIOENCODING"] = encoding
    return subprocess.run([sys.executable, "-m", "cairn.interfaces.cli", *args],
                          stdout=stdout, stderr=subprocess.PIPE, env=env, cwd=cwd,
                          timeout=120)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_json_output_is_valid_json_on_any_encoding(db: Path, encoding: str) -> None:
    for args in (("search", "evergreen"), ("search", "日本語"), ("show", "ever.org")):
        run = _cairn("--db", str(db), *args, "--json", encoding=encoding)
        assert run.returncode == 0, run.stderr
        assert b"Traceback" not in run.stderr
        text = json.dumps(json.loads(run.stdout.decode(encoding)), ensure_ascii=False)
        assert "Evergreen 🌲 notes" in text


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_text_output_escapes_what_the_stream_cannot_encode(db: Path, encoding: str) -> None:
    for args in (("search", "evergreen"), ("search", "日本語"), ("show", "ever.org"),
                 ("show", f"{db.parent / 'notes' / 'ever.org'}:1")):
        run = _cairn("--db", str(db), *args, encoding=encoding)
        assert run.returncode == 0 and b"Traceback" not in run.stderr, run.stderr
        assert "Evergreen \\U0001f332 notes" in run.stdout.decode(encoding)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_one_error_line(db: Path) -> None:
    for args in (("search", "evergreen"), ("stats",), ("stats", "--json")):
        with open("/dev/full", "w") as full:
            run = _cairn("--db", str(db), *args, stdout=full)
        assert run.returncode == 2
        assert run.stderr.decode() == "error: cannot write the output: No space left on device\n"


def test_a_deleted_working_folder_is_one_error_line(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    # the child enters the folder, which is removed before cairn starts
    code = ("import os, sys, runpy; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
            "sys.argv = ['cairn', '--db', 'rel.db', 'stats']; "
            "runpy.run_module('cairn.interfaces.cli', run_name='__main__')")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    env.update(PYTHONPATH=str(SRC), CAIRN_NO_WARM="1")
    run = subprocess.run([sys.executable, "-c", code, str(gone)], capture_output=True,
                         env=env, timeout=120)
    assert run.returncode == 2
    assert run.stderr.decode().startswith("error: the current folder no longer exists;")
    assert b"Traceback" not in run.stderr
