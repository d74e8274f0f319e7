"""A writer killed at any point of a multi-file memory write: the next operation
finishes the write (its intent journal), ``memory verify`` names the half-done state
until then, each memory ends in exactly one place and no temporary file is left.

The writer is a real process ended by ``os._exit`` at step ``k`` of the write
(``CAIRN_MEMORY_CRASH_AT``), for every ``k``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.memory.bundle import INDEX_TEXT, LOG_TITLE
from cairn.memory.journal import CRASH_ENV, JOURNAL
from cairn.memory.ops import make_memory

SRC = Path(__file__).resolve().parents[2] / "src"
TEXTS = [
    ("Alice leads the payments team", "team"),
    ("Alice leads the payments team since May", "team"),
    ("The build pipeline needs Python 3.12 on the runner", "build"),
    ("Deploys to production happen on Tuesdays", "deploy"),
]
CONSOLIDATE = """
import sys
from cairn.app import Cairn
from cairn.config import load_config
with Cairn(load_config(db=sys.argv[2])) as c:
    c.memory.consolidate(sys.argv[1], embed=False, llm=False)
"""


def _bundle(folder: Path) -> None:
    """A bundle with four memories written as files (no index yet)."""
    for d in ("memories/active", "memories/subsumed", "memories/archive",
              "concepts/active", "concepts/archive"):
        (folder / d).mkdir(parents=True)
    (folder / "index.md").write_text(INDEX_TEXT)
    (folder / "log.md").write_text(LOG_TITLE)
    for i, (text, tag) in enumerate(TEXTS):
        name, data, _ = make_memory(text, tags=[tag], timestamp=f"2026-12-01T09:00:0{i}Z")
        (folder / "memories/active" / name).write_bytes(data)


def _memories(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("memories/*/*.md"))


def _kill_at(k: int, bundle: Path, db: Path) -> tuple[int, str, int]:
    """Consolidate in a process that dies before step ``k``: ``(exit code, stderr,
    its process id)``."""
    env = {**os.environ, "PYTHONPATH": str(SRC), CRASH_ENV: str(k)}
    with subprocess.Popen([sys.executable, "-c", CONSOLIDATE, str(bundle), str(db)],
                          stderr=subprocess.PIPE, text=True, env=env) as proc:
        _, err = proc.communicate(timeout=300)
    return proc.returncode, err, proc.pid


@pytest.mark.slow
def test_a_write_killed_at_every_step_is_finished_by_the_next(tmp_path: Path) -> None:
    template = tmp_path / "template"
    _bundle(template)
    names = _memories(template)
    ref = tmp_path / "ref"
    shutil.copytree(template, ref)
    with Cairn(load_config(db=tmp_path / "ref.db")) as c:
        c.memory.consolidate(ref, embed=False, llm=False)
    concepts = sorted(p.name for p in ref.glob("concepts/active/*.md"))
    assert len(concepts) == 3  # the pair, and two on their own

    killed = 0
    for k in range(40):  # 3 concepts + 4 moves of two steps + the log: 12 steps
        bundle, db = tmp_path / f"b{k}", tmp_path / f"b{k}.db"
        shutil.copytree(template, bundle)
        code, err, pid = _kill_at(k, bundle, db)
        if code == 0:
            break
        assert code == 70, err
        killed += 1
        assert (bundle / JOURNAL).is_file()
        # a temporary file the dead writer left (as a kill inside a create leaves it)
        some = next(bundle.glob("memories/*/*.md"))
        os.link(some, some.with_name(f".{some.name}.cairn-{pid}-0badc0de.tmp"))
        with Cairn(load_config(db=db)) as c:
            half = c.memory.verify(bundle)
            assert not half.ok and any(p.path == JOURNAL for p in half.problems)
            c.memory.consolidate(bundle, embed=False, llm=False)
            rep = c.memory.verify(bundle)
            assert rep.ok, [(p.path, p.reason) for p in rep.problems]
            m = c.memory.maintain(bundle, dry_run=True, decay=False)
        assert m.unsourced == [] and m.missing_sources == [] and m.pending == 0
        assert _memories(bundle) == names  # each memory exactly once
        assert len(list(bundle.glob("memories/subsumed/*.md"))) == len(names)
        assert sorted(p.name for p in bundle.glob("concepts/active/*.md")) == concepts
        assert not list(bundle.rglob("*.tmp")) and not (bundle / JOURNAL).exists()
        assert "**Recovery**: finished an interrupted consolidate" in (
            bundle / "log.md").read_text()
    assert killed == 13  # before each of the 12 steps, and after the last


def test_a_memory_left_in_two_folders_is_reported_and_repaired(tmp_path: Path) -> None:
    bundle = tmp_path / "mem"
    _bundle(bundle)
    first = sorted(bundle.glob("memories/active/*.md"))[0]
    shutil.copy2(first, bundle / "memories/subsumed" / first.name)
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        rep = c.memory.verify(bundle)
        assert [(p.path, p.reason) for p in rep.problems] == [
            (f"memories/subsumed/{first.name}", "the same memory is also in "
             f"memories/active/{first.name}")]
        c.memory.consolidate(bundle, embed=False, llm=False)  # no "already exists"
        assert c.memory.verify(bundle).ok
    assert len(_memories(bundle)) == len(TEXTS)


def test_a_journal_never_writes_outside_the_bundle(tmp_path: Path) -> None:
    import base64
    import json

    bundle = tmp_path / "mem"
    _bundle(bundle)
    steps = [{"rel": "../outside.md", "before": None, "after": base64.b64encode(b"x").decode()},
             {"rel": "concepts/active/../../../escape.md", "before": None,
              "after": base64.b64encode(b"x").decode()}]
    (bundle / JOURNAL).write_text(json.dumps({"operation": "consolidate", "steps": steps}))
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.memory.remember(bundle, "The oncall rotation changes on Mondays")
        assert c.memory.verify(bundle).ok
    assert not (tmp_path / "outside.md").exists() and not (tmp_path.parent / "escape.md").exists()
    assert not (bundle / JOURNAL).exists()
    log = (bundle / "log.md").read_text()
    assert "not replayed: ../outside.md: outside the bundle" in log
