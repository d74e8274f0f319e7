"""Chat exports through the pipeline: re-imports touch only changed conversations,
conversations gone from an export are removed, and stray JSON is skipped, not failed."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.model.serialize import to_data

pytest.importorskip("cairn.formats.chats")


def _conversation(cid: str, title: str, turns: list[tuple[str, str]]) -> dict[str, Any]:
    """A minimal ChatGPT ``conversations.json`` entry: root → messages in a chain."""
    mapping: dict[str, Any] = {
        "root": {"id": "root", "parent": None, "children": [], "message": None}
    }
    parent = "root"
    for i, (role, text) in enumerate(turns):
        nid = f"{cid}-m{i}"
        mapping[parent]["children"].append(nid)
        mapping[nid] = {
            "id": nid,
            "parent": parent,
            "children": [],
            "message": {
                "id": nid,
                "author": {"role": role, "name": None, "metadata": {}},
                "create_time": 1700000000.0 + i,
                "content": {"content_type": "text", "parts": [text]},
                "status": "finished_successfully",
                "weight": 1.0,
                "metadata": {},
                "recipient": "all",
            },
        }
        parent = nid
    return {
        "id": cid,
        "conversation_id": cid,
        "title": title,
        "create_time": 1700000000.0,
        "update_time": 1700000000.0 + len(turns),
        "mapping": mapping,
        "current_node": parent,
    }


def _write(path: Path, convs: list[dict[str, Any]], bump: float = 0.0) -> None:
    path.write_text(json.dumps(convs), encoding="utf-8")
    t = time.time() + bump
    os.utime(path, (t, t))


def _rows(c: Cairn) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for title, rowid in c.store.db.execute(
        "SELECT d.title, u.rowid FROM units u JOIN documents d ON d.id = u.document_id "
        "ORDER BY u.rowid"
    ):
        out.setdefault(title, []).append(rowid)
    return out


def test_reimport_rewrites_only_changed_conversations(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    export = folder / "conversations.json"
    convs = [
        _conversation("c1", "Soup", [("user", "lentil soup?"), ("assistant", "add cumin")]),
        _conversation("c2", "Bikes", [("user", "squeaky chain"), ("assistant", "oil it")]),
        _conversation("c3", "Trees", [("user", "prune apples"), ("assistant", "in winter")]),
    ]
    _write(export, convs)
    (folder / "package.json").write_text('{"name": "not-a-chat", "version": "1.0.0"}')
    c = Cairn.open(db=tmp_path / "i.db")
    first = c.index([folder])
    assert (first.added, first.failed, first.skipped) == (1, 0, 1)
    assert any(w.path == "package.json" and "skipped" in w.message for w in first.warnings)
    before = _rows(c)
    assert set(before) == {"Soup", "Bikes", "Trees"}

    convs[1] = _conversation(
        "c2",
        "Bikes",
        [("user", "squeaky chain"), ("assistant", "oil it"), ("user", "derailleur gears")],
    )
    _write(export, convs, bump=5)
    run = c.index()
    assert run.changed == 1
    after = _rows(c)
    assert after["Soup"] == before["Soup"] and after["Trees"] == before["Trees"]
    assert after["Bikes"] != before["Bikes"]
    assert c.search("derailleur").hits[0].doc_title == "Bikes"
    assert any("1 of 3 documents changed" in w.message for w in run.warnings)

    _write(export, [convs[0], convs[1]], bump=10)
    c.index()
    assert set(_rows(c)) == {"Soup", "Bikes"}
    assert c.search("prune apples").hits == ()
    assert c.notes.check() == []
    c.close()


def test_a_truncated_export_keeps_what_it_could_read(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    convs = [
        _conversation("c1", "Soup", [("user", "lentil soup?"), ("assistant", "add cumin")]),
        _conversation("c2", "Bikes", [("user", "squeaky chain"), ("assistant", "oil it")]),
    ]
    text = json.dumps(convs)
    (folder / "conversations.json").write_text(text[: len(text) - 40], encoding="utf-8")
    c = Cairn.open(db=tmp_path / "i.db")
    run = c.index([folder])
    assert run.added == 1 and run.failed == 0  # indexed, with the broken part reported
    # as a warning naming the file (not a failure of a file counted as not failed)
    assert not run.failures
    partly = [w for w in run.warnings if w.message.startswith("partly indexed")]
    assert partly and partly[0].path == "conversations.json"
    assert c.search("cumin").hits[0].doc_title == "Soup"
    assert to_data(c.stats())["failed_files"][0]["status"] == "partial"
    # and every later run says so again while the file is unchanged
    again = c.index()
    assert any(
        w.path == "conversations.json" and w.message.startswith("partly indexed")
        for w in again.warnings
    )
    c.close()


def _with_regeneration(conv: dict[str, Any], text: str) -> dict[str, Any]:
    """``conv`` with a discarded regeneration of its first answer: a sibling of the
    live answer, off the branch that ``current_node`` ends."""
    cid = conv["id"]
    first_user = conv["mapping"]["root"]["children"][0]
    live = conv["mapping"][first_user]["children"][0]
    alt = {**conv["mapping"][live], "id": f"{cid}-alt", "parent": first_user, "children": []}
    alt["message"] = {**alt["message"], "id": f"{cid}-alt",
                      "content": {"content_type": "text", "parts": [text]}}
    conv["mapping"][f"{cid}-alt"] = alt
    conv["mapping"][first_user]["children"].insert(0, f"{cid}-alt")
    return conv


def test_exports_write_the_live_branch_of_conversations(tmp_path: Path) -> None:
    """A regeneration the user discarded is not written as a message of the
    conversation (OKF, Obsidian), and the report says what was left out; the Obsidian
    vault holds every conversation as a note."""
    folder = tmp_path / "export"
    folder.mkdir()
    convs = [
        _with_regeneration(
            _conversation("c1", "Soup", [("user", "lentil soup?"), ("assistant", "add cumin")]),
            "DISCARDED add chalk",
        ),
        _conversation("c2", "Bikes", [("user", "squeaky chain"), ("assistant", "oil it")]),
    ]
    _write(folder / "conversations.json", convs)
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([folder])
        units = [u for d in c.store.documents_of_root(c.store.roots()[0].id)
                 for u in c.store.units_of(d.id)]
        assert any("DISCARDED" in u.body for u in units)  # kept in the index, marked
        okf = c.export.write("okf", tmp_path / "okf")
        vault = c.export.write("obsidian", tmp_path / "vault")
    for rep, out in ((okf, tmp_path / "okf"), (vault, tmp_path / "vault")):
        notes = [p for p in out.rglob("*.md") if p.name not in ("index.md", "log.md")]
        assert len(notes) == 2, (out, notes)
        text = "\n".join(p.read_text() for p in notes)
        assert "add cumin" in text and "oil it" in text and "squeaky chain" in text
        assert "DISCARDED" not in text
        assert [s.reason for s in rep.skipped] == [
            "1 alternate messages (regenerations, edits) off the live branch: not exported"
        ]
    assert vault.documents == 2
