"""A query word naming a chat message's speaker raises that speaker's messages in
hybrid results, shown as the summand ``matched speaker <name>``; a role names no one,
and notes are left as they are."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from _sessions import chat_session

from cairn.app import Cairn
from cairn.config import load_config
from cairn.search.speakers import SPEAKER_BOOST

pytestmark = pytest.mark.embed  # hybrid needs vectors: the shipped model embeds


TURNS = [
    ("Caroline", "The support group met on Tuesday evening at the community centre."),
    ("Melanie", "My pottery class met on Tuesday evening too, at the art school."),
    ("Caroline", "I spent the weekend camping by the lake with friends."),
    ("Melanie", "We went camping by the lake last summer with the kids."),
]


def _index(tmp_path: Path, named: bool = True) -> Cairn:
    folder = tmp_path / "chats"
    folder.mkdir()
    (folder / "s1.json").write_text(
        json.dumps(chat_session("s1", "2023-06-27T10:00:00Z", TURNS, named)), encoding="utf-8")
    (folder / "camping.md").write_text("# Camping\n\nCamping by the lake: tents, kids, "
                                       "friends.\n", encoding="utf-8")
    cairn = Cairn(load_config(db=tmp_path / "i.db"))
    cairn.index([folder])
    return cairn


def test_a_query_naming_a_speaker_raises_their_messages(tmp_path: Path) -> None:
    with _index(tmp_path) as c:
        res = c.search("Did Caroline go camping by the lake?", limit=10, explain=True)
        assert res.hits[0].explain["mode"] == "hybrid"
        messages = [h for h in res.hits if h.kind == "message"]
        assert messages[0].title.startswith("Caroline"), [h.title for h in messages]
        key = "matched speaker Caroline"
        for h in res.hits:
            summands = h.explain["summands"]
            if h.kind == "message" and h.title.startswith("Caroline"):
                assert summands[key] > 0
            else:
                assert not any(k.startswith("matched speaker") for k in summands), h.title
            assert math.fsum(summands.values()) == pytest.approx(h.score, abs=1e-15)
        # the gain is a share of the best fused score before any gain was added
        before = max(h.score - h.explain["summands"].get(key, 0.0) for h in res.hits)
        gain = messages[0].explain["summands"][key]
        assert gain == pytest.approx(SPEAKER_BOOST * before, rel=1e-6)


def test_a_role_names_no_one(tmp_path: Path) -> None:
    """Messages with a role and no name (``user``/``assistant``) have no speaker: the
    query word ``user`` raises nothing."""
    with _index(tmp_path, named=False) as c:
        res = c.search("what did the user say about camping", limit=10, explain=True)
        assert res.hits
        assert not any(k.startswith("matched speaker")
                       for h in res.hits for k in h.explain["summands"])
