"""``--explain`` names the conversation terms inside a chat message's keyword score: the
turn's own ``bm25``, the ``context neighbouring turn`` term and the ``speaker <name>``
term (:mod:`cairn.search.turns`), as ``keyword.parts`` adding up to the keyword raw
score. Explaining changes neither the hits nor their scores."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _sessions import chat_session

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.web.explain import explain_rows
from cairn.model import Hit

SESSION = chat_session("s1", "2023-07-03T10:00:00Z", [
    ("Caroline", "I went hiking."),
    ("Melanie", "Last year I painted a lake sunrise, early in the morning by the water."),
    ("Caroline", "So nice. Did you paint it at the lake?"),
    ("Melanie", "Yes, I paint outside when I can."),
    ("Caroline", "Melanie, I love what you paint, your paintings are great!"),
])


def _chat_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "chats"
    folder.mkdir()
    (folder / "s1.json").write_text(json.dumps(SESSION), encoding="utf-8")
    (folder / "note.md").write_text("# Painting\n\nNotes on painting a lake.\n",
                                    encoding="utf-8")
    return folder


def _index(tmp_path: Path, folder: Path) -> Cairn:
    cairn = Cairn(load_config(db=tmp_path / "i.db"))
    cairn.index([folder])
    return cairn


def _parts_add_up(h: Hit) -> bool:
    kw = h.explain["keyword"]
    total = math.fsum(kw["parts"].values())
    return abs(total - kw["bm25"]) <= 1e-9 * max(1.0, abs(kw["bm25"]))


def _same_with_and_without_explain(c: Cairn, query: str, mode: str) -> list[Hit]:
    plain = c.search(query, mode=mode, limit=20).hits
    explained = c.search(query, mode=mode, limit=20, explain=True).hits
    assert [(h.unit_id, h.score) for h in plain] == \
        [(h.unit_id, h.score) for h in explained]
    return list(explained)


def test_a_question_naming_a_speaker_shows_the_speaker_part(tmp_path: Path) -> None:
    with _index(tmp_path, _chat_folder(tmp_path)) as c:
        hits = _same_with_and_without_explain(c, "What did Melanie paint?", "keyword")
        parted = [h for h in hits if "parts" in h.explain.get("keyword", {})]
        melanie = [h for h in parted if h.title.startswith("Melanie")]
        assert melanie, [(h.title, h.explain.get("keyword")) for h in hits]
        for h in melanie:
            parts = h.explain["keyword"]["parts"]
            assert parts["speaker Melanie"] > 0, parts
            assert parts["bm25"] > 0, parts
        # Caroline's turns are not hers: no speaker part, only their neighbours' context
        for h in parted:
            if h.title.startswith("Caroline"):
                assert not any(k.startswith("speaker") for k in h.explain["keyword"]["parts"])
        assert all(_parts_add_up(h) for h in parted)
        # a note has no conversation terms
        assert all("parts" not in h.explain.get("keyword", {})
                   for h in hits if h.kind != "message")


def test_neighbouring_turn_context_is_a_part_of_real_chat_hits(
    tmp_path: Path, corpus: Path
) -> None:
    export = corpus / "chats/librechat/api/server/utils/import/__data__/chatgpt-export.json"
    if not export.is_file():
        pytest.skip("../shared corpus absent")
    folder = tmp_path / "export"
    folder.mkdir()
    shutil.copy(export, folder / export.name)
    with _index(tmp_path, folder) as c:
        parted = []
        for query in ("code", "thanks", "image"):
            hits = _same_with_and_without_explain(c, query, "keyword")
            parted += [h for h in hits if "parts" in h.explain.get("keyword", {})]
        assert parted
        assert all(_parts_add_up(h) for h in parted)
        # roles (user, assistant) name no one: context is what raised these scores
        assert all(set(h.explain["keyword"]["parts"]) == {"bm25", "context neighbouring turn"}
                   for h in parted), [h.explain["keyword"]["parts"] for h in parted]


@pytest.mark.embed
def test_hybrid_explains_the_keyword_parts_without_changing_the_ranking(
    tmp_path: Path,
) -> None:
    with _index(tmp_path, _chat_folder(tmp_path)) as c:
        hits = _same_with_and_without_explain(c, "What did Melanie paint?", "hybrid")
        assert hits[0].explain["mode"] == "hybrid"
        parted = [h for h in hits if "parts" in h.explain.get("keyword", {})]
        assert any("speaker Melanie" in h.explain["keyword"]["parts"] for h in parted)
        assert all(_parts_add_up(h) for h in parted)


def test_the_cli_and_the_web_view_show_the_parts(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    with _index(tmp_path, _chat_folder(tmp_path)):
        pass
    db = tmp_path / "i.db"

    def search(*args: str) -> Any:
        return cli("--db", str(db), "search", "--mode", "keyword", *args,
                   env={"CAIRN_EMBED": "none", "CAIRN_NO_WARM": "1"})

    data = search("--json", "--explain", "What did Melanie paint?").json()
    hits = data["hits"] if isinstance(data, dict) else data
    parts = [h["explain"]["keyword"]["parts"] for h in hits
             if "parts" in h["explain"].get("keyword", {})]
    assert any("speaker Melanie" in p for p in parts), parts
    text = search("--explain", "What did Melanie paint?").stdout
    assert "· speaker Melanie" in text and "· context neighbouring turn" in text, text
    exp = next(h["explain"] for h in hits
               if "speaker Melanie" in h["explain"].get("keyword", {}).get("parts", {}))
    rows = explain_rows(exp)
    assert rows is not None
    names = [r[0] for r in rows["lists"]]
    assert names[0] == "keyword" and "· speaker Melanie" in names, names
