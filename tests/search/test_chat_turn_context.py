"""Chat turns ranked as turns of a conversation: the turn before or after a turn is its
context (an answer that repeats none of the question's words is found by the question
it answers), and a query naming a speaker prefers what that speaker said over what was
said to them. Notes are ranked as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _sessions import chat_session

from cairn.app import Cairn
from cairn.config import load_config
from cairn.search.turns import speaker

SESSIONS = [
    chat_session("s1", "2023-06-27T10:00:00Z", [
        ("Caroline", "Hi Mel!"),
        ("Melanie", "Hi Caroline! What kind of counseling do you want to pursue?"),
        ("Caroline", "I'm thinking of working with trans people, helping them accept "
                     "themselves and supporting their mental health."),
        ("Caroline", "Sounds good."),
        ("Melanie", "Thanks!"),
    ]),
    chat_session("s2", "2023-07-03T10:00:00Z", [
        ("Caroline", "I went hiking."),
        ("Melanie", "Last year I painted a lake sunrise, early in the morning by the "
                    "water, on a quiet weekend away with the kids."),
        ("Caroline", "So nice."),
        ("Caroline", "Yes."),
        ("Caroline", "Melanie, I love what you paint, your paintings are great!"),
    ]),
]


def _index(tmp_path: Path, more: tuple[dict[str, Any], ...] = ()) -> Cairn:
    folder = tmp_path / "chats"
    folder.mkdir()
    for s in (*SESSIONS, *more):
        (folder / f"{s['id']}.json").write_text(json.dumps(s), encoding="utf-8")
    (folder / "note.md").write_text("# Counseling\n\nNotes on counseling and painting.\n",
                                    encoding="utf-8")
    cairn = Cairn(load_config(db=tmp_path / "i.db"))
    cairn.index([folder])
    return cairn


def test_an_answer_is_found_by_the_question_before_it(tmp_path: Path) -> None:
    with _index(tmp_path) as c:
        hits = c.search("What counseling does Caroline want to pursue?", mode="keyword",
                        limit=10).hits
        snippets = [h.snippet for h in hits if h.kind == "message"]
        answer = next(i for i, s in enumerate(snippets) if "trans people" in s)
        # the question itself matches best; its answer is among the next two (with the
        # greeting before the question), above Caroline's short turns elsewhere that
        # only her name matches
        assert "What kind of counseling" in snippets[0], snippets
        assert answer <= 2, snippets
        assert answer < min(snippets.index("Yes."), snippets.index("So nice.")), snippets


def test_a_named_speaker_s_own_words_come_first(tmp_path: Path) -> None:
    with _index(tmp_path) as c:
        hits = c.search("What did Melanie paint?", mode="keyword", limit=5).hits
        assert "lake sunrise" in hits[0].snippet, [h.snippet for h in hits]


def test_notes_and_filters_are_ranked_as_before(tmp_path: Path) -> None:
    with _index(tmp_path) as c:
        hits = c.search("counseling painting", mode="keyword", limit=10).hits
        assert hits[0].path.endswith("note.md"), [h.path for h in hits]
        only = c.search("format:markdown", mode="keyword", limit=10).hits
        assert [h.path for h in only] == [hits[0].path]


def test_speaker_from_title() -> None:
    assert speaker("Caroline · 2023-05-08 13:56") == "Caroline"
    assert speaker("user · message 3") == ""
    assert speaker("Assistant · 2024-01-01 10:00") == ""


def test_a_title_only_preamble_s_lookup_stays_shallow(tmp_path: Path) -> None:
    """A conversation whose title matches (a title-only preamble) while its matching
    turn ranks beyond the list: finding that turn reads two units, not the deep list
    turns are weighed in (that made each such query read 100 units per session)."""
    talk = chat_session("s3", "2023-08-01T10:00:00Z", [
        ("Caroline", "We talked for hours about glazes, kilns, wheels, clay bodies and "
                     "the pottery studio downtown that opened a new evening class."),
    ])
    talk["name"] = "Pottery"
    other = chat_session("s4", "2023-08-02T10:00:00Z", [("Melanie", "Pottery!")] * 14)
    with _index(tmp_path, (talk, other)) as c:
        limits: list[tuple[int, bool]] = []
        real = c.store.search_text
        real_best = c.store.best_in_documents

        def recording(tq: Any, limit: int, **kw: Any) -> list[tuple[str, float]]:
            limits.append((limit, any(f.field == "id" for f in tq.filters)))
            return real(tq, limit=limit, **kw)

        def best(tq: Any, docs: Any, per_document: int, **kw: Any) -> dict[str, list[str]]:
            limits.append((per_document, True))
            return real_best(tq, docs, per_document=per_document, **kw)

        c.store.search_text = recording  # type: ignore[method-assign]
        c.store.best_in_documents = best  # type: ignore[method-assign]
        hits = c.search("pottery", mode="keyword", limit=1).hits
        lookups = [n for n, by_id in limits if by_id]
        assert lookups and all(n == 2 for n in lookups), limits
        assert hits[0].kind != "preamble" and "pottery" in hits[0].snippet.lower()
