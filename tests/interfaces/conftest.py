"""Shared fixtures of the door tests: an indexed copy of ``sample/`` (with a symbolic
link that points out of it and a secret file beside it), and a real uvicorn server on a
free loopback port."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import load_config

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample"


@dataclass
class Vault:
    """An indexed vault: its folder, the index file, and a file outside it."""

    folder: Path
    db: Path
    secret: Path


@pytest.fixture(scope="session")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    """``sample/`` copied and indexed (no embeddings); ``outside/secret.md`` sits next to
    it and ``notes/escape`` is a symbolic link to that folder."""
    base = tmp_path_factory.mktemp("doors")
    folder = base / "notes"
    shutil.copytree(SAMPLE, folder)
    outside = base / "outside"
    outside.mkdir()
    secret = outside / "secret.md"
    secret.write_text("# Secret\n\nnever to be served\n", encoding="utf-8")
    (folder / "escape").symlink_to(outside, target_is_directory=True)
    db = base / "i.db"
    with Cairn(load_config(db=db)) as c:
        c.index([folder])
    return Vault(folder, db, secret)


@pytest.fixture
def cairn(vault: Vault) -> Iterator[Cairn]:
    """The vault's index, opened for one test."""
    with Cairn(load_config(db=vault.db), create=False) as c:
        yield c


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Uvicorn:
    """A real uvicorn server in a thread on 127.0.0.1 (started, then stopped)."""

    def __init__(self, app: Any, port: int | None = None) -> None:
        import uvicorn

        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                access_log=False, lifespan="auto")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Uvicorn:
        if self.server.started:  # already started by on_free_port
            return self
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)

    @classmethod
    def on_free_port(cls, make_app: Callable[[int], Any], tries: int = 5) -> Uvicorn:
        """A started server for ``make_app(port)`` on a free port; another free port is
        tried when the chosen one was taken between picking and binding."""
        for attempt in range(tries):
            srv = cls(make_app(port := free_port()), port)
            try:
                return srv.__enter__()
            except RuntimeError:
                if attempt == tries - 1:
                    raise
        raise AssertionError("unreachable")


@pytest.fixture
def port() -> int:
    """A free loopback port."""
    return free_port()


@pytest.fixture
def uvicorn_server() -> type[Uvicorn]:
    """The :class:`Uvicorn` runner (``with uvicorn_server(app, port) as srv: srv.url``)."""
    return Uvicorn


@pytest.fixture
def bad_refs(vault: Vault) -> list[str]:
    """Every spelling of a path out of the vault a client might try."""
    return [
        "../outside/secret.md",
        str(vault.secret),
        "escape/secret.md",
        "%2e%2e/outside/secret.md",
        "..%2foutside%2fsecret.md",
        "projects/garden.org\x00",
        "/etc/passwd",
        "~/.ssh/id_rsa",
        "~nosuchuser/notes.md",
        "x" * 300 + ".md",
    ]
