"""Dream's ``--dry-run`` diffs name files as git does: relative to their root
(``--- a/References/x.md``, not ``--- a//tmp/…``), ``/dev/null`` for a new file, so
``git apply`` inside the root takes them as they are."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from cairn.app import Cairn

pytestmark = pytest.mark.corpus
TODAY = dt.date(2027, 6, 1)
Fresh = Callable[..., tuple[Path, Cairn]]


def _headers(diff: str) -> tuple[str, str]:
    lines = diff.splitlines()
    return lines[0], lines[1]


def test_planned_diffs_are_root_relative_and_apply_with_git(fresh: Fresh) -> None:
    base, c = fresh({"markdown": ["kepano-obsidian"]})
    root = base / "markdown"
    run = c.maintain.run(dry_run=True, fix_kinds=["retarget_link", "create_note"],
                  only=["broken", "entities"], today=TODAY, proposed=True)
    planned = [ch for ch in run.changes if ch.action == "planned"]
    assert planned
    for ch in planned:
        rel = Path(ch.path).relative_to(root).as_posix()
        before, after = _headers(ch.diff)
        assert after == f"+++ b/{rel}", ch.diff[:200]
        assert before in (f"--- a/{rel}", "--- /dev/null")
        assert "//" not in before + after
    assert any(_headers(ch.diff)[0] == "--- /dev/null" for ch in planned)  # a new note
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    patch = "".join(ch.diff for ch in planned)
    done = subprocess.run(["git", "apply", "--check", "-"], cwd=root, input=patch,
                          text=True, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
