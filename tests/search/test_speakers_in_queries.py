"""A query word naming a chat message's speaker raises that speaker's messages in
hybrid results, shown as the summand ``matched speaker <name>``; a role names no one,
and notes are left as they are."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pytest
from _sessions import chat_session

from cairn.app import Cairn
from cairn.config import load_config
from cairn.search.fusion import Fused
from cairn.search.query import parse_query
from cairn.search.speakers import SPEAKER_BOOST, boost_speakers

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



@pytest.mark.parametrize("position", [3, 55])
def test_a_looked_up_turn_gains_its_speaker_wherever_it_is_ranked(
    tmp_path: Path, position: int
) -> None:
    # rank_turns looks up the first 50 results and the turns answering a question among
    # them, which may rank lower: every looked-up turn whose speaker the query names gains
    with _index(tmp_path) as c:
        con = sqlite3.connect(tmp_path / "i.db")
        try:
            (melanie,) = con.execute(
                "SELECT id FROM units WHERE kind = 'message' AND title LIKE 'Melanie%' "
                "ORDER BY ordinal LIMIT 1").fetchone()
        finally:
            con.close()
        turns = c.store.hit_units([melanie])
    keys = [f"other{i}" for i in range(60)]
    keys[position] = melanie
    fused = [Fused(k, 1.0 - i / 100, {"rrf": 1.0 - i / 100}, {}, {}) for i, k in enumerate(keys)]
    tq = parse_query("When did Melanie go camping?").for_store()
    out = {f.key: f for f in boost_speakers(tq, fused, turns)}
    assert out[melanie].summands["matched speaker Melanie"] == pytest.approx(SPEAKER_BOOST)
    assert all(not any(k.startswith("matched") for k in f.summands)
               for key, f in out.items() if key != melanie)
