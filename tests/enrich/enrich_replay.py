"""A real HTTP server on loopback that speaks the OpenAI chat API
(``POST /v1/chat/completions``) or Anthropic's (``POST /v1/messages``) and replays
replies.

The replies are written by hand (``replies.json`` beside this file; no real model was
recorded): a script of responses is played first — a reply's text, a malformed body,
an HTTP status such as 429 with ``Retry-After``, a delay longer than the client's
timeout — then every further request gets :func:`default_reply`, a valid answer made
from the prompt (its message count, its vocabulary). Every request body is kept, so a
test can prove what reached the server and what did not.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPLIES = json.loads((Path(__file__).with_name("replies.json")).read_text(encoding="utf-8"))
"""The hand-written replies (see the module docstring)."""


def _prompt_parts(body: dict[str, Any]) -> tuple[str, str]:
    """``(system, user)`` of an OpenAI or Anthropic request body."""
    if "system" in body:
        return str(body["system"]), str(body["messages"][-1]["content"])
    msgs = body["messages"]
    system = next((m["content"] for m in msgs if m["role"] == "system"), "")
    return str(system), str(msgs[-1]["content"])


def default_reply(body: dict[str, Any]) -> str:
    """A valid reply to any enrichment request, from the hand-written templates: a
    conversation request gets its summary, three insights citing its first messages
    and a tag from its vocabulary; a relation request gets ``builds_on``."""
    system, user = _prompt_parts(body)
    if "compare two conversations" in system:
        return json.dumps(REPLIES["relation"])
    n = len(re.findall(r"^\[\d+\] ", user, re.M)) or 1
    title = re.search(r"^Title: (.*)$", user, re.M)
    vocab = re.search(r"^Tag vocabulary: (.*)$", user, re.M)
    tpl = json.loads(json.dumps(REPLIES["conversation"]))
    tpl["summary"] = tpl["summary"].format(title=title.group(1) if title else "?")
    for i, ins in enumerate(tpl["insights"]):
        ins["messages"] = [min(n, i + 1)]
    first = (vocab.group(1).split(", ")[0] if vocab else "").strip()
    if first and first != "(none yet)":
        tpl["tags"] = [first, *tpl["tags"]]
    return json.dumps(tpl)


class ReplayServer:
    """The server; ``script`` holds the responses to play first (dicts: ``content``
    — the reply text; ``body`` — a raw response body; ``status`` with ``headers``;
    ``delay`` — seconds to wait before answering)."""

    def __init__(self, api: str = "openai",
                 default: Callable[[dict[str, Any]], str] = default_reply) -> None:
        self.api = api
        self.default = default
        self.script: deque[dict[str, Any]] = deque()
        self.bodies: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                with server.lock:
                    server.raw.append(raw)
                    server.headers.append(dict(self.headers))
                    step = server.script.popleft() if server.script else {}
                want = "/v1/messages" if server.api == "anthropic" else "/v1/chat/completions"
                if self.path != want:
                    self._send(404, b'{"error": "no such endpoint"}')
                    return
                body = json.loads(raw)
                with server.lock:
                    server.bodies.append(body)
                if step.get("delay"):
                    time.sleep(float(step["delay"]))
                if "status" in step:
                    self._send(int(step["status"]), b'{"error": "scripted"}',
                               step.get("headers", {}))
                    return
                if "body" in step:
                    self._send(200, str(step["body"]).encode())
                    return
                text = step["content"] if "content" in step else server.default(body)
                self._send(200, json.dumps(server.wrap(text, body)).encode())

            def _send(self, code: int, data: bytes, headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL (``http://127.0.0.1:PORT/v1`` for OpenAI, without ``/v1`` for
        Anthropic)."""
        base = f"http://127.0.0.1:{self.port}"
        return base + "/v1" if self.api == "openai" else base

    def wrap(self, text: str, body: dict[str, Any]) -> dict[str, Any]:
        """The API's response document around a reply text."""
        pin = sum(len(str(m.get("content", ""))) for m in body.get("messages", ())) // 4
        pout = len(text) // 4
        if self.api == "anthropic":
            return {"id": "msg_1", "type": "message", "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                    "usage": {"input_tokens": pin, "output_tokens": pout}}
        return {"id": "chatcmpl-1", "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": pin, "completion_tokens": pout}}

    def everything_received(self) -> str:
        """Every request body as text (for "this value never arrived" checks)."""
        return "\n".join(r.decode("utf-8", "replace") for r in self.raw)


@contextmanager
def replay_server(api: str = "openai") -> Iterator[ReplayServer]:
    """A started :class:`ReplayServer`, shut down after the block."""
    s = ReplayServer(api)
    s.thread.start()
    try:
        yield s
    finally:
        s.httpd.shutdown()
        s.httpd.server_close()
