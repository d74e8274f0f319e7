"""A write-back killed between writing its temporary file and renaming it leaves
``.<note>.cairn-<PID>-<hex>.tmp`` behind: the next write-back in that folder and the next
index run remove it when its PID is dead — only files of exactly that name, never a
live writer's, never a user's look-alike — and it is never indexed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.model.tempnames import TEMP_NAME, is_stale_temp
from cairn.writeback import Backups, sha256_bytes, write_file

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _killed_writer_leftover(note: Path) -> Path:
    """What a write-back killed after writing its temporary file leaves: a real
    process makes the temporary name and bytes, then dies without renaming."""
    code = (
        "import os, sys; from pathlib import Path\n"
        "from cairn.model.tempnames import temp_path\n"
        "tmp = temp_path(Path(sys.argv[1])); tmp.write_bytes(b'half written')\n"
        "print(tmp); sys.stdout.flush(); os._exit(9)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(note)], capture_output=True,
                          text=True, env={"PYTHONPATH": SRC}, timeout=60, check=False)
    assert done.returncode == 9, done.stderr
    tmp = Path(done.stdout.strip())
    assert tmp.parent == note.parent and TEMP_NAME.match(tmp.name) and is_stale_temp(tmp.name)
    return tmp


@pytest.fixture
def live_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc.pid  # type: ignore[misc]
    proc.kill()
    proc.wait()


def _lookalikes(folder: Path, live_pid: int) -> list[Path]:
    """Files stale-temp removal must keep: a live writer's, and users' files that only
    resemble the name."""
    keep = [
        folder / f".note.md.cairn-{live_pid}-0123abcd.tmp",
        folder / "note.md.cairn-999999-0123abcd.tmp",  # not hidden
        folder / ".note.md.cairn-x-0123abcd.tmp",
        folder / ".note.md.cairn-999999-0123abcd.tmp.bak",
    ]
    for p in keep:
        p.write_bytes(b"keep me")
    return keep


def test_index_removes_dead_writers_temp_files_only(tmp_path: Path, live_pid: int) -> None:
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    note = root / "sub" / "note.md"
    note.write_text("# Note\n\nbody\n", encoding="utf-8")
    stale = _killed_writer_leftover(note)
    keep = _lookalikes(root / "sub", live_pid)
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([root])
        paths = {d.path for d in c.store.documents_of_root(c.roots()[0].id)}
    assert not stale.exists()
    assert all(p.read_bytes() == b"keep me" for p in keep)
    assert paths == {"sub/note.md"}  # temporary files are never indexed


def test_write_back_removes_dead_writers_temp_files_beside_it(
    tmp_path: Path, live_pid: int
) -> None:
    note = tmp_path / "note.md"
    note.write_bytes(b"old\n")
    stale = _killed_writer_leftover(note)
    keep = _lookalikes(tmp_path, live_pid)
    write_file(note, b"new\n", expected_sha256=sha256_bytes(b"old\n"),
               backups=Backups(tmp_path / "bk"))
    assert note.read_bytes() == b"new\n" and not stale.exists()
    assert all(p.read_bytes() == b"keep me" for p in keep)
    assert not [p for p in tmp_path.glob(".note.md.cairn-*.tmp") if p not in keep]
