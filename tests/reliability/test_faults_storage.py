"""A full disk and a read-only index (the ``faults`` tier), against real ``cairn index``
and ``cairn serve`` processes and no root tricks that CI may lack:

* **disk full**: the process runs under ``RLIMIT_FSIZE`` (CPython ignores SIGXFSZ, so a
  write past the limit fails with EFBIG, as it fails with ENOSPC on a full disk), just
  above the index's size, and a 500-file batch must be written;
* **read-only**: the process runs in its own user and mount namespace (``unshare -rm``)
  where the index's folder is bind-mounted read-only; root's disregard of permission
  bits does not help there. Skipped, with the reason, where namespaces are not allowed.

Every case: the command stops (or the server answers the index request) with a message
naming the index file and the reason, the server keeps answering searches, no process
is left, the writer lock is free, no temporary file is left beside the index, the file
passes its integrity check, and a later unhindered run converges to a fresh build."""

from __future__ import annotations

import resource
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _reliability import settle, snapshot_of
from _served import CLI, Served, cli_env, descendants
from test_faults import _assert_clean, _vault, _write_batch

pytestmark = pytest.mark.faults
pytest.importorskip("uvicorn")

STOPPED = (0, 128 + signal.SIGTERM, -signal.SIGTERM)
"""Exit statuses of a server stopped by SIGTERM."""


def _file_limit(db: Path) -> Callable[[], None]:
    """A ``preexec_fn`` that lets the process grow no file beyond the index's size
    plus 64 KiB (the write-ahead log of a 500-file batch needs more)."""
    limit = db.stat().st_size + 65536

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def _read_only(folder: Path) -> list[str]:
    """The argv prefix that runs a command with ``folder`` mounted read-only for it.

    Skips the test when this machine allows no user and mount namespaces."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1): cannot make a read-only mount without root tricks")
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    argv = [unshare, "-rm", "sh", "-c", script, str(folder)]
    # the whole recipe once: some sandboxes allow the namespaces but not the mounts
    probe = subprocess.run([*argv, "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip("a read-only bind mount in a user and mount namespace is not allowed "
                    f"here (unshare -rm: {probe.stderr.decode(errors='replace').strip()})")
    return argv


def _intact(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _converges(folder: Path, db: Path, tmp_path: Path) -> None:
    """A later unhindered ``cairn index`` makes ``db`` equal a fresh build."""
    subprocess.run([*CLI, "index", str(folder)], env=cli_env(db), check=True,
                   capture_output=True, timeout=300)
    fresh = tmp_path / "fresh.db"
    subprocess.run([*CLI, "index", str(folder)], env=cli_env(fresh), check=True,
                   capture_output=True, timeout=300)
    settle(db, snapshot_of(fresh), timeout=30)


def test_index_on_a_full_disk_stops_naming_the_file(tmp_path: Path) -> None:
    folder, db = _vault(tmp_path)
    _write_batch(folder, "full", 500)
    run = subprocess.run([*CLI, "index", str(folder)], env=cli_env(db),
                         preexec_fn=_file_limit(db), capture_output=True, timeout=300)
    err = run.stderr.decode(errors="replace")
    assert run.returncode == 2, err[-2000:]
    assert str(db) in err and "disk" in err, err[-2000:]
    _assert_clean(db, {})
    _intact(db)
    _converges(folder, db, tmp_path)


def test_serve_on_a_full_disk_answers_the_index_request_and_keeps_searching(
        tmp_path: Path) -> None:
    folder, db = _vault(tmp_path)
    _write_batch(folder, "full", 500)
    served = Served(db, "serve", preexec=_file_limit(db))
    try:
        served.wait_up()
        status, body = served.request("POST", "/v1/index", timeout=300)
        assert status >= 500 and str(db) in str(body) and "disk" in str(body), (status, body)
        assert served.search("base") != []  # the server answers on
        kids = dict(descendants(served.proc.pid))
        assert served.stop(signal.SIGTERM, timeout=30) in STOPPED
    finally:
        served.kill_all()
    _assert_clean(db, kids)
    _intact(db)
    _converges(folder, db, tmp_path)


def test_index_on_a_read_only_folder_stops_naming_the_file(tmp_path: Path) -> None:
    folder, db = _vault(tmp_path)
    _write_batch(folder, "ro", 50)
    run = subprocess.run([*_read_only(tmp_path), *CLI, "index", str(folder)],
                         env=cli_env(db), capture_output=True, timeout=300)
    err = run.stderr.decode(errors="replace")
    assert run.returncode == 2, err[-2000:]
    assert str(db) in err and "read-only" in err, err[-2000:]
    _assert_clean(db, {})
    _intact(db)
    _converges(folder, db, tmp_path)


def test_serve_on_a_read_only_folder_searches_and_refuses_to_index(tmp_path: Path) -> None:
    folder, db = _vault(tmp_path)
    _write_batch(folder, "ro", 50)
    served = Served(db, "serve", wrapper=tuple(_read_only(tmp_path)))
    try:
        served.wait_up()
        assert served.search("base") != []
        status, body = served.request("POST", "/v1/index", timeout=300)
        assert status >= 500 and str(db) in str(body) and "read-only" in str(body), (
            status, body)
        assert served.search("base") != []
        kids = dict(descendants(served.proc.pid))
        assert served.stop(signal.SIGTERM, timeout=30) in STOPPED
    finally:
        served.kill_all()
    _assert_clean(db, kids)
    _intact(db)
    _converges(folder, db, tmp_path)



def test_watch_on_a_full_disk_stops_naming_the_file(tmp_path: Path) -> None:
    folder, db = _vault(tmp_path)
    watch = Served(db, "watch", str(folder), preexec=_file_limit(db))
    try:
        watch.wait_line("watching")
        _write_batch(folder, "full", 500)
        kids: dict[int, str] = {}
        deadline = time.monotonic() + 180
        while watch.proc.poll() is None:  # it stops by itself; its children are noted
            assert time.monotonic() < deadline, watch.log[-2000:]
            kids.update(descendants(watch.proc.pid))
            time.sleep(0.1)
        code = watch.proc.returncode
    finally:
        watch.kill_all()
    assert code != 0 and str(db) in watch.log and "disk" in watch.log, watch.log[-2000:]
    _assert_clean(db, kids)
    _intact(db)
    _converges(folder, db, tmp_path)


def test_serve_watch_on_a_full_disk_reports_its_watcher_without_an_abort(
        tmp_path: Path) -> None:
    """The watcher stops on the full disk naming the file; it must end as a process
    does (exit 2), not abort at interpreter exit with its request reader still blocked
    on standard input ("could not acquire lock for <stdin> at interpreter shutdown")."""
    folder, db = _vault(tmp_path)
    served = Served(db, "serve", "--watch", preexec=_file_limit(db))
    try:
        served.wait_line("watching")
        served.wait_up()
        _write_batch(folder, "full", 500)
        served.wait_line("exited unexpectedly", timeout=180)
        assert served.search("base") != []  # the server answers on
        kids = dict(descendants(served.proc.pid))
        assert served.stop(signal.SIGTERM, timeout=30) in STOPPED
    finally:
        served.kill_all()
    assert str(db) in served.log and "disk" in served.log, served.log[-3000:]
    assert "Fatal Python error" not in served.log, served.log[-3000:]
    assert "exit status -6" not in served.log, served.log[-3000:]
    _assert_clean(db, kids)
    _intact(db)
    _converges(folder, db, tmp_path)
