"""The thin client: a new ``cairn search`` process answered by the running query daemon
prints byte for byte what a local search prints (stdout, stderr, exit status), imports
almost nothing, and falls back to the local path when the daemon cannot answer the same
(another index, other settings, usage errors) or is gone, stale, slow, malformed, or
not private to this user; Ctrl-C stops the wait."""

from __future__ import annotations

import contextlib
import json
import os
import re
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
from cairn.interfaces.cli import _thin
from cairn.serving import warm

pytestmark = pytest.mark.skipif(not warm.has_sockets(), reason="no Unix domain sockets")

ROOT = Path(__file__).resolve().parents[2]
NOTES = {
    "garden.md": "---\ntags: [outside]\n---\n# Garden\n\nCompost needs greens and browns; "
    "turn the pile weekly.\n",
    "bread.md": "# Sourdough\n\nFeed the starter the night before baking bread.\n",
    "pets.md": "# Our cat\n\nThe kitten naps on the warm windowsill.\n",
}
CLIENT = (
    "import sys\nfrom cairn.interfaces.cli import main\nsys.argv[0] = 'cairn'\n"
    "sys.exit(main())\n"
)
"""What the installed ``cairn`` script runs."""


def _env(tmpdir: Path, **extra: str) -> dict[str, str]:
    """A user's environment: a socket folder of this test's own, the static model, no
    user configuration (the daemon allowed: ``CAIRN_DAEMON=0`` would not use one either;
    :func:`_stop_all` stops what searches started)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAIRN_", "FORCE_COLOR"))}
    env.update(PYTHONPATH=str(ROOT / "src"), CAIRN_EMBED="static",
               TMPDIR=str(tmpdir), XDG_CONFIG_HOME=str(tmpdir / "no-config"), **extra)
    return env


def _run(argv: list[str], env: dict[str, str], cwd: Path, *,
         local: bool = False) -> tuple[subprocess.CompletedProcess[bytes], bool]:
    """``cairn ARGV`` in a new process: ``(the process, whether the daemon answered)``
    (no module of the fast path was imported); ``local``: with ``CAIRN_NO_WARM=1``."""
    env = {**env, "CAIRN_NO_WARM": "1"} if local else env
    res = subprocess.run([sys.executable, "-X", "importtime", "-c", CLIENT, *argv], env=env,
                         cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
    lines = res.stderr.splitlines(keepends=True)
    imports = b"".join(ln for ln in lines if ln.startswith(b"import time:"))
    res.stderr = b"".join(ln for ln in lines if not ln.startswith(b"import time:"))
    return res, b"cairn.interfaces.cli._fast" not in imports


def _stop_all(env: dict[str, str]) -> None:
    """Stop every daemon of ``env``'s socket folder (those local searches started)."""
    subprocess.run([sys.executable, "-m", "cairn.interfaces.cli", "daemon", "stop", "--all"],
                   env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=120)


def _stable(text: bytes) -> bytes:
    """Output without the search's own time (``took_ms``, ``N hits in X ms``)."""
    text = re.sub(rb'("took_ms": )[-0-9.e]+', rb"\1T", text)
    return re.sub(rb"(hits? in )[0-9.]+( ms)", rb"\1T\2", text)


def _wait(what: str, check: object, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _short_tmp() -> Path:
    """A folder whose socket paths stay under the 108-byte limit."""
    return Path(tempfile.mkdtemp(prefix="ct", dir="/tmp"))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """An index of three notes embedded with the static model and a query daemon
    answering for it (in a socket folder of its own): ``(index, environment)``."""
    pytest.importorskip("model2vec")
    home = tmp_path_factory.mktemp("thin")
    root = home / "notes"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text, encoding="utf-8")
    (home / "sub").mkdir()
    db = home / "i.db"
    with Cairn(load_config(db=db, env={"CAIRN_EMBED": "static"})) as c:
        c.index([root])
    tmpdir = _short_tmp()
    env = _env(tmpdir)
    proc = subprocess.Popen([sys.executable, "-m", "cairn.interfaces.cli._answer", "--db",
                             str(db)], env=env, cwd="/", stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    folder = warm.advert_folder(db)
    try:
        _wait("the daemon's advert", lambda: (folder / f"{proc.pid}.json").exists()
              or proc.poll() is not None)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        yield db, env
    finally:
        _stop_all(env)
        proc.terminate()
        _, log = proc.communicate(timeout=60)
        shutil.rmtree(tmpdir, ignore_errors=True)
    assert b"Traceback" not in log, log.decode()


CASES: list[tuple[str, list[str], dict[str, str], bool]] = [
    ("hybrid", ["search", "compost pile"], {}, True),
    ("keyword", ["search", "compost", "--mode", "keyword"], {}, True),
    ("json", ["search", "feed the starter", "--json", "--limit", "2"], {}, True),
    ("format json", ["search", "bread", "--format", "json"], {}, True),
    ("explain", ["search", "compost", "--explain", "--mode", "keyword"], {}, True),
    ("filters", ["search", "compost", "tag:outside", "path:garden.md"], {}, True),
    ("a filter without hits", ["search", "compost", "tag:indoors"], {}, True),
    ("files", ["search", "compost", "--files"], {}, True),
    ("csv", ["search", "bread", "--format", "csv"], {}, True),
    ("vimgrep", ["search", "starter", "--format", "vimgrep", "--mode", "keyword"], {}, True),
    ("fields", ["search", "garden", "--fields", "title,path,line,tags"], {}, True),
    ("no hits", ["search", "zzzqqq", "--mode", "keyword"], {}, True),
    ("no hits json", ["search", "zzzqqq", "--mode", "keyword", "--json"], {}, True),
    ("a bad mode", ["search", "compost", "--mode", "nonsense"], {}, True),
    ("a bad format", ["search", "compost", "--format", "xml", "--json"], {}, True),
    # Typer's own messages: the daemon passes, the normal path prints them
    ("a bad option", ["search", "compost", "--bogus"], {}, False),
    ("another day", ["search", "compost"], {"CAIRN_TODAY": "2024-01-01"}, False),
]


@pytest.mark.slow  # about forty new cairn processes
@pytest.mark.parametrize(("argv", "extra", "thin"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_the_daemon_prints_what_a_local_search_prints(
    served: tuple[Path, dict[str, str]], argv: list[str], extra: dict[str, str], thin: bool
) -> None:
    db, env = served
    line = [*argv, "--db", str(db)]
    here, answered = _run(line, {**env, **extra}, db.parent)
    local, _ = _run(line, {**env, **extra}, db.parent, local=True)
    assert answered is thin
    assert here.returncode == local.returncode
    assert _stable(here.stdout) == _stable(local.stdout)
    assert here.stderr == local.stderr
    assert here.stdout or here.stderr


@pytest.mark.slow
def test_an_index_named_from_another_folder_is_the_daemons(
    served: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    db, env = served
    sub = db.parent / "sub"
    for argv, extra in ((["--db", "../i.db", "search", "compost"], {}),
                        (["search", "kitten", "--db", "../i.db", "--json"], {}),
                        (["search", "kitten"], {"CAIRN_DB": "../i.db"})):
        here, answered = _run(argv, {**env, **extra}, sub)
        local, _ = _run(argv, {**env, **extra}, sub, local=True)
        assert answered, argv
        assert (here.returncode, here.stderr) == (local.returncode, local.stderr) == (0, b"")
        assert _stable(here.stdout) == _stable(local.stdout)
    # another index (missing here): the daemon passes, the local path says so
    missing = ["search", "compost", "--db", str(tmp_path / "none.db")]
    here, answered = _run(missing, env, sub)
    local, _ = _run(missing, env, sub, local=True)
    assert not answered and here.returncode == local.returncode == 1
    assert here.stderr == local.stderr and b"none.db" in here.stderr


def test_the_client_imports_only_what_it_needs(served: tuple[Path, dict[str, str]]) -> None:
    db, env = served
    code = CLIENT.replace("sys.exit(main())", "main()\nsys.stderr.write('MODULES ' + "
                          "' '.join(sorted(sys.modules)))")
    res = subprocess.run([sys.executable, "-c", code, "search", "compost", "--db", str(db)],
                         env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "Garden" in res.stdout
    loaded = set(res.stderr.rsplit("MODULES ", 1)[1].split())
    baseline = subprocess.run([sys.executable, "-c", "import sys; print(' '.join(sys.modules))"],
                              env=env, capture_output=True, text=True, check=True)
    extra = loaded - set(baseline.stdout.split())
    assert extra <= {"cairn", "cairn.interfaces", "cairn.interfaces.cli",
                     "cairn.interfaces.cli._thin", "_socket", "__future__"}, sorted(extra)


@contextlib.contextmanager
def _fake_daemon(folder: Path, reply: bytes | None, *, mode: int = 0o600,
                 name: str = "daemon-fake-1.sock") -> Iterator[list[int]]:
    """A socket in ``folder`` answering every connection with ``reply`` (``None``: never
    answers, holds the connection); the list gets a number per connection."""
    folder.mkdir(mode=0o700, exist_ok=True)
    path = folder / name
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    path.chmod(mode)
    srv.listen(4)
    srv.settimeout(0.2)
    connected: list[int] = []
    stop = threading.Event()
    held: list[socket.socket] = []

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            connected.append(len(connected) + 1)
            if reply is None:
                held.append(conn)
                continue
            with conn, contextlib.suppress(OSError):
                conn.recv(65536)
                conn.sendall(reply)

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    try:
        yield connected
    finally:
        stop.set()
        t.join(5)
        for c in held:
            c.close()
        srv.close()
        path.unlink(missing_ok=True)


FORGED = b"cairn-out 1 0 1\n1 6\nPWNED\n"
"""A well-formed answer: used only from a socket that passes every check."""


@pytest.mark.slow
def test_a_stale_malformed_or_unprivate_daemon_is_not_used(
    served: tuple[Path, dict[str, str]]
) -> None:
    db, served_env = served
    tmpdir = _short_tmp()
    env = {**served_env, "TMPDIR": str(tmpdir)}
    folder = tmpdir / f"cairn-{os.getuid()}"
    argv = ["search", "compost", "--db", str(db)]
    local, _ = _run(argv, env, db.parent, local=True)
    assert local.returncode == 0 and b"Garden" in local.stdout

    def same_as_local() -> None:
        here, _ = _run(argv, env, db.parent)
        assert (here.returncode, here.stderr) == (local.returncode, local.stderr)
        assert _stable(here.stdout) == _stable(local.stdout)

    try:
        with _fake_daemon(folder, FORGED) as connected:  # the check itself: it is used
            here, answered = _run(argv, env, db.parent)
            assert answered and here.stdout == b"PWNED\n" and connected
        # a socket nobody listens on any more (its daemon was killed)
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(str(folder / "daemon-stale-2.sock"))
        stale.close()
        same_as_local()
        for garbage in (b"", b"cairn-out 1 0 1\n1 99\nshort", b"{\"ok\": false}\n",
                        b"cairn-out 1 0 1\n3 2\nhi", b"cairn-out 1 999 0\n", b"\xff" * 64):
            with _fake_daemon(folder, garbage) as connected:
                same_as_local()
                assert connected
        with _fake_daemon(folder, FORGED, mode=0o666) as connected:  # others may open it
            same_as_local()
            assert not connected
        folder.chmod(0o755)  # a folder others may enter
        with _fake_daemon(folder, FORGED) as connected:
            same_as_local()
            assert not connected
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def test_a_daemon_slower_than_the_bound_is_left(monkeypatch: pytest.MonkeyPatch) -> None:
    tmpdir = _short_tmp()
    folder = tmpdir / f"cairn-{os.getuid()}"
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.delenv("CAIRN_NO_WARM", raising=False)
    monkeypatch.delenv("CAIRN_DAEMON", raising=False)
    monkeypatch.setattr(_thin, "failed", set())
    try:
        with _fake_daemon(folder, None) as connected:
            assert _thin.answer(["search", "compost"], timeout=0.5) is None
            assert connected and _thin.failed == {str(folder / "daemon-fake-1.sock")}
            marker = folder / f"daemon-fake-1.sock{_thin.HUNG}"
            assert marker.exists()  # no client waits on it again until it answers
            # the bound is for all the daemons together: the next one is not asked
            marker.unlink()
            _thin.failed.clear()
            with _fake_daemon(folder, None, name="daemon-fake-2.sock") as other:
                assert _thin.answer(["search", "compost"], timeout=0.5) is None
                assert len(_thin.failed) == 1 and len(connected) - 1 + len(other) == 1
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def test_a_daemon_that_failed_the_client_is_not_asked_again(
    served: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn.interfaces.cli._fast import _warm
    from cairn.model.search_request import SearchRequest

    _, env = served
    tmpdir = _short_tmp()
    folder = tmpdir / f"cairn-{os.getuid()}"
    for name in [k for k in os.environ if k.startswith("CAIRN_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("CAIRN_EMBED", "static")
    monkeypatch.setenv("XDG_CONFIG_HOME", env["XDG_CONFIG_HOME"])
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr(_thin, "failed", set())
    db = tmpdir / "j.db"  # only its adverts' folder is read
    config = load_config(db=db)
    advert = warm.advert_folder(db) / f"{os.getpid()}.json"  # this process: alive
    advert.parent.mkdir()
    try:
        with _fake_daemon(folder, b"garbage\n") as connected:
            advert.write_text(json.dumps({
                "pid": os.getpid(), "kind": "daemon", "settings": warm.settings_hash(config),
                "socket": str(folder / "daemon-fake-1.sock")}), encoding="utf-8")
            assert _thin.answer(["search", "compost", "--db", str(db)]) is None
            assert connected == [1]
            found, _ = _warm(None, db, SearchRequest.of("compost"), skip=False)
            assert found is None and connected == [1]  # not asked a second time
            monkeypatch.setattr(_thin, "failed", set())
            assert _warm(None, db, SearchRequest.of("compost"), skip=False)[0] is None
            assert connected == [1, 2]  # the check itself: asked when it had not failed
    finally:
        advert.unlink(missing_ok=True)
        shutil.rmtree(tmpdir, ignore_errors=True)


def test_ctrl_c_stops_the_wait(tmp_path: Path) -> None:
    tmpdir = _short_tmp()
    folder = tmpdir / f"cairn-{os.getuid()}"
    try:
        with _fake_daemon(folder, None) as connected:
            proc = subprocess.Popen([sys.executable, "-c", CLIENT, "search", "compost"],
                                    env=_env(tmpdir), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)
            _wait("the client to connect", lambda: connected, 60)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=20)  # well within the answer bound (30 s)
            assert (proc.returncode, out, err) == (130, b"", b"aborted\n")
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def test_requests_and_answers_round_trip() -> None:
    assert _thin.REQUEST_HEAD == warm.ARGV_HEAD
    assert _thin.parse_answer(b"cairn-out 1 2 2\n2 7\nerror:\n1 3\n\xc3\xa9\n") == (
        2, [(2, "error:\n"), (1, "é\n")])
    assert _thin.parse_answer(_thin.PASS) is None
    assert _thin._is_search(["--db", "x.db", "--config=c.toml", "search", "q"])
    assert not _thin._is_search(["index", "search"])
    assert not _thin._is_search(["--db"])
    data = json.dumps({"query": "x"}).encode()
    assert _thin.parse_answer(data) is None


def _on_terminal(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int, bytes]:
    """``cairn ARGV`` with standard output on a pseudo-terminal: (status, its bytes)."""
    import pty

    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-c", CLIENT, *argv], env=env, cwd=cwd,
                                stdin=subprocess.DEVNULL, stdout=slave,
                                stderr=subprocess.DEVNULL)
        os.close(slave)
        out = bytearray()
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's other end closed
                break
            if not chunk:
                break
            out += chunk
        return proc.wait(timeout=120), bytes(out)
    finally:
        os.close(master)


@pytest.mark.slow
def test_a_terminal_gets_the_same_styles(served: tuple[Path, dict[str, str]]) -> None:
    db, env = served
    argv = ["search", "compost", "--db", str(db)]
    code, styled = _on_terminal(argv, env, db.parent)
    local_code, local = _on_terminal(argv, {**env, "CAIRN_NO_WARM": "1"}, db.parent)
    assert code == local_code == 0 and b"\x1b[1m" in styled  # styled: a terminal
    assert _stable(styled) == _stable(local)


def test_a_daemon_of_other_code_passes(served: tuple[Path, dict[str, str]],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from cairn.interfaces.cli._answer import answer_argv, route_streams

    db, env = served
    monkeypatch.setattr(sys, "stdout", sys.stdout)  # restored after the test
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    route_streams()
    for name in [k for k in os.environ if k.startswith("CAIRN_")]:
        monkeypatch.delenv(name)
    for name in ("CAIRN_EMBED", "XDG_CONFIG_HOME", "TMPDIR"):
        monkeypatch.setenv(name, env[name])
    payload = _thin.request(["search", "compost", "--db", str(db)])
    body = payload.split(b"\n", 1)[1]
    with Cairn(load_config(db=db)) as cairn:
        found = _thin.parse_answer(answer_argv(cairn, body))
        assert found is not None and found[0] == 0 and "Garden" in found[1][0][1]
        other = body.replace(_thin.origin(), _thin.origin() + b"-other")
        assert answer_argv(cairn, other) == _thin.PASS
        assert answer_argv(cairn, b"\0".join([b"x"] * 3)) == _thin.PASS


@pytest.mark.slow
def test_a_killed_daemon_leaves_the_search_to_the_local_path(
    served: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    db, served_env = served
    tmpdir = _short_tmp()
    env = {**served_env, "TMPDIR": str(tmpdir)}
    config_file = tmp_path / "cairn.toml"  # other settings: a daemon of its own
    config_file.write_text("[daemon]\nidle_minutes = 5\n", encoding="utf-8")
    argv = ["--config", str(config_file), "search", "compost", "--db", str(db)]
    proc = subprocess.Popen([sys.executable, "-m", "cairn.interfaces.cli._answer", "--db",
                             str(db), "--config", str(config_file)], env=env, cwd="/",
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    advert = warm.advert_folder(db) / f"{proc.pid}.json"
    try:
        _wait("the daemon's advert", advert.exists)
        sock = Path(json.loads(advert.read_text(encoding="utf-8"))["socket"])
        answered = _run(argv, env, db.parent)
        assert answered[1] and b"Garden" in answered[0].stdout  # it answers while it runs
        # the same configuration named relative to another folder: the same daemon
        (tmp_path / "sub").mkdir()
        relative = ["--config", "../cairn.toml", *argv[2:]]
        here, thin = _run(relative, env, tmp_path / "sub")
        local, _ = _run(relative, env, tmp_path / "sub", local=True)
        assert thin and (here.returncode, here.stderr) == (local.returncode, local.stderr)
        assert _stable(here.stdout) == _stable(local.stdout) and b"Garden" in here.stdout
        proc.kill()
        proc.wait(timeout=60)
        assert sock.exists() and advert.exists()  # a killed daemon removes nothing
        here, thin = _run(argv, env, db.parent)
        local, _ = _run(argv, env, db.parent, local=True)
        assert not thin
        assert (here.returncode, here.stderr) == (local.returncode, local.stderr) == (0, b"")
        assert _stable(here.stdout) == _stable(local.stdout)
        assert not sock.exists() and not advert.exists()  # the fast path removed them
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _stop_all(env)
        advert.unlink(missing_ok=True)
        shutil.rmtree(tmpdir, ignore_errors=True)


OTHER_USER = 65534
"""``nobody``: the other user of the tests that need root to play one."""
LISTENER = """
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
os.setuid(int(sys.argv[2]))  # the socket file stays root's; the listener is not
s.listen(4)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    c.recv(65536)
    c.sendall(sys.argv[3].encode())
    c.close()
"""


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="playing another user needs root")
def test_a_socket_or_listener_of_another_user_is_refused(
    served: tuple[Path, dict[str, str]]
) -> None:
    db, served_env = served
    tmpdir = _short_tmp()
    env = {**served_env, "TMPDIR": str(tmpdir)}
    folder = tmpdir / f"cairn-{os.getuid()}"
    argv = ["search", "compost", "--db", str(db)]
    local, _ = _run(argv, env, db.parent, local=True)
    try:
        with _fake_daemon(folder, FORGED) as connected:  # a socket file of another user
            os.chown(folder / "daemon-fake-1.sock", OTHER_USER, OTHER_USER)
            here, answered = _run(argv, env, db.parent)
            assert not answered and not connected
            assert _stable(here.stdout) == _stable(local.stdout) and b"PWNED" not in here.stdout
        # this user's socket file, but the process listening on it runs as another user
        path = folder / "daemon-other-2.sock"
        proc = subprocess.Popen([sys.executable, "-c", LISTENER, str(path), str(OTHER_USER),
                                 FORGED.decode()], stdout=subprocess.PIPE)
        try:
            assert proc.stdout is not None and proc.stdout.readline() == b"listening\n"
            path.chmod(0o600)
            assert path.stat().st_uid == os.getuid()
            here, answered = _run(argv, env, db.parent)
            assert not answered and b"PWNED" not in here.stdout
            assert (here.returncode, here.stderr) == (local.returncode, local.stderr)
            assert _stable(here.stdout) == _stable(local.stdout)
        finally:
            proc.kill()
            proc.wait()
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
