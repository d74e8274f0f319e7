"""Helpers of the server fault tests: ``cairn serve`` / ``cairn watch`` as a real
process on a loopback port, its standard error read on a thread, its descendants read
from ``/proc``, and bounded waits (a wait that runs out fails the test)."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "cairn.interfaces.cli"]
TOKEN = "fault-token"


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cli_env(db: Path, **extra: str) -> dict[str, str]:
    """The environment of a CLI child: no inherited ``CAIRN_*``, keyword search only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    env["CAIRN_DAEMON"] = "0"  # a search starts no query daemon that outlives the test
    env.update(CAIRN_DB=str(db), CAIRN_EMBED="none", CAIRN_TOKEN=TOKEN, **extra)
    return env


def descendants(pid: int) -> dict[int, str]:
    """The live descendants of ``pid`` (Linux ``/proc``): pid -> command line."""
    parents: dict[int, int] = {}
    cmds: dict[int, str] = {}
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            stat = (p / "stat").read_text()
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] == "Z":
                continue
            # both read before either is kept: a process that ends between the two reads
            # is left out, not half-known
            parent = int(fields[1])
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            parents[int(p.name)] = parent
            cmds[int(p.name)] = cmd
        except (OSError, IndexError, ValueError):
            continue
    out: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        here = frontier.pop()
        for child, parent in parents.items():
            if parent == here and child not in out:
                out[child] = cmds[child]
                frontier.append(child)
    return out


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(what: str, check: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll ``check`` every 0.1 s until it is true.

    Raises:
        AssertionError: not within ``timeout`` seconds (naming ``what``).
    """
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


class Served:
    """One ``cairn`` command (``serve``, ``watch`` …) as a real process; its standard
    error is collected in :attr:`lines`."""

    def __init__(self, db: Path, *args: str, port: int | None = None,
                 env: dict[str, str] | None = None,
                 preexec: Callable[[], None] | None = None,
                 wrapper: tuple[str, ...] = ()) -> None:
        self.port = port or free_port()
        argv = [*wrapper, *CLI, *args]  # ``wrapper``: e.g. an ``unshare`` that execs it
        if args and args[0] == "serve":
            argv += ["--port", str(self.port)]
        def start() -> None:
            # a test runner started in the background ignores SIGINT, and a child would
            # inherit that and never see the Ctrl-C a test sends it
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            if preexec is not None:
                preexec()

        self.proc = subprocess.Popen(argv, env=env or cli_env(db), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     preexec_fn=start)
        self.lines: list[str] = []
        self._new: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace")
            self.lines.append(line)
            self._new.put(line)

    @property
    def log(self) -> str:
        """Standard error so far."""
        return "".join(self.lines)

    def wait_line(self, needle: str, timeout: float = 90.0, start: int = 0) -> None:
        """Wait until a line of standard error (from line ``start`` on) holds ``needle``."""
        wait_for(f"{needle!r} on stderr; got: {self.log[-3000:]}",
                 lambda: any(needle in x for x in self.lines[start:]), timeout)

    def request(self, method: str, path: str, body: Any = None, *,
                timeout: float = 30.0) -> tuple[int, Any]:
        """One HTTP request with the token; ``(status, JSON body or text)``."""
        headers = {"content-type": "application/json", "authorization": f"Bearer {TOKEN}"}
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", method=method, headers=headers,
            data=None if body is None else json.dumps(body).encode())
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                status, raw = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode(errors="replace")

    def search(self, query: str, limit: int = 100) -> list[str]:
        """Paths of a keyword search's hits."""
        status, body = self.request("POST", "/v1/search",
                                    {"query": query, "mode": "keyword", "limit": limit})
        assert status == 200, (status, body)
        return sorted({h["path"] for h in body["hits"]})

    def up(self) -> bool:
        """Whether ``/healthz`` answers."""
        try:
            return self.request("GET", "/healthz", timeout=5)[0] in (200, 503)
        except OSError:
            return False

    def wait_up(self, timeout: float = 90.0) -> None:
        """Wait until the server answers."""
        wait_for(f"the server on port {self.port}; stderr: {self.log[-3000:]}",
                 lambda: self.proc.poll() is None and self.up(), timeout)

    def children(self, needle: str) -> list[int]:
        """Descendants whose command line holds ``needle``."""
        return [p for p, cmd in descendants(self.proc.pid).items() if needle in cmd]

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        """Send ``sig`` and wait for the exit; killed (and the test failed) after
        ``timeout`` seconds. Returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill_all()
            raise AssertionError(f"still running {timeout} s after signal {sig}; "
                                 f"stderr: {self.log[-3000:]}") from None

    def kill_all(self) -> None:
        """SIGKILL the process and every descendant (cleanup)."""
        for pid in [*descendants(self.proc.pid), self.proc.pid]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
