"""One writer at a time, between processes: a second writer is told so (or waits with
``--wait``), a writer that dies leaves no stale lock, readers never block and never see
a half-applied file. The writers are real processes: the lock is held between
processes, so that is the point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from _reliability import notes_folder

from cairn.app import Cairn
from cairn.ingest.snapshot import index_snapshot
from cairn.store.lock import IndexBusy

SRC = Path(__file__).resolve().parents[2] / "src"


def _cli_process(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    e = {**os.environ, "PYTHONPATH": str(SRC), "CAIRN_EMBED": "none", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "cairn.interfaces.cli", *args],
        capture_output=True,
        text=True,
        env=e,
        timeout=timeout,
    )


def test_two_writers_on_a_brand_new_index(tmp_path: Path) -> None:
    folder = notes_folder(tmp_path / "n", 30)
    db = tmp_path / "new.db"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cairn.interfaces.cli",
                "--db",
                str(db),
                "index",
                str(folder),
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(SRC), "CAIRN_EMBED": "none"},
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    codes = sorted(p.returncode for p in procs)
    errors = [
        json.loads(o)["error"] for (o, _e), p in zip(outs, procs, strict=True) if p.returncode
    ]
    assert codes[0] == 0  # one wrote
    for e in errors:  # the other was told another writer is at work, never "damaged"
        assert "another cairn process is writing" in e and "damaged" not in e
        assert "already exists" not in e
    with Cairn.open(db=db) as c:
        assert c.stats().documents == 30 and c.notes.check() == []


def test_a_second_writer_is_refused_or_waits(tmp_path: Path) -> None:
    folder = notes_folder(tmp_path / "n")
    db = tmp_path / "i.db"
    holder = Cairn.open(db=db)
    holder.index([folder])
    with holder.runs.writing():
        res = _cli_process("--db", str(db), "index")
        assert res.returncode == 2
        assert "another cairn process is writing this index" in res.stderr
        assert "damaged" not in res.stderr and "--wait" in res.stderr
        with Cairn.open(db=db) as other:
            with pytest.raises(IndexBusy):
                other.index()
            assert other.search("lapis", mode="keyword").hits  # readers never block
        waiting = subprocess.Popen(
            [sys.executable, "-m", "cairn.interfaces.cli", "--db", str(db), "index", "--wait"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(SRC), "CAIRN_EMBED": "none"},
        )
        assert waiting.stderr is not None
        first = ""
        while "waiting" not in first:  # blocks until the waiter reports (however slow)
            line = waiting.stderr.readline()
            assert line, first  # EOF before "waiting": the waiter did not wait
            first += line
        assert waiting.poll() is None  # still waiting for the lock
    _out, err = waiting.communicate(timeout=60)
    holder.close()
    assert waiting.returncode == 0, first + err


def test_the_lock_is_released_when_the_writer_dies(tmp_path: Path) -> None:
    folder = notes_folder(tmp_path / "n")
    db = tmp_path / "i.db"
    code = (
        "import os, sys; from cairn.app import Cairn\n"
        f"c = Cairn.open(db={str(db)!r}); c.index([{str(folder)!r}])\n"
        "c.writer_lock.acquire(); print('held', flush=True); os.kill(os.getpid(), 9)\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=60,
    )
    assert "held" in res.stdout
    with Cairn.open(db=db) as c:
        assert c.index().failed == 0  # no stale lock


def test_readers_never_see_a_half_applied_file(tmp_path: Path) -> None:
    folder = tmp_path / "n"
    folder.mkdir()
    note = folder / "big.md"
    heads = 300

    def write(tag: str) -> None:
        note.write_text("".join(f"# H{i}\n\n{tag} body {i}\n\n" for i in range(heads)), "utf-8")

    write("alpha")
    db = tmp_path / "i.db"
    with Cairn.open(db=db) as c:
        c.index([folder])
    stop = threading.Event()
    seen: set[int] = set()
    errors: list[BaseException] = []

    def read() -> None:
        try:
            with Cairn.open(db=db) as r:
                while not stop.is_set():
                    docs = index_snapshot(r.store, r.graph.fresh()).units
                    tags = {u[8].split()[0] for u in docs if u[8]}
                    seen.add(len(tags))
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=read)
    t.start()
    with Cairn.open(db=db) as c:
        for i in range(6):
            write(("beta", "gamma")[i % 2])
            c.index()
    stop.set()
    t.join()
    assert not errors
    assert seen == {1}  # every unit of the file from one version, never a mix

