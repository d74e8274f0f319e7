"""Chat exports whose titles hold planted secrets where a parser quotes them in its
warnings: a truncated export (the warning names the last conversation read) and a
conversation without a message mapping (a ChatGPT "Corrupted entry"); and the HTTP API
on a free loopback port (:class:`ApiServer`)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from enrich_vault import chatgpt_export

KEY = "sk-proj-" + "Zr4kT9wQ2mXb7Lc1Vn8Hj3Fd6Sa0Pq5Ue2Yi9Ot"
MAIL = "anna.k42@proton.me"


def broken_exports(chats: Path, key: str = KEY, mail: str = MAIL) -> Path:
    """Write ``nomap.json`` (two conversations, then one without a mapping whose title
    holds ``key``) and ``cut.json`` (cut inside its second conversation; the first, the
    last one read, has ``mail`` in its title) into ``chats``."""
    chats.mkdir(parents=True, exist_ok=True)
    convs = chatgpt_export([("c1", "Compost rota", 1.70e9, ["who turns the heap?", "Sam."]),
                            ("c2", "Seed order", 1.71e9, ["beans or peas?", "Both."])])
    convs.append({"id": "c3", "conversation_id": "c3", "title": f"rotate {key} today",
                  "create_time": 1.72e9, "current_node": "n1"})
    (chats / "nomap.json").write_text(json.dumps(convs), encoding="utf-8")
    raw = json.dumps(chatgpt_export([
        ("c4", f"write to {mail}", 1.70e9, ["draft the letter", "Done."]),
        ("c5", "Bed layout", 1.71e9, ["where do the leeks go?", "Bed three."]),
    ]))
    (chats / "cut.json").write_text(raw[: len(raw) - 120], encoding="utf-8")
    return chats


class ApiServer:
    """The HTTP API of ``cairn`` on a free loopback port, in a thread."""

    def __init__(self, cairn: Any) -> None:
        import socket

        import uvicorn

        from cairn.interfaces.api.app import create_app
        from cairn.interfaces.api.security import Policy

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self.server = uvicorn.Server(uvicorn.Config(
            create_app(cairn, Policy.for_bind("127.0.0.1", self.port, token=None)),
            host="127.0.0.1", port=self.port, log_level="warning", access_log=False))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "no server"
            time.sleep(0.02)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
