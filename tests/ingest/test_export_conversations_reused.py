"""Re-indexing a newer chat export builds only the conversations whose text changed.

A conversation is recognised by a digest of its text in the file (and of the parser);
an unchanged one is not parsed, redacted nor rewritten. What the index holds after an
edit is what a cold index of the new file holds: reordered, inserted, deleted and
edited conversations, and id-less conversations named after their place in the file.
A later copy of a reused conversation is still a duplicate, and an export that breaks
off keeps the conversations after the break."""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from cairn.app import Cairn

ROOT = Path(__file__).resolve().parents[2]
_STEP = [0.0]


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_chats", ROOT / "bench" / "gen_chats.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(path: Path, data: str | bytes) -> None:
    """Write ``data`` with an mtime later than any before (a new version of the file)."""
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    _STEP[0] += 10
    t = time.time() + _STEP[0]
    os.utime(path, (t, t))


def _dump(c: Cairn) -> list[Any]:
    """Everything stored of the documents and units, ids included, in a fixed order."""
    db = c.store.db  # type: ignore[attr-defined]
    docs = db.execute(
        "SELECT id, path, format, title, content_hash, metadata FROM documents ORDER BY id"
    ).fetchall()
    units = db.execute(
        "SELECT id, document_id, ordinal, kind, title, body, parent_id FROM units "
        "ORDER BY document_id, ordinal"
    ).fetchall()
    return [list(map(tuple, docs)), list(map(tuple, units))]


def _rowids(c: Cairn) -> dict[str, list[int]]:
    db = c.store.db  # type: ignore[attr-defined]
    out: dict[str, list[int]] = {}
    for doc, rowid in db.execute("SELECT document_id, rowid FROM units ORDER BY rowid"):
        out.setdefault(str(doc), []).append(int(rowid))
    return out


def _messages(run: Any) -> str:
    return "\n".join(w.message for w in run.warnings)


def test_one_edited_conversation_is_the_only_one_parsed_and_rewritten(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    gen = _gen()
    gen.write_export(folder / "conversations.json", 20, seed=3)
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([folder], embed=False)
        before = _rowids(c)
        edited = gen.write_export(tmp_path / "edited.json", 20, seed=3, retitle=7)
        _write(folder / "conversations.json", edited.read_text("utf-8"))
        run = c.index([folder], embed=False)
        after = _rowids(c)
    assert run.changed == 1
    text = _messages(run)
    assert "1 of 20 documents changed" in text
    assert "(19 recognised unchanged without being parsed)" in text
    # the 19 others keep their rows; the edited one was written again
    assert sum(before[d] == after.get(d) for d in before) == 19
    assert len(after) == 20


def _linear(i: int) -> dict[str, Any]:
    """A Chatbot UI style conversation without an id: its key comes from its place."""
    return {"name": f"chat {i}", "messages": [
        {"role": "user", "content": f"question number {i} about lentils"},
        {"role": "assistant", "content": f"answer number {i}: add cumin"},
    ]}


def _chatgpt(n: int) -> list[dict[str, Any]]:
    return list(_gen().conversations(n, seed=11))


def test_an_edited_export_indexes_as_a_cold_index_of_it_would(tmp_path: Path) -> None:
    chatgpt = _chatgpt(6)
    renamed = {**chatgpt[4], "title": "Renamed"}
    versions = {
        "chatgpt": [
            chatgpt[:5],
            [chatgpt[3], chatgpt[0], chatgpt[1], chatgpt[2], chatgpt[4]],  # reordered
            [chatgpt[5], chatgpt[3], chatgpt[0], chatgpt[2], renamed],  # new, gone, edited
        ],
        "linear": [
            [_linear(i) for i in range(4)],
            [_linear(9), *(_linear(i) for i in range(4))],  # every place moves by one
            [_linear(9), _linear(0), _linear(2), _linear(3)],
        ],
    }
    for name, exports in versions.items():
        folder = tmp_path / name
        folder.mkdir()
        with Cairn.open(db=tmp_path / f"{name}.db") as c:
            for step, convs in enumerate(exports):
                text = json.dumps(convs)
                _write(folder / "conversations.json", text)
                c.index([folder], embed=False)
                cold_folder = tmp_path / f"{name}-cold-{step}" / name
                cold_folder.mkdir(parents=True)
                (cold_folder / "conversations.json").write_text(text, encoding="utf-8")
                with Cairn.open(db=cold_folder.parent / "cold.db") as cold:
                    cold.index([cold_folder], embed=False)
                    expected = _dump(cold)
                got = _dump(c)
                # the same documents and units under the same ids, but another root
                assert [d[1:] for d in got[0]] == [d[1:] for d in expected[0]], (name, step)
                assert [u[2:] for u in got[1]] == [u[2:] for u in expected[1]], (name, step)
                assert len(got[0]) == len(convs)


def test_a_changed_copy_of_an_unchanged_conversation_is_still_a_duplicate(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    convs = _chatgpt(2)
    _write(folder / "conversations.json", json.dumps(convs))
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([folder], embed=False)
        before = _dump(c)
        for copy in ({**convs[0], "title": "Another title"}, convs[0]):
            _write(folder / "conversations.json", json.dumps([*convs, copy]))
            run = c.index([folder], embed=False)
            assert _dump(c) == before
            assert "the same conversation id appears earlier in this export" in _messages(run)


def test_an_export_that_breaks_off_keeps_the_conversations_after_the_break(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    convs = _chatgpt(4)
    text = json.dumps(convs)
    _write(folder / "conversations.json", text)
    (folder / "note.md").write_text("# Note\n\nlentil soup\n", encoding="utf-8")
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([folder], embed=False)
        before = _dump(c)
        assert len(before[0]) == 5
        # a download cut short: the file ends inside the third conversation
        cut = text.index(json.dumps(convs[2])) + 200
        _write(folder / "conversations.json", text[:cut])
        run = c.index([folder], embed=False)
        partly = [w for w in run.warnings if w.message.startswith("partly indexed")]
        assert partly and partly[0].path == "conversations.json"
        assert "truncated JSON" in partly[0].message
        assert _dump(c) == before  # nothing indexed is lost


def test_a_zipped_export_reuses_its_unchanged_conversations_too(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    gen = _gen()
    gen.write_export(folder / "chatgpt.zip", 8, seed=2, zipped=True)
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([folder], embed=False)
        edited = gen.write_export(tmp_path / "edited.zip", 8, seed=2, zipped=True, retitle=3)
        _write(folder / "chatgpt.zip", edited.read_bytes())
        run = c.index([folder], embed=False)
        titles = {str(r[0]) for r in c.store.db.execute(  # type: ignore[attr-defined]
            "SELECT title FROM documents")}
    text = _messages(run)
    assert "1 of 8 documents changed" in text
    assert "(7 recognised unchanged without being parsed)" in text
    assert "A title changed by the benchmark" in titles and len(titles) == 8


def test_the_plain_index_output_says_how_many_were_recognised_unchanged(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from cairn.interfaces.cli import app

    folder = tmp_path / "export"
    folder.mkdir()
    gen = _gen()
    gen.write_export(folder / "conversations.json", 6, seed=5)
    db = str(tmp_path / "i.db")
    first = CliRunner().invoke(app, ["index", str(folder), "--db", db, "--no-embed", "-q"])
    assert first.exit_code == 0, first.output
    edited = gen.write_export(tmp_path / "edited.json", 6, seed=5, retitle=2)
    _write(folder / "conversations.json", edited.read_text("utf-8"))
    res = CliRunner().invoke(app, ["index", str(folder), "--db", db, "--no-embed", "-q"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert ("conversations.json: 1 of 6 documents changed; the rest kept as indexed "
            "(5 recognised unchanged without being parsed)") in text
