"""Fixtures of the web UI tests: a vault of hostile notes (every payload of
:mod:`payloads` in Markdown bodies, frontmatter values, Org headings, bodies,
properties and link descriptions, file names and chat messages) beside a copy of
``sample/``, indexed, and a real ``cairn serve`` on a free loopback port."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample"
sys.path.insert(0, str(Path(__file__).parent))
from payloads import FILE_NAMES, ORG_LINKS, PAYLOADS  # noqa: E402

EDITOR_URL = "vscode://file{path}:{line}"


@dataclass
class Vault:
    """An indexed vault: its folder, the index file and the config file."""

    folder: Path
    db: Path
    config: Path


def _yaml(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML string


def write_hostile(folder: Path) -> None:
    """Write the hostile notes into ``folder``."""
    x = folder / "xss"
    x.mkdir()
    for i, p in enumerate(PAYLOADS):
        (x / f"md-{i:02d}.md").write_text(
            f"---\ntitle: {_yaml('T ' + p)}\ntags: [xss, {_yaml(p)}]\ntype: {_yaml(p)}\n"
            f"author: {_yaml(p)}\n---\n\n"
            f"# Heading {p}\n\nxsspayload body {p}\n\n- item {p}\n\n"
            f"| a | b |\n|---|---|\n| {p} | [[md-00|{p}]] |\n\n[[md-00]] and [[{p}]]\n"
            f"\n> [!note]- {p}\n> {p}\n\n> [!{p}] x\n",
            encoding="utf-8")
        (x / f"org-{i:02d}.org").write_text(
            f"#+title: O {p}\n#+filetags: :xss:\n\n* TODO Heading {p} :xss:\n"
            f"SCHEDULED: <2026-05-10 Sun>\n:PROPERTIES:\n:NOTE: {p}\n:END:\n"
            f"xsspayload body {p}\n{ORG_LINKS[i % len(ORG_LINKS)]} and [[file:md-00.md][{p}]]\n"
            f"#+begin_src html\n{p}\n#+end_src\n| {p} | cell |\n- [X] {p}\n",
            encoding="utf-8")
    for i, name in enumerate(FILE_NAMES):
        safe = name.replace("/", "_")
        (x / safe).write_text(f"xsspayload file name {i}\n", encoding="utf-8")
    convs = [{
        "uuid": f"c{i}",
        "name": f"Chat {p}",
        "created_at": "2025-07-01T10:00:00Z",
        "updated_at": "2025-07-01T10:05:00Z",
        "chat_messages": [
            {"uuid": f"m{i}a", "sender": "human", "text": f"xsspayload ask {p}",
             "created_at": "2025-07-01T10:00:00Z"},
            {"uuid": f"m{i}b", "sender": "assistant", "text": f"answer {p}\n```html\n{p}\n```",
             "created_at": "2025-07-01T10:01:00Z"},
        ],
    } for i, p in enumerate(PAYLOADS)]
    (x / "conversations.json").write_text(json.dumps(convs), encoding="utf-8")
    write_branched_chat(folder / "chats")


def _node(nid: str, parent: str | None, children: list[str], role: str | None,
          text: str, t: float) -> dict[str, object]:
    msg = None if role is None else {
        "id": nid, "author": {"role": role}, "create_time": t,
        "content": {"content_type": "text", "parts": [text]}}
    return {"id": nid, "message": msg, "parent": parent, "children": children}


def write_branched_chat(folder: Path) -> None:
    """A ChatGPT export of one conversation with a regenerated answer: the first answer
    (``branchpayload old``) is off the branch the user last saw."""
    folder.mkdir()
    t = 1_751_364_000.0
    mapping = {
        "root": _node("root", None, ["q1"], None, "", t),
        "q1": _node("q1", "root", ["a_old", "a_new"], "user",
                    "How do I keep sourdough starter alive?", t + 1),
        "a_old": _node("a_old", "q1", [], "assistant",
                       "branchpayload old: feed it once a week.", t + 2),
        "a_new": _node("a_new", "q1", ["q2"], "assistant",
                       "Feed it daily at room temperature:\n"
                       "```python\nfeed(flour=50, water=50)\n```",
                       t + 3),
        "q2": _node("q2", "a_new", ["a2"], "user", "And in the fridge?", t + 4),
        "a2": _node("a2", "q2", [], "assistant", "Weekly feeding is enough in the fridge.",
                    t + 5),
    }
    conv = [{"title": "Sourdough starter care", "create_time": t, "update_time": t + 5,
             "mapping": mapping, "current_node": "a2", "id": "conv-sourdough"}]
    (folder / "conversations.json").write_text(json.dumps(conv), encoding="utf-8")


@pytest.fixture(scope="session")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    """``sample/`` plus the hostile notes, indexed without embeddings."""
    base = tmp_path_factory.mktemp("web")
    folder = base / "notes"
    shutil.copytree(SAMPLE, folder)
    write_hostile(folder)
    config = base / "cairn.toml"
    config.write_text(f'[web]\neditor_url = "{EDITOR_URL}"\n', encoding="utf-8")
    db = base / "i.db"
    with Cairn(load_config(db=db, config_file=config, env={"CAIRN_EMBED": "none"})) as c:
        c.index([folder])
    return Vault(folder, db, config)


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Serve:
    """``cairn serve`` in a child process on a free loopback port."""

    def __init__(self, vault: Vault, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        code = "import sys; from cairn.interfaces.cli import main; sys.exit(main())"
        # the log goes to a file: a pipe nobody reads fills up and blocks the server
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, "serve", "--db", str(vault.db), "--port",
             str(self.port)],
            env={**os.environ, "CAIRN_CONFIG": str(vault.config), "CAIRN_EMBED": "none",
                 "PYTHONPATH": str(ROOT / "src"), **(env or {})},
            stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=2):
                    break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    self.log.seek(0)
                    raise RuntimeError("cairn serve did not start: " +
                                       self.log.read().decode()) from None
                time.sleep(0.1)

    def stop(self) -> None:
        """Stop the server (terminate, then kill)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


@pytest.fixture(scope="session")
def server(vault: Vault) -> Iterator[Serve]:
    """A real ``cairn serve`` over the vault for the whole session."""
    srv = Serve(vault)
    yield srv
    srv.stop()
