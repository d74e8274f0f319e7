"""A query daemon whose index is deleted, that hangs, or that died: searches answer as
a local search would, never create an index file, do not wait on a hung daemon twice,
and remove the sockets and adverts of dead daemons; ``CAIRN_DAEMON=0`` uses none."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.errors import StoreError
from cairn.serving import warm

pytestmark = pytest.mark.skipif(not warm.has_sockets(), reason="no Unix domain sockets")

ROOT = Path(__file__).resolve().parents[2]
NOTES = {
    "garden.md": "# Garden\n\nCompost needs greens and browns; turn the pile weekly.\n",
    "bread.md": "# Sourdough\n\nFeed the starter the night before baking bread.\n",
}
CLIENT = (
    "import sys\nfrom cairn.interfaces.cli import main\nsys.argv[0] = 'cairn'\n"
    "sys.exit(main())\n"
)
"""What the installed ``cairn`` script runs."""


def _wait(what: str, check: object, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _index(home: Path) -> Path:
    root = home / "notes"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text, encoding="utf-8")
    db = home / "i.db"
    with Cairn(load_config(db=db, env={"CAIRN_EMBED": "none"})) as c:
        c.index([root])
    return db


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str], subprocess.Popen[bytes]]]:
    """A keyword index, a socket folder of its own and a query daemon answering thin
    clients for the index: ``(index, environment, daemon process)``; every daemon of
    the folder is stopped, then killed, afterwards."""
    db = _index(tmp_path)
    tmpdir = Path(tempfile.mkdtemp(prefix="cg", dir="/tmp"))  # socket paths stay short
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAIRN_", "FORCE_COLOR"))}
    env.update(PYTHONPATH=str(ROOT / "src"), CAIRN_EMBED="none", TMPDIR=str(tmpdir),
               XDG_CONFIG_HOME=str(tmp_path / "no-config"))
    proc = subprocess.Popen([sys.executable, "-m", "cairn.interfaces.cli._answer", "--db",
                             str(db), "--no-warm-up"], env=env, cwd="/",
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        _wait("the daemon's socket", lambda: any(tmpdir.glob("cairn-*/daemon-*.sock"))
              or proc.poll() is not None)
        assert proc.poll() is None
        yield db, env, proc
    finally:
        with contextlib.suppress(OSError):
            os.kill(proc.pid, signal.SIGCONT)
        subprocess.run([sys.executable, "-m", "cairn.interfaces.cli", "daemon", "stop",
                        "--all"], env=env, capture_output=True, timeout=120)
        if proc.poll() is None:
            proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(tmpdir, ignore_errors=True)


def _run(argv: list[str], env: dict[str, str], *, timeout: float = 120
         ) -> tuple[subprocess.CompletedProcess[bytes], bool]:
    """``cairn ARGV``: ``(the process, whether a daemon answered it)`` (the fast path,
    which every search not answered by a thin client's daemon imports, was not)."""
    res = subprocess.run([sys.executable, "-X", "importtime", "-c", CLIENT, *argv], env=env,
                         capture_output=True, stdin=subprocess.DEVNULL, timeout=timeout)
    lines = res.stderr.splitlines(keepends=True)
    imports = b"".join(ln for ln in lines if ln.startswith(b"import time:"))
    res.stderr = b"".join(ln for ln in lines if not ln.startswith(b"import time:"))
    return res, b"cairn.interfaces.cli._fast" not in imports


def _socket(env: dict[str, str]) -> Path:
    return next(Path(env["TMPDIR"]).glob("cairn-*/daemon-*.sock"))


def test_a_new_thread_of_an_open_index_never_creates_its_deleted_file(tmp_path: Path) -> None:
    db = _index(tmp_path)
    with Cairn(load_config(db=db, env={"CAIRN_EMBED": "none"}), create=False) as cairn:
        assert cairn.search("compost", mode="keyword").hits
        db.unlink()
        errors: list[BaseException] = []

        def search() -> None:  # a thread of its own: a connection of its own
            try:
                cairn.search("compost", mode="keyword")
            except BaseException as exc:  # asserted below
                errors.append(exc)

        t = threading.Thread(target=search)
        t.start()
        t.join()
        assert len(errors) == 1 and isinstance(errors[0], StoreError), errors
        assert not db.exists()


@pytest.mark.slow
def test_a_search_after_the_index_is_deleted_answers_as_a_local_one(
    daemon: tuple[Path, dict[str, str], subprocess.Popen[bytes]]
) -> None:
    db, env, proc = daemon
    argv = ["--db", str(db), "search", "compost", "--mode", "keyword", "--limit", "1"]
    first, thin = _run(argv, env)
    assert thin and first.returncode == 0 and b"Garden" in first.stdout
    db.unlink()
    here, _ = _run(argv, env)
    local, _ = _run(argv, {**env, "CAIRN_NO_WARM": "1"})
    assert (here.returncode, here.stdout, here.stderr) == (
        local.returncode, local.stdout, local.stderr)
    assert here.returncode == 1 and b"no index here yet" in here.stderr
    assert not db.exists()
    proc.wait(timeout=60)  # its index is gone: it exits
    assert not db.exists()
    assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists()


@pytest.mark.slow
def test_a_daemon_turned_off_is_not_asked(tmp_path: Path) -> None:
    db = _index(tmp_path)
    tmpdir = Path(tempfile.mkdtemp(prefix="cg", dir="/tmp"))
    folder = tmpdir / f"cairn-{os.getuid()}"
    folder.mkdir(mode=0o700)
    asked: list[bytes] = []
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    listener.bind(str(folder / "daemon-abc-1.sock"))
    os.umask(old)
    listener.listen(4)

    def serve() -> None:  # a daemon that passes every search, counting them
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn, contextlib.suppress(OSError):  # `daemon stop` only connects
                asked.append(conn.recv(65536))
                conn.sendall(b"cairn-pass 1\n")

    threading.Thread(target=serve, daemon=True).start()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAIRN_", "FORCE_COLOR"))}
    env.update(PYTHONPATH=str(ROOT / "src"), CAIRN_EMBED="none", TMPDIR=str(tmpdir),
               XDG_CONFIG_HOME=str(tmp_path / "no-config"))
    argv = ["--db", str(db), "search", "compost", "--mode", "keyword"]
    try:
        for off in ("0", "off"):
            res, _ = _run(argv, {**env, "CAIRN_DAEMON": off})
            assert res.returncode == 0 and b"Garden" in res.stdout
        assert asked == []
        res, _ = _run(argv, {**env, "CAIRN_NO_WARM": "1", "CAIRN_DAEMON": "1"})
        assert asked == []
        res, _ = _run(argv, {**env, "CAIRN_DAEMON": "1"})  # on: asked (and it passes)
        assert res.returncode == 0 and b"Garden" in res.stdout and len(asked) == 1
    finally:
        listener.close()
        subprocess.run([sys.executable, "-m", "cairn.interfaces.cli", "daemon", "stop",
                        "--all"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(tmpdir, ignore_errors=True)


@pytest.mark.slow
def test_a_hung_daemon_is_waited_on_once(
    daemon: tuple[Path, dict[str, str], subprocess.Popen[bytes]]
) -> None:
    db, env, proc = daemon
    argv = ["--db", str(db), "search", "compost", "--mode", "keyword"]
    marker = Path(f"{_socket(env)}{warm.HUNG}")
    os.kill(proc.pid, signal.SIGSTOP)
    res, thin = _run(argv, {**env, "CAIRN_DAEMON_WAIT": "1"})
    assert not thin and res.returncode == 0 and b"Garden" in res.stdout
    assert marker.exists()
    # a bound it would never reach: a client that asked it again would still wait
    res, thin = _run(argv, {**env, "CAIRN_DAEMON_WAIT": "100000"}, timeout=100)
    assert not thin and res.returncode == 0 and b"Garden" in res.stdout
    os.kill(proc.pid, signal.SIGCONT)  # it answers the waits it was left with
    _wait("the daemon to clear its marker", lambda: not marker.exists())
    res, thin = _run(argv, env)
    assert thin and res.returncode == 0 and b"Garden" in res.stdout


@pytest.mark.slow
def test_a_killed_daemons_socket_and_advert_are_removed(
    daemon: tuple[Path, dict[str, str], subprocess.Popen[bytes]]
) -> None:
    db, env, proc = daemon
    sock = _socket(env)
    advert = warm.advert_folder(db) / f"{proc.pid}.json"
    assert json.loads(advert.read_text(encoding="utf-8"))["socket"] == str(sock)
    os.kill(proc.pid, signal.SIGKILL)  # not reaped: a zombie, as under an init that never reaps
    _wait("the daemon to die", lambda: sock.exists() and not _accepts(sock))
    res, thin = _run(["--db", str(db), "search", "compost", "--mode", "keyword"], env)
    assert not thin and res.returncode == 0 and b"Garden" in res.stdout
    assert not sock.exists()  # the thin client found it refusing
    assert not advert.exists()  # the fast path found its socket gone


def _accepts(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(str(path))
        except ConnectionRefusedError:
            return False
    return True


def test_daemon_status_removes_dead_sockets_only(tmp_path: Path) -> None:
    tmpdir = Path(tempfile.mkdtemp(prefix="cg", dir="/tmp"))
    try:
        folder = tmpdir / f"cairn-{os.getuid()}"
        folder.mkdir(mode=0o700)
        dead = folder / "daemon-abc-999999999.sock"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.bind(str(dead))  # bound, never listening: what a killed process leaves
        live = folder / "daemon-def-1.sock"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            listener.bind(str(live))
            listener.listen(1)
            stale_marker = folder / f"daemon-gone-2.sock{warm.HUNG}"
            stale_marker.touch()
            other = folder / "daemon-abc.log"
            other.touch()
            env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
            env.update(PYTHONPATH=str(ROOT / "src"), TMPDIR=str(tmpdir),
                       XDG_CONFIG_HOME=str(tmp_path / "no-config"))
            res = subprocess.run([sys.executable, "-m", "cairn.interfaces.cli", "--db",
                                  str(tmp_path / "none.db"), "daemon", "status"], env=env,
                                 capture_output=True, timeout=120)
            assert res.returncode == 0, res.stderr
            assert not dead.exists() and not stale_marker.exists()
            assert live.exists() and other.exists()
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def test_a_server_answers_for_a_replaced_index_but_not_a_deleted_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _index(tmp_path)
    tmpdir = Path(tempfile.mkdtemp(prefix="cg", dir="/tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
    line = b'{"op": "search", "query": "compost", "mode": "keyword"}\n'
    try:
        with Cairn(load_config(db=db, env={"CAIRN_EMBED": "none"}), create=False) as cairn, \
                warm.advertise(cairn, "serve", warm_up=False) as server:
            assert server is not None
            sock = str(server.socket_path)
            assert (warm.ask(sock, line) or {}).get("ok") is True
            copy = tmp_path / "copy.db"
            shutil.copyfile(db, copy)
            os.replace(copy, db)  # a restore or a sync tool: its store reconnects
            assert (warm.ask(sock, line) or {}).get("ok") is True
            db.unlink()
            assert (warm.ask(sock, line) or {}).get("ok") is False
            assert not db.exists()
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
