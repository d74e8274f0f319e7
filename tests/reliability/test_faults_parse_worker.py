"""A parse worker that never answers (the ``faults`` tier): a real ``cairn index`` whose
parsing worker is stopped with SIGSTOP in the middle of a parse, as one hung in native
code would be. The run notices it, kills and replaces the worker, reports that one file
as failed naming it, indexes every other file, and leaves no worker behind; once the
file changes, the next run indexes it."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest
from _served import CLI, alive, cli_env, descendants

pytestmark = pytest.mark.faults

SEED = 20261208
NOTES = 100


def _notes(folder: Path) -> None:
    """Notes large enough that a worker spends most of its time parsing."""
    folder.mkdir()
    for i in range(NOTES):
        parts = [f"# Note {i}\n"]
        for j in range(60):
            parts.append(f"\n## Part {j}\n\n" + f"Text {i} {j} with a [[link {j}]] and "
                         "*emphasis* and `code`. " * 3 + "\n- one\n- two\n")
        (folder / f"n{i:03}.md").write_text("".join(parts), encoding="utf-8")


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _stop_a_parsing_worker(parent: int, rng: random.Random) -> int:
    """SIGSTOP a worker of ``parent`` while it runs Python code (not waiting in a system
    call for its next job) after a seeded amount of parsing; its pid.

    Raises:
        AssertionError: the run ended before a worker could be caught parsing.
    """
    ticks = rng.randint(5, 30)  # CPU ticks of parsing before the stop: a seeded point
    while alive(parent):
        for pid in descendants(parent):
            try:
                fields = _stat(pid)
                if fields[0] != "R" or int(fields[11]) < ticks:
                    continue
                os.kill(pid, signal.SIGSTOP)
                if Path(f"/proc/{pid}/syscall").read_text().split()[0] == "running":
                    return pid
                os.kill(pid, signal.SIGCONT)  # between jobs: not a parse to hang
            except (OSError, IndexError, ValueError):
                continue
        time.sleep(0.01)
    raise AssertionError("the index run ended before a worker was caught parsing")


def test_index_replaces_a_stopped_parse_worker_and_names_its_file(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    _notes(folder)
    config = tmp_path / "cairn.toml"
    config.write_text("[index]\nfile_seconds = 5\n", encoding="utf-8")
    db = tmp_path / "i.db"
    env = cli_env(db, CAIRN_WORKERS="2", CAIRN_CONFIG=str(config))
    proc = subprocess.Popen([*CLI, "index", "--json", str(folder)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        stopped = _stop_a_parsing_worker(proc.pid, random.Random(SEED))
        out, err = proc.communicate(timeout=240)
    except BaseException:
        for pid in [*descendants(proc.pid), proc.pid]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        raise
    assert proc.returncode == 0, err.decode(errors="replace")[-2000:]
    run = json.loads(out)
    stuck = [f for f in run["failures"] if "gave no answer" in f["reason"]]
    assert len(stuck) == 1, run["failures"]
    assert stuck[0]["path"].startswith("n") and "killed and replaced" in stuck[0]["reason"]
    assert (run["added"], run["failed"]) == (NOTES - 1, 1)
    assert not alive(stopped)
    # like any failed file, it is tried again once it changes
    note = folder / stuck[0]["path"]
    note.write_text(note.read_text(encoding="utf-8") + "\nedited\n", encoding="utf-8")
    again = subprocess.run([*CLI, "index", "--json", str(folder)], env=env, check=True,
                           capture_output=True, timeout=240)
    second = json.loads(again.stdout)
    assert (second["failed"], second["added"] + second["changed"]) == (0, 1), second

