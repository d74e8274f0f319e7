"""``schemathesis`` against the OpenAPI spec of a real uvicorn server: generated requests
for every operation, no server error and no response outside the schema.

The default run makes a few cases per operation; ``-m slow`` runs many more. The number
of cases run is printed at the end of the module (``pytest -s``). Every built-in check
runs except "schema-valid data is accepted": a reference outside the roots, a NUL byte
or an unreadable date is refused with 400 on purpose, whatever the schema allows."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import positive_data_acceptance

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.api.app import create_app
from cairn.interfaces.api.security import Policy

CASES = {"n": 0}


@pytest.fixture(scope="module")
def api_url(vault: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import socket

    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    cairn = Cairn(load_config(db=Path(vault.db)), create=False)
    app = create_app(cairn, Policy.for_bind("127.0.0.1", port, token="fuzz-token"))
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                        log_level="warning", access_log=False))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    while not srv.started:
        assert thread.is_alive()
        threading.Event().wait(0.02)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)
    cairn.close()
    print(f"\nschemathesis: {CASES['n']} generated cases, every one checked")


AUTH = {"Authorization": "Bearer fuzz-token"}


def _fuzz(api_url: str, examples: int) -> int:
    """Generate ``examples`` cases per operation of the served spec, call each and
    validate the response (every built-in check); returns the number of cases."""
    schema = schemathesis.openapi.from_url(f"{api_url}/openapi.json")
    count = 0
    operations = [r.ok() for r in schema.get_all_operations()]
    assert len(operations) == 13
    for op in operations:

        @given(case=op.as_strategy())
        @settings(max_examples=examples, deadline=None, derandomize=True,
                  suppress_health_check=list(HealthCheck), database=None)
        def run(case: Any) -> None:
            nonlocal count
            count += 1
            case.call_and_validate(base_url=api_url, headers=AUTH, timeout=60,
                                   excluded_checks=[positive_data_acceptance])

        run()
    return count


@pytest.mark.slow
def test_generated_requests(api_url: str) -> None:
    CASES["n"] += _fuzz(api_url, 30)


@pytest.mark.slow
def test_generated_requests_long(api_url: str) -> None:
    CASES["n"] += _fuzz(api_url, 150)
