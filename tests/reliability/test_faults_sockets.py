"""Slow sockets (the ``faults`` tier): connections that never finish their request
headers, more of them than the process may open files, against a real ``cairn mcp
--transport http``. They are dropped after the header deadline, a new client is
answered, and SIGTERM stops the server within seconds leaving no process behind.
(``cairn serve`` has the same case in ``test_serve_children.py``.)"""

from __future__ import annotations

import http.client
import resource
import signal
import socket
import subprocess
from pathlib import Path

import pytest
from _served import CLI, alive, cli_env, free_port, wait_for
from test_faults import _vault

pytestmark = pytest.mark.faults
pytest.importorskip("uvicorn")
pytest.importorskip("mcp")

FILES = 128
"""The server's limit of open files."""
SLOW = 150
"""Connections that never finish their headers (more than :data:`FILES`)."""


def _few_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILES, FILES))


def _answered(port: int) -> bool:
    """Whether a new client gets an HTTP answer (any status) to ``GET /mcp``."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/mcp", headers={"Host": f"127.0.0.1:{port}"})
        return conn.getresponse().status > 0
    except OSError:
        return False
    finally:
        conn.close()


def test_mcp_over_http_drops_slow_sockets_past_the_file_limit(tmp_path: Path) -> None:
    _folder, db = _vault(tmp_path)
    port = free_port()
    proc = subprocess.Popen([*CLI, "mcp", "--transport", "http", "--port", str(port)],
                            env=cli_env(db), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=_few_files)
    slow: list[socket.socket] = []
    try:
        wait_for("the MCP server", lambda: proc.poll() is None and _answered(port), 90)
        for _ in range(SLOW):
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                s.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never ends
            except OSError:
                continue  # the backlog is full: the next ones are refused or time out
            slow.append(s)
        wait_for("a new client to be answered", lambda: _answered(port), 60)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        for s in slow:
            s.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        assert proc.stderr is not None
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
    assert not alive(proc.pid)
    assert "Traceback" not in err, err[-2000:]
