"""Readers through the HTTP API while an index run writes: no errors, and no reader
ever sees half of a file (each file is one transaction)."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import httpx2
import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.api.app import create_app
from cairn.interfaces.api.security import Policy


def write(folder: Path, round_: int, n: int = 60) -> None:
    for i in range(n):
        body = "\n\n".join(f"## Part {k} round {round_}\n\nalpha text {k} round {round_}"
                           for k in range(4))
        (folder / f"n{i:03d}.md").write_text(f"# Note {i} round {round_}\n\n{body}\n",
                                             encoding="utf-8")


@pytest.mark.slow  # four readers hammer a real server through rounds of re-indexing
def test_readers_never_see_half_a_file(tmp_path: Path, port: int, uvicorn_server: Any) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder, 0)
    db = tmp_path / "i.db"
    with Cairn(load_config(db=db)) as c:
        c.index([folder])
    token = "t" * 32
    with Cairn(load_config(db=db), create=False) as cairn, uvicorn_server(
        create_app(cairn, Policy.for_bind("127.0.0.1", port, token=token)), port
    ) as srv:
        auth = {"Authorization": f"Bearer {token}"}
        stop = threading.Event()
        problems: list[str] = []
        seen = {"docs": 0}

        def reader() -> None:
            with httpx2.Client(base_url=srv.url, headers=auth, timeout=60) as client:
                while not stop.is_set():
                    r = client.post("/v1/search", json={"query": "alpha", "limit": 20})
                    if r.status_code != 200:
                        problems.append(f"search {r.status_code}")
                        continue
                    for doc_id in {h["document_id"] for h in r.json()["hits"]}:
                        d = client.get(f"/v1/documents/{doc_id}")
                        if d.status_code == 404:
                            continue  # replaced since the search: its id changed
                        if d.status_code != 200:
                            problems.append(f"document {d.status_code}")
                            continue
                        rounds = {m for u in d.json()["units"]
                                  for m in re.findall(r"round (\d+)", u["title"] + u["body"])}
                        seen["docs"] += 1
                        if len(rounds) != 1:
                            problems.append(f"{doc_id}: units of rounds {sorted(rounds)}")
                    b = client.get("/v1/graph/backlinks", params={"node": "n001.md"})
                    if b.status_code != 200:
                        problems.append(f"backlinks {b.status_code} {b.text[:80]}")

        readers = [threading.Thread(target=reader) for _ in range(4)]
        for t in readers:
            t.start()
        try:
            for round_ in (1, 2, 3):
                write(folder, round_)
                r = httpx2.post(f"{srv.url}/v1/index", headers=auth, timeout=120)
                assert r.status_code == 200, r.text
                assert r.json()["changed"] == 60
        finally:
            stop.set()
            for t in readers:
                t.join(60)
    assert problems == []
    assert seen["docs"] > 20


def test_graph_and_vector_writes_run_in_the_calling_threads_transaction(
    tmp_path: Path,
) -> None:
    """A server's worker thread writes the graph and the chunks inside its own
    transaction (they used the connection of the thread that opened the store, which
    then waited on the worker's lock: "database is locked")."""
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder, 0, n=5)
    with Cairn(load_config(db=tmp_path / "i.db")) as cairn:
        cairn.index([folder])
        errors: list[BaseException] = []

        def worker() -> None:
            try:
                with cairn.store.transaction():
                    cairn.graph.update()
                    cairn.store.vectors.reset_chunks(cairn.store.vectors.chunker_signature())
            except BaseException as exc:
                errors.append(exc)

        t = threading.Thread(target=worker)
        t.start()
        t.join(30)
        assert errors == []
