"""Helpers of the reliability tests (imported by ``conftest.py`` and the tests): a
scratch copy of corpus notes, a watcher in a thread, a fresh full build to compare with."""

from __future__ import annotations

import itertools
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from cairn.app import Cairn
from cairn.ingest.snapshot import index_snapshot
from cairn.model import IndexSnapshot
from cairn.serving.watch import WatchBatch, WatchSettings, watch

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
CASES = CORPUS.parent / "cases"
_fresh = itertools.count()


def copy_notes(dst: Path, *, org: bool = True) -> Path:
    """A scratch vault: the kepano Obsidian vault (Markdown, wikilinks, attachments)
    plus, with ``org``, the org-roam notes (Org, ids, links)."""
    shutil.copytree(CORPUS / "markdown" / "kepano-obsidian", dst)
    if org:
        shutil.copytree(CORPUS / "org" / "org-roam", dst / "org-roam")
    for p in dst.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


def fresh_snapshot(folder: Path, tmp: Path, *, embed: bool = False) -> IndexSnapshot:
    """What a clean full build of ``folder`` holds."""
    db = tmp / f"fresh-{next(_fresh)}.db"
    with Cairn.open(db=db) as c:
        c.index([folder], embed=embed, allow_mass_delete=True)
        return index_snapshot(c.store, c.graph.fresh())


def snapshot_of(db: Path) -> IndexSnapshot:
    """The snapshot of an index, read by a reader (no lock taken)."""
    with Cairn.open(db=db, create=False) as c:
        return index_snapshot(c.store, c.graph.fresh())


def settle(db: Path, expected: IndexSnapshot, timeout: float = 20.0) -> float:
    """Wait until the index at ``db`` equals ``expected``; the seconds it took.

    Raises:
        AssertionError: it did not within ``timeout`` (naming what differs).
    """
    t0 = time.monotonic()
    snap = snapshot_of(db)
    while snap != expected and time.monotonic() - t0 < timeout:
        time.sleep(0.2)
        snap = snapshot_of(db)
    assert snap == expected, f"index differs from a fresh build: {snap.differences(expected)}"
    return time.monotonic() - t0


class Watching:
    """``cairn.serving.watch.watch`` in a thread (its own ``Cairn``), stopped and
    joined on exit; an error in the thread fails the test."""

    def __init__(self, folder: Path, db: Path, **settings: Any) -> None:
        self.folder, self.db = folder, db
        opts: dict[str, Any] = {"debounce_ms": 100, "recheck_seconds": 1.0, "poll_ms": 200}
        opts.update(settings.pop("watch", {}))
        self.settings = WatchSettings(**opts)
        self.kwargs = settings
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.batches: list[WatchBatch] = []
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            with Cairn.open(db=self.db) as c:
                watch(
                    c,
                    [self.folder],
                    settings=self.settings,
                    stop=self.stop,
                    on_ready=lambda _run: self.ready.set(),
                    on_batch=self.batches.append,
                    **{"embed": False, **self.kwargs},
                )
        except BaseException as exc:
            self.error = exc
            self.ready.set()

    def __enter__(self) -> Watching:
        self.thread.start()
        assert self.ready.wait(120), "the watcher did not get ready"
        if self.error is not None:
            raise self.error
        time.sleep(0.3)  # the OS watch is set up right after the catch-up run
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(30)
        assert not self.thread.is_alive(), "the watcher did not stop"
        if self.error is not None:
            raise self.error


def notes_folder(folder: Path, n: int = 5) -> Path:
    """``n`` small Markdown notes in ``folder`` (made if missing), each with the word lapis."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"note {i}.md").write_text(f"# Note {i}\n\ngood words {i} lapis\n", "utf-8")
    return folder


def garden_vault(folder: Path) -> Path:
    """Three notes in two subfolders of ``folder``: compost, tomatoes, sourdough."""
    (folder / "plants").mkdir(parents=True)
    (folder / "kitchen").mkdir()
    (folder / "plants" / "compost.md").write_text(
        "# Compost\n\nGreens and browns; turn the heap weekly.\n", "utf-8")
    (folder / "plants" / "tomatoes.md").write_text(
        "# Tomatoes\n\nStake the vines and pinch the side shoots.\n", "utf-8")
    (folder / "kitchen" / "bread.md").write_text(
        "# Sourdough\n\nFeed the starter the night before baking.\n", "utf-8")
    return folder
