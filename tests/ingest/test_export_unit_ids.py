"""Unit ids inside a streamed chat export: a message id that an earlier conversation of
the same export already holds gives the later message a path-based id (ids stay
unique), and ids are the same whether the export is indexed fresh or after a change.
The check needs no set of every unit id of the export: the earlier conversations are
already in the index, where their ids are looked up."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from cairn.app import Cairn
from cairn.config import Config

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gen_chats.py"


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_chats", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _first_message(conv: dict[str, object]) -> str:
    mapping = conv["mapping"]
    assert isinstance(mapping, dict)
    return next(k for k, n in mapping.items()
                if n.get("message") and n["message"]["author"]["role"] == "user")


def _ids(c: Cairn) -> dict[str, list[str]]:
    db = c.store.db  # type: ignore[attr-defined]
    out: dict[str, list[str]] = {}
    for doc, uid in db.execute("SELECT document_id, id FROM units ORDER BY document_id, ordinal"):
        out.setdefault(str(doc), []).append(str(uid))
    return out


def test_a_message_id_reused_across_conversations_gets_a_path_based_id(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    convs = list(_gen().conversations(4, seed=3))
    taken = _first_message(convs[0])
    reused = _first_message(convs[1])  # the second conversation reuses the first's id
    convs[1] = json.loads(json.dumps(convs[1]).replace(reused, taken))
    root = tmp_path / "chats"
    root.mkdir()
    export = root / "conversations.json"
    export.write_text(json.dumps(convs), encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "a.db")) as c:
        c.index([root])
        first = _ids(c)
        every = [u for units in first.values() for u in units]
        assert len(first) == 4 and len(every) == len(set(every))
        assert taken in every  # the first holder keeps the declared id, once
        # a change to the last conversation: the others are kept, their ids too
        convs[3]["title"] = "Renamed"
        export.write_text(json.dumps(convs), encoding="utf-8")
        run = c.index([root])
        after = _ids(c)
        renamed = str(convs[3].get("conversation_id") or convs[3]["id"])
        assert {d: u for d, u in after.items() if d != renamed} == {
            d: u for d, u in first.items() if d != renamed}
        assert "1 of 4 documents changed" in " ".join(w.message for w in run.warnings)
    with Cairn(Config(db_path=tmp_path / "b.db")) as fresh:  # the same ids from scratch
        fresh.index([root])
        assert _ids(fresh) == after
