"""Snippets and their highlight offsets."""

from __future__ import annotations

from cairn.search.query import parse_query
from cairn.search.snippet import make_snippet, term_patterns


def _marked(text: str, query: str, width: int = 180) -> list[str]:
    snippet, spans = make_snippet(text, term_patterns(parse_query(query).positive), width=width)
    return [snippet[a:b] for a, b in spans]


def test_literal_brackets_stay_and_offsets_mark_matches() -> None:
    text = 'x.split(" ")[0] and [link=http://x]l[/link] plus the split'
    snippet, spans = make_snippet(text, term_patterns(parse_query("split").positive))
    assert snippet == text
    assert [snippet[a:b] for a, b in spans] == ["split", "split"]


def test_short_words_match_whole_and_stems_match_variants() -> None:
    assert _marked("Don't Stop Pretraining: Adapt to Domains and Tasks", "don't") == ["Don't"]
    assert _marked("They then theorised results", "the") == []  # no whole word "the"
    assert _marked("Composting and composted compost", "composting") == [
        "Composting",
        "composted",
        "compost",
    ]
    assert _marked("the state of the art, not the state", "state-of-the-art") == [
        "state of the art"
    ]


def test_function_words_are_not_highlighted_beside_content_words() -> None:
    assert _marked("how to schedule a task in the agenda", "how to schedule a task") == [
        "schedule",
        "task",
    ]


def test_cjk_runs_and_latin_next_to_them() -> None:
    assert _marked("PublishのCSSの扱い方。見出しのサイズを変える", "見出しのサイズ") == [
        "見出しのサイズ"
    ]
    assert _marked("HeadlessのF使用例", "headless") == ["Headless"]


def test_the_window_holds_the_best_cluster() -> None:
    text = "alpha " + "filler " * 60 + "beta gamma beta gamma"
    snippet, spans = make_snippet(text, term_patterns(parse_query("beta gamma").positive), width=40)
    assert snippet.startswith("…") and "beta gamma beta gamma" in snippet
    assert len(spans) == 4


def test_no_match_gives_the_start() -> None:
    assert make_snippet("one two three", term_patterns(parse_query("zzz").positive)) == (
        "one two three",
        (),
    )
