"""A server's index runs happen in a child process (``cairn.serving.index_worker``, which
a server attaches to its ``Cairn``): the server's readers see what it wrote, its errors
reach the caller with their type, a dead child is reported and replaced, and closing the
``Cairn`` stops it."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import threading
import time
from contextlib import suppress
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config, load_config
from cairn.errors import StoreError
from cairn.serving.index_worker import attach
from cairn.store.lock import IndexBusy, lock_path


def _vault(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Compost\n\nGreens and browns.\n", encoding="utf-8")
    db = tmp_path / "i.db"
    with Cairn(load_config(db=db)) as c:
        c.index([folder])
    return folder, db


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is not alive
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_a_run_happens_in_a_child_and_readers_see_it(tmp_path: Path) -> None:
    folder, db = _vault(tmp_path)
    with Cairn(load_config(db=db), create=False) as cairn:
        assert cairn.own_parts
        attach(cairn)
        assert not cairn.search("custard", mode="keyword").hits
        (folder / "b.md").write_text("# Lisbon\n\nCustard tarts by the ocean.\n",
                                     encoding="utf-8")
        (folder / "types.yaml").write_text("types:\n  recipe:\n    retriever_weight: 2\n",
                                           encoding="utf-8")
        run = cairn.background.run()
        assert run.added == 1
        worker = cairn.background._index_worker
        assert worker is not None and worker._proc is not None
        pid = worker._proc.pid
        assert pid != os.getpid() and _alive(pid)
        with open(f"/proc/{pid}/stat") as f:  # at a lower CPU priority
            assert int(f.read().rsplit(")", 1)[1].split()[16]) >= 10
        hits = cairn.search("custard", mode="keyword").hits
        assert [h.title for h in hits] == ["Lisbon"]
        assert "recipe" in cairn.types.merged.types  # read again after the run
        again = cairn.background.run()  # the same child, model kept
        assert again.unchanged == 2 and worker._proc.pid == pid
    deadline = time.monotonic() + 30
    while _alive(pid):  # close() stopped it
        assert time.monotonic() < deadline, "the index process outlived its server"
        time.sleep(0.05)


@pytest.mark.slow
def test_errors_travel_and_a_dead_child_is_replaced(tmp_path: Path) -> None:
    folder, db = _vault(tmp_path)
    config = dataclasses.replace(load_config(db=db), index={"wait": 120})
    with Cairn(config, create=False) as cairn:
        attach(cairn)
        cairn.background.run()
        worker = cairn.background._index_worker
        assert worker is not None and worker._proc is not None
        first = worker._proc.pid
        os.kill(first, signal.SIGKILL)  # between runs: replaced at the next one
        worker._proc.wait(30)
        assert cairn.background.run().unchanged == 1 and worker._proc.pid != first
        second = worker._proc.pid
        os.kill(second, signal.SIGKILL)  # not reaped yet: the run goes to a new child
        assert cairn.background.run().unchanged == 1 and worker._proc.pid != second
        with Cairn(load_config(db=db), create=False) as other, other.runs.writing():
            quick = dataclasses.replace(config, index={})
            with Cairn(quick, create=False) as impatient, pytest.raises(IndexBusy):
                impatient.background.run()  # the lock is held elsewhere
            failed: list[BaseException] = []

            def run() -> None:
                try:
                    cairn.background.run()
                except BaseException as exc:
                    failed.append(exc)

            t = threading.Thread(target=run)
            t.start()
            deadline = time.monotonic() + 60
            while t.is_alive():  # the child waits for the lock; it dies in the middle
                assert time.monotonic() < deadline, "a dead index process hung the run"
                if worker._lock.locked() and worker._proc is not None:
                    with suppress(ProcessLookupError):
                        os.kill(worker._proc.pid, signal.SIGKILL)
                t.join(0.05)
        assert len(failed) == 1 and isinstance(failed[0], StoreError)
        assert "index process ended" in str(failed[0])
        (folder / "c.md").write_text("# Bread\n\nFeed the starter.\n", encoding="utf-8")
        assert cairn.background.run().added == 1  # a new child


def test_a_cairn_around_a_given_store_indexes_on_a_thread(tmp_path: Path) -> None:
    from cairn.store import open_store

    folder, db = _vault(tmp_path)
    (folder / "d.md").write_text("# Tea\n\nSteep three minutes.\n", encoding="utf-8")
    with Cairn(Config(db_path=db), store=open_store(db)) as cairn:
        assert not cairn.own_parts
        attach(cairn)  # no child for it: it cannot be opened again in another process
        assert cairn.background.run().added == 1
        assert cairn.background._index_worker is None


def _child_waiting_for(cairn: Cairn, lock: Path) -> subprocess.Popen[bytes]:
    """The index child once it has the writer lock's file open: it is in the run,
    trying to take the lock (which the test holds)."""
    deadline = time.monotonic() + 120
    while True:
        worker = cairn.background._index_worker
        proc = None if worker is None else worker._proc  # type: ignore[attr-defined]
        if proc is not None:
            with suppress(OSError):
                fds = os.listdir(f"/proc/{proc.pid}/fd")
                if any(_link(f"/proc/{proc.pid}/fd/{fd}") == str(lock) for fd in fds):
                    return proc  # type: ignore[no-any-return]
        assert time.monotonic() < deadline, "the run never reached the writer lock"
        time.sleep(0.01)


def _link(path: str) -> str:
    with suppress(OSError):
        return os.readlink(path)
    return ""


def test_closing_during_a_run_does_not_wait_for_it(tmp_path: Path) -> None:
    """A server stopped while its index process waits (here for a writer lock held
    elsewhere, for up to an hour) stops it: ``close`` returns, the child is gone and the
    run's caller has a StoreError, all while the lock is still held, so before the run
    could have ended. Closing that waited for the run would hang here until the test's
    timeout, and its caller would get IndexBusy."""
    _, db = _vault(tmp_path)
    config = dataclasses.replace(load_config(db=db), index={"wait": 3600})
    cairn = Cairn(config, create=False)
    attach(cairn)
    events: list[str] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            cairn.background.run()
            events.append("run returned")
        except BaseException as exc:
            failed.append(exc)
            events.append("run failed")

    with Cairn(load_config(db=db), create=False) as other, other.runs.writing():
        t = threading.Thread(target=run, daemon=True)
        t.start()
        proc = _child_waiting_for(cairn, lock_path(db))
        events.append("close called")
        cairn.close()
        events.append("close returned")
        assert proc.poll() is not None  # the child waiting for the lock is gone
        t.join()
        events.append("lock released")
    # the run failed before the lock was let go (whether before or after close returned)
    assert events[0] == "close called" and events[-1] == "lock released"
    assert sorted(events[1:3]) == ["close returned", "run failed"]
    assert len(failed) == 1 and isinstance(failed[0], StoreError)
    assert not isinstance(failed[0], IndexBusy)  # stopped, not timed out on the lock
