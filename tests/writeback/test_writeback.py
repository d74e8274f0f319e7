"""Safe write-back: atomic, compare-and-swap, backed up, restorable."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cairn.writeback import (
    Backups,
    WriteConflict,
    create_file,
    sha256_bytes,
    unified_diff,
    write_file,
)


def test_write_replaces_and_backs_up(tmp_path: Path) -> None:
    note = tmp_path / "note.org"
    note.write_bytes(b"* TODO a\n")
    os.chmod(note, 0o640)
    backups = Backups(tmp_path / "bk")
    result = write_file(
        note,
        b"* DONE a\n",
        expected_sha256=sha256_bytes(b"* TODO a\n"),
        backups=backups,
        reason="test",
    )
    assert note.read_bytes() == b"* DONE a\n"
    assert note.stat().st_mode & 0o777 == 0o640
    assert result.backup is not None and result.previous_sha256 == sha256_bytes(b"* TODO a\n")
    assert backups.read(result.backup) == b"* TODO a\n"
    assert [b.reason for b in backups.list(note)] == ["test"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_conflict_when_file_changed(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_bytes(b"edited by the user\n")
    with pytest.raises(WriteConflict, match="changed since it was indexed"):
        write_file(note, b"x", expected_sha256=sha256_bytes(b"old"), backups=None)
    assert note.read_bytes() == b"edited by the user\n"
    with pytest.raises(WriteConflict, match="already exists"):
        write_file(note, b"x", expected_sha256=None, backups=None)
    with pytest.raises(WriteConflict, match="no longer exists"):
        write_file(tmp_path / "gone.md", b"x", expected_sha256="0" * 64, backups=None)


def test_create_never_overwrites(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "m.md"
    create_file(target, b"one")
    with pytest.raises(WriteConflict):
        create_file(target, b"two")
    assert target.read_bytes() == b"one"


def test_restore_brings_back_exact_bytes(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    original = b"---\ntitle: x\n---\r\nbody \xe2\x80\x94 \n"
    note.write_bytes(original)
    backups = Backups.beside(tmp_path / "i.db")
    r = write_file(note, b"new", expected_sha256=sha256_bytes(original), backups=backups)
    assert r.backup is not None
    backups.restore(r.backup.id[:20])
    assert note.read_bytes() == original
    # the restore itself was backed up: the "new" bytes are kept too
    assert backups.read(backups.list(note)[-1]) == b"new"


def test_diff() -> None:
    d = unified_diff("a.org", b"x\ny\n", b"x\nz\n")
    assert "-y\n" in d and "+z\n" in d
    assert unified_diff("a", b"same", b"same") == ""


def test_sigkill_never_tears(tmp_path: Path) -> None:
    """A writer killed at random moments leaves the old bytes or the new, never a mix."""
    note = tmp_path / "big.md"
    old = b"old line\n" * 200_000
    new = b"NEW LINE\n" * 200_000
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from cairn.writeback import Backups, sha256_bytes, write_file
        p = Path({str(note)!r}); b = Backups(Path({str(tmp_path / "bk")!r}))
        old, new = {old[:9]!r} * 200_000, {new[:9]!r} * 200_000
        while True:
            cur = p.read_bytes()
            write_file(p, new if cur == old else old, expected_sha256=sha256_bytes(cur), backups=b)
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    for i in range(8):
        note.write_bytes(old)
        proc = subprocess.Popen([sys.executable, "-c", script], env=env)
        time.sleep(0.3 + 0.07 * i)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert note.read_bytes() in (old, new)
