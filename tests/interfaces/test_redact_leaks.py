"""A masked value is absent from everything cairn keeps or serves: the FTS table, the
chunks and vectors' source text (the whole index file), snippets, ``show``, the HTTP
API and the MCP server on real loopback servers, and the log records — while the
user's files keep every byte."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.model.serialize import to_json

GH = "ghp_" + "Zr4kT9wQ2mXb7Lc1Vn8Hj3Fd6Sa0Pq5Ue2Yi"
MAIL = "maria.lopez77@proton.me"
CARD = "4539 1488 0343 6467"
NOTE_KEY = "sk-proj-Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9L"
VALUES = (GH, MAIL, CARD, NOTE_KEY)
pytestmark = pytest.mark.embed  # the static model embeds the chunks (env={} below)


def _export() -> list[dict[str, Any]]:
    def node(nid: str, parent: str | None, role: str, text: str, t: float) -> dict[str, Any]:
        return {
            "id": nid,
            "parent": parent,
            "children": [],
            "message": {
                "id": nid,
                "author": {"role": role},
                "create_time": t,
                "content": {"content_type": "text", "parts": [text]},
                "status": "finished_successfully",
                "recipient": "all",
                "metadata": {},
            },
        }

    mapping = {
        "root": {"id": "root", "parent": None, "children": ["m1"], "message": None},
        "m1": node(
            "m1",
            "root",
            "user",
            f"My deploy fails. I set GITHUB_TOKEN={GH} and mail {MAIL} gets no compost report.",
            1.7e9,
        ),
        "m2": node(
            "m2",
            "m1",
            "assistant",
            f"Rotate the token {GH} at once. Also never paste a card like {CARD}.",
            1.7e9 + 60,
        ),
    }
    mapping["root"]["children"] = ["m1"]
    mapping["m1"]["children"] = ["m2"]
    return [
        {
            "id": "c1",
            "conversation_id": "c1",
            "title": "Deploy token trouble",
            "create_time": 1.7e9,
            "update_time": 1.7e9 + 60,
            "current_node": "m2",
            "mapping": mapping,
        }
    ]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, Path]]:
    base = tmp_path_factory.mktemp("redact")
    chats = base / "chats"
    notes = base / "notes"
    chats.mkdir()
    notes.mkdir()
    (chats / "conversations.json").write_text(json.dumps(_export()), encoding="utf-8")
    (notes / "ops.md").write_text(
        f"# Ops\n\nThe staging key is {NOTE_KEY} for now.\n", encoding="utf-8"
    )
    cfg = base / "cairn.toml"
    cfg.write_text(
        '[redact]\non_ingest = { chats = "mask", notes = "mask" }\n[embed]\nprovider = "static"\n',
        encoding="utf-8",
    )
    db = base / "i.db"
    yield chats, db, cfg


@pytest.fixture(scope="module")
def logs(indexed: tuple[Path, Path, Path]) -> list[str]:
    """Every log record of the indexing run (DEBUG and up, every logger)."""
    chats, db, cfg = indexed
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage() + repr(record.args) + str(record.exc_info))

    root = logging.getLogger()
    handler, level = Keep(logging.DEBUG), root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        with Cairn(load_config(db=db, config_file=cfg, env={})) as c:
            run = c.index([chats, chats.parent / "notes"])
            records.append(to_json(run))
            assert run.added == 2 and not run.failures
            assert run.embedding is not None and run.embedding.embedded > 0
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    return records


def _open(indexed: tuple[Path, Path, Path]) -> Cairn:
    _, db, cfg = indexed
    return Cairn(load_config(db=db, config_file=cfg, env={}), create=False)


def test_the_index_file_holds_no_value_but_the_files_keep_theirs(
    indexed: tuple[Path, Path, Path], logs: list[str]
) -> None:
    chats, db, _ = indexed
    con = sqlite3.connect(db)
    dump = "\n".join(con.iterdump())
    fts = [
        r[0]
        for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND sql LIKE '%fts5%'"
        )
    ]
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    con.close()
    assert fts, "no FTS table found"
    assert any("chunk" in t for t in tables), tables
    for v in VALUES:
        assert v not in dump
    assert "[SECRET:github-token#1]" in dump and "[PII:email#1]" in dump
    assert "[SECRET:openai-key#1]" in dump
    assert GH in (chats / "conversations.json").read_text(encoding="utf-8")


def test_fts_snippets_show_and_semantic_search_give_placeholders(
    indexed: tuple[Path, Path, Path], logs: list[str]
) -> None:
    with _open(indexed) as c:
        assert not c.search(GH, mode="keyword").hits
        assert not c.search("proton", mode="keyword").hits
        hits = c.search("github token", mode="keyword").hits
        assert hits
        for mode in ("keyword", "semantic", "hybrid"):
            res = c.search("deploy token compost", mode=mode, explain=True, limit=10)
            text = to_json(res)
            assert res.hits and all(v not in text for v in VALUES), mode
        shown = "".join(to_json(c.doors.get(h.unit_id)) for h in hits)
        assert "[SECRET:github-token#1]" in shown and GH not in shown


def test_http_and_mcp_on_loopback_serve_no_value(
    indexed: tuple[Path, Path, Path], logs: list[str], port: int, uvicorn_server: Any
) -> None:
    from mcp import Client

    from cairn.interfaces.api.app import create_app
    from cairn.interfaces.api.security import Policy
    from cairn.interfaces.mcp.server import build_server, http_app

    seen: list[str] = []
    with _open(indexed) as c:
        with (
            uvicorn_server(
                create_app(c, Policy.for_bind("127.0.0.1", port, token=None)), port
            ) as srv,
            httpx2.Client(base_url=srv.url, timeout=30) as api,
        ):
            r = api.post("/v1/search", json={"query": "token deploy", "limit": 10})
            assert r.status_code == 200 and r.json()["hits"]
            seen.append(r.text)
            for h in r.json()["hits"]:
                seen.append(api.get(f"/v1/units/{h['unit_id']}").text)
        with uvicorn_server.on_free_port(
            lambda p: http_app(build_server(c), port=p)
        ) as srv:

            async def main() -> None:
                async with Client(f"{srv.url}/mcp") as client:
                    res = await client.call_tool("search", {"query": "token", "limit": 10})
                    assert not res.is_error and res.structured_content is not None
                    seen.append(json.dumps(res.structured_content))
                    for h in res.structured_content["hits"]:
                        got = await client.call_tool("get", {"ref": h["unit_id"]})
                        seen.append(json.dumps(got.structured_content))

            anyio.run(main)
    joined = "\n".join(seen)
    assert "[SECRET:github-token#1]" in joined
    for v in VALUES:
        assert v not in joined


def test_logs_hold_no_value(logs: list[str]) -> None:
    assert logs
    for v in VALUES:
        assert not any(v in line for line in logs)


def test_notes_are_left_as_written_by_default(tmp_path: Path) -> None:
    (tmp_path / "n").mkdir()
    (tmp_path / "n" / "a.md").write_text(f"# A\n\nkey {NOTE_KEY}\n", encoding="utf-8")
    (tmp_path / "cairn.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    with Cairn(load_config(db=tmp_path / "i.db", config_file=tmp_path / "cairn.toml")) as c:
        c.index([tmp_path / "n"], embed=False)
        assert c.search("staging OR key", mode="keyword").hits
        assert NOTE_KEY in to_json(c.search("key", mode="keyword"))


def test_drop_unit_leaves_the_messages_with_findings_out(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "conversations.json").write_text(json.dumps(_export()), encoding="utf-8")
    cfg = tmp_path / "cairn.toml"
    cfg.write_text('[redact]\non_ingest = "drop-unit"\n[embed]\nprovider = "none"\n')
    with Cairn(load_config(db=tmp_path / "i.db", config_file=cfg, env={})) as c:
        c.index([tmp_path / "c"], embed=False)
        assert not c.search("compost", mode="keyword").hits  # only in a dropped message
        assert not c.search("rotate", mode="keyword").hits
        assert c.search("deploy", mode="keyword").hits  # the title is kept, masked
    con = sqlite3.connect(tmp_path / "i.db")
    dump = "\n".join(con.iterdump())
    con.close()
    assert all(v not in dump for v in VALUES)


def test_file_texts_doors_show_are_masked_too(indexed: tuple[Path, Path, Path],
                                             logs: list[str]) -> None:
    chats, _, _ = indexed
    with _open(indexed) as c:
        note = c.notes.read_file(chats.parent / "notes" / "ops.md")
        export = c.notes.read_file(chats / "conversations.json")
        doc = c.doors.get(str(chats.parent / "notes" / "ops.md"))
        text = c.doors.document_text(doc.document.id)  # type: ignore[union-attr]
    assert "[SECRET:openai-key#1]" in note and NOTE_KEY not in note and NOTE_KEY not in text
    assert "[SECRET:github-token#1]" in export
    assert all(v not in export for v in VALUES)


def test_file_texts_of_notes_left_as_written_are_shown_as_written(tmp_path: Path) -> None:
    (tmp_path / "n").mkdir()
    (tmp_path / "n" / "a.md").write_text(f"# A\n\nkey {NOTE_KEY}\n", encoding="utf-8")
    (tmp_path / "cairn.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    with Cairn(load_config(db=tmp_path / "i.db", config_file=tmp_path / "cairn.toml")) as c:
        c.index([tmp_path / "n"], embed=False)
        assert NOTE_KEY in c.notes.read_file(tmp_path / "n" / "a.md")
