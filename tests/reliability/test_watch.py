"""Watch mode driven by real file operations on a scratch copy of corpus notes; each
test ends with the watched index compared to a fresh full build (files, documents,
units, links, graph edges and chunks identical)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _reliability import CASES, Watching, fresh_snapshot, settle, snapshot_of

from cairn.app import Cairn
from cairn.ingest.snapshot import index_snapshot

pytestmark = pytest.mark.corpus

Start = Callable[..., Watching]


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def _some_notes(vault: Path, n: int) -> list[Path]:
    return sorted(p for p in vault.rglob("*.md"))[:n]


def test_vim_save_with_backup_and_swap_files(vault: Path, tmp_path: Path, watching: Start) -> None:
    w = watching(vault)
    note = _some_notes(vault, 1)[0]
    swap = note.parent / f".{note.name}.swp"
    _write(swap, "b0VIM 9.0 swap")
    _write(note.parent / "4913", "")
    (note.parent / "4913").unlink()
    os.rename(note, note.with_name(note.name + "~"))  # backupcopy=no: rename away
    _write(note, note.with_name(note.name + "~").read_text() + "\nvim wrote quartzite here\n")
    note.with_name(note.name + "~").unlink()
    swap.unlink()
    settle(w.db, fresh_snapshot(vault, tmp_path))
    with Cairn.open(db=w.db) as c:
        assert [h.path for h in c.search("quartzite", mode="keyword").hits] == [
            note.relative_to(vault).as_posix()
        ]


def test_emacs_save_autosave_and_lock_files(vault: Path, tmp_path: Path, watching: Start) -> None:
    w = watching(vault)
    org = sorted(vault.rglob("*.org"))[0]
    auto = org.parent / f"#{org.name}#"
    _write(auto, "* autosaved draft\n")
    lock = org.parent / f".#{org.name}"
    os.symlink("user@host.1234:1700000000", lock)  # emacs lock: a dangling symlink
    backup = org.with_name(org.name + "~")
    shutil.copy2(org, backup)
    _write(org, org.read_text(encoding="utf-8") + "\n* Emacs heading with obsidianite\n")
    auto.unlink()
    lock.unlink()
    settle(w.db, fresh_snapshot(vault, tmp_path))


def test_vscode_atomic_save_and_obsidian_rename(
    vault: Path, tmp_path: Path, watching: Start
) -> None:
    w = watching(vault)
    a, b = _some_notes(vault, 2)
    tmp = a.parent / f".{a.name}.tmp-1234"  # write a temporary file, rename it over
    _write(tmp, a.read_text(encoding="utf-8") + "\nvscode wrote tanzanite\n")
    os.replace(tmp, a)
    _write(b, b.read_text(encoding="utf-8") + "\nobsidian typed rhodonite\n")  # in place
    b.rename(b.with_name("Renamed in Obsidian.md"))  # a rename keeps the content
    settle(w.db, fresh_snapshot(vault, tmp_path))


def test_saved_twice_within_the_debounce_window(
    vault: Path, tmp_path: Path, watching: Start
) -> None:
    w = watching(vault, watch={"debounce_ms": 400})
    note = _some_notes(vault, 1)[0]
    text = note.read_text(encoding="utf-8")
    _write(note, text + "\nfirst save: malachite\n")
    time.sleep(0.05)
    _write(note, text + "\nsecond save: azurite\n")
    settle(w.db, fresh_snapshot(vault, tmp_path))
    with Cairn.open(db=w.db) as c:
        assert not c.search("malachite", mode="keyword").hits
        assert c.search("azurite", mode="keyword").hits


def test_folder_renamed_and_moved(vault: Path, tmp_path: Path, watching: Start) -> None:
    w = watching(vault)
    folders = sorted(p for p in vault.iterdir() if p.is_dir() and any(p.rglob("*.md")))
    folders[0].rename(vault / "Renamed folder")
    (vault / "deep" / "er").mkdir(parents=True)
    folders[1].rename(vault / "deep" / "er" / folders[1].name)
    settle(w.db, fresh_snapshot(vault, tmp_path))


def test_whole_tree_deleted(vault: Path, tmp_path: Path, watching: Start) -> None:
    w = watching(vault)
    shutil.rmtree(vault / "org-roam")
    settle(w.db, fresh_snapshot(vault, tmp_path))


def test_checkout_changing_hundreds_of_files(vault: Path, tmp_path: Path, watching: Start) -> None:
    w = watching(vault)
    notes = sorted(vault.rglob("*.md"))
    for i, p in enumerate(notes):  # like `git checkout other-branch`
        if i % 3 == 0:
            p.unlink()
        else:
            _write(p, p.read_text(encoding="utf-8") + f"\nbranch edit {i}\n")
    for i in range(120):
        _write(
            vault / "branch" / f"new {i}.md"
            if (vault / "branch").is_dir()
            else (vault / "branch").mkdir() or vault / "branch" / f"new {i}.md",
            f"# New {i}\n\nLinks to [[New {(i + 1) % 120}]].\n",
        )
    settle(w.db, fresh_snapshot(vault, tmp_path), timeout=60)


def test_modified_in_the_same_mtime_tick(vault: Path, tmp_path: Path, watching: Start) -> None:
    """An edit that keeps the size and the mtime (a file system with coarse mtimes) is
    still seen: recently modified files are checked again after recheck_seconds."""
    w = watching(vault)
    note = _some_notes(vault, 1)[0]
    _write(note, "# Tick\n\nversion one: amberine\n")
    st = note.stat()
    settle(w.db, fresh_snapshot(vault, tmp_path))
    _write(note, "# Tick\n\nversion two: jadeitee\n")  # same size
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime
    with Cairn.open(db=w.db) as c:
        deadline = time.monotonic() + 10
        while not c.search("jadeitee", mode="keyword").hits and time.monotonic() < deadline:
            time.sleep(0.2)
        assert c.search("jadeitee", mode="keyword").hits
    settle(w.db, fresh_snapshot(vault, tmp_path))


def test_polling_fallback(vault: Path, tmp_path: Path, watching: Start) -> None:
    w = watching(vault, watch={"poll": True})
    note = _some_notes(vault, 1)[0]
    _write(note, note.read_text(encoding="utf-8") + "\npolled: chalcedony\n")
    (vault / "polled.md").write_text("# Polled\n\nnew note\n", encoding="utf-8")
    settle(w.db, fresh_snapshot(vault, tmp_path))


def test_attachment_added_resolves_links(tmp_path: Path, watching: Start) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n\n![[pic.png]] and [[b]]\n", encoding="utf-8")
    w = watching(vault)
    (vault / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (vault / "b.md").write_text("# B\n", encoding="utf-8")
    settle(w.db, fresh_snapshot(vault, tmp_path))
    (vault / "pic.png").unlink()
    settle(w.db, fresh_snapshot(vault, tmp_path))


def test_mass_delete_is_refused_then_allowed(vault: Path, tmp_path: Path, watching: Start) -> None:
    w = watching(vault)
    before = snapshot_of(w.db)
    for p in vault.iterdir():
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    deadline = time.monotonic() + 60
    while not any(b.error for b in w.batches) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert any("--allow-mass-delete" in b.error for b in w.batches)
    assert snapshot_of(w.db).documents == before.documents  # nothing was dropped


@pytest.mark.parametrize(
    "case",
    [
        "039-watcher-atomic-rename-save",
        "040-watcher-editor-temp-files",
        "042-watcher-recently-modified-revisit",
    ],
)
def test_shared_watch_cases(case: str, tmp_path: Path, watching: Start) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(CASES / case / "vault", vault)
    w = watching(vault)
    sim = subprocess.run(
        [sys.executable, str(CASES / case / "simulate.py"), str(vault)],
        env={**os.environ, "SIM_PAUSE": "0.8"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert sim.returncode == 0, sim.stderr
    settle(w.db, fresh_snapshot(vault, tmp_path))
    with Cairn.open(db=w.db) as c:
        docs = sorted(d[2] for d in index_snapshot(c.store, c.graph.fresh()).documents)
        search = lambda q: [h.path for h in c.search(q, mode="keyword").hits]  # noqa: E731
        if case.startswith("039"):
            assert docs == ["note.md"]
            assert search("viridian") == ["note.md"] and not search("saffron")
        elif case.startswith("040"):
            assert docs == ["Test.md", "note.md"]
            assert search("half written") == ["Test.md"]
            assert not c.stats().failed_files
            assert not [b for b in w.batches if b.error]
        else:
            assert search("basalt") == ["session.md"] == search('"obsidian glass"')
            assert search("feldspar") == ["copied.md"]
    with Cairn.open(db=w.db) as c:  # a full run afterwards finds nothing to do
        pass
    w.stop.set()
    w.thread.join(30)
    with Cairn.open(db=w.db) as c:
        run = c.index()
        assert (run.added, run.changed, run.removed) == (0, 0, 0)
