"""The query language: parsing, the SQLite store's FTS5 escaping of a parsed query,
and that no text ever raises."""

from __future__ import annotations

import sqlite3
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.search.query import Query, fts_tokens, parse_query
from cairn.store.sqlite.fts import fts_match


def to_fts(query: Query) -> str | None:
    """The MATCH expression the SQLite store runs for a parsed query."""
    return fts_match(query.for_store())


def test_words_are_quoted_and_ored() -> None:
    q = parse_query("garden compost")
    assert to_fts(q) == '"garden" OR "compost"'


def test_function_words_are_dropped_only_beside_content_words() -> None:
    assert to_fts(parse_query("how do I schedule a task")) == '"schedule" OR "task"'
    assert to_fts(parse_query("the")) == '"the"'
    assert to_fts(parse_query("to be or not")) == '"not"'
    assert to_fts(parse_query('"the art" of')) == '"the art"'


def test_hyphenated_and_punctuated_words_become_phrases() -> None:
    assert to_fts(parse_query("BENCH-100821")) == '"BENCH 100821"'
    assert to_fts(parse_query("path/to/file.toml")) == '"path to file toml"'
    assert to_fts(parse_query("C++")) == '"Cplusplus"'
    assert to_fts(parse_query("F#")) == '"Fsharp"'
    assert to_fts(parse_query("don't")) == '"don t"'


def test_operators_and_syntax_are_plain_words() -> None:
    assert to_fts(parse_query("AND")) == '"AND"'
    assert to_fts(parse_query("NEAR")) == '"NEAR"'
    assert to_fts(parse_query("*")) is None
    assert to_fts(parse_query('"unbalanced')) == '"unbalanced"'
    assert to_fts(parse_query('""')) is None
    assert parse_query("   ").is_empty


def test_phrases_exclusions_and_filters() -> None:
    q = parse_query('"side shoots" -aphids tag:garden -todo:DONE prop:OWNER=Sam foo:bar')
    assert to_fts(q) == '("side shoots" OR "foo" OR "bar") NOT ("aphids")'
    fields = [(f.field, f.value, f.key, f.negate) for f in q.filters]
    assert fields == [
        ("tag", "garden", None, False),
        ("todo", "DONE", None, True),
        ("prop", "Sam", "OWNER", False),
    ]


def test_a_word_that_looks_like_an_unknown_filter_is_searched_as_words() -> None:
    q = parse_query("title:Login")
    assert to_fts(q) == '"title" OR "Login"'
    assert any("searched as words" in n for n in q.notes)
    assert to_fts(parse_query("https://example.org/x")) == '"https example org x"'


def test_cjk_runs_become_bigram_phrases() -> None:
    assert to_fts(parse_query("全文検索")) == 'cjk : "全文 文検 検索"'
    assert to_fts(parse_query("京")) == 'cjk : "京"'


def test_quoted_filter_values_hold_spaces() -> None:
    q = parse_query('type:"BigQuery Table" prop:OWNER="Sam Lee" -path:"a b/" word')
    assert [(f.field, f.key, f.value, f.negate) for f in q.filters] == [
        ("type", None, "BigQuery Table", False),
        ("prop", "OWNER", "Sam Lee", False),
        ("path", None, "a b/", True),
    ]
    assert to_fts(q) == '"word"'


def test_text_is_normalised_like_the_index() -> None:
    nfd = "ガイド".encode().decode()  # composed here; NFD below
    import unicodedata

    assert to_fts(parse_query(unicodedata.normalize("NFD", nfd))) == to_fts(parse_query(nfd))
    assert to_fts(parse_query("ＰＹＴＨＯＮ")) == '"PYTHON"'
    assert to_fts(parse_query("CSSはHTML")) == '("CSS" AND "HTML" AND cjk : "は")'


def test_bad_dates_are_noted_not_raised() -> None:
    q = parse_query("after:yesterday before:2024-05")
    assert [f.field for f in q.filters] == ["before"]
    assert q.notes and "after" in q.notes[0]


def test_tokens_match_unicode61() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61 remove_diacritics 0')")
    text = "Crème brûlée — ÉCOLE_42 x+y 3.14 naïve"
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.execute("INSERT INTO t(x) VALUES (?)", (text,))
    theirs = [r[0] for r in db.execute("SELECT term FROM v ORDER BY offset")]
    assert [t.casefold() for t in fts_tokens(text)] == theirs


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=60))
def test_any_text_gives_a_valid_match_expression(text: str) -> None:
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE units_fts USING fts5(title, outline_path, tags, body, cjk, "
        "tokenize = 'porter unicode61 remove_diacritics 2')"
    )
    db.execute("INSERT INTO units_fts VALUES ('a', 'b', 'c', 'hello world', '')")
    expr = to_fts(parse_query(text))
    if expr is not None:
        db.execute("SELECT rowid FROM units_fts WHERE units_fts MATCH ?", (expr,)).fetchall()


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list('ab "-:*^()+.,/\\\'#@%_~京都😀é\t\nNEARANDORNOT'))
        | st.characters(),
        max_size=40,
    )
)
def test_any_text_searches_a_real_index_without_error(text: str) -> None:
    hits = _searcher().search(text).hits
    assert all(h.unit_id for h in hits)


_CACHE: dict[str, Any] = {}


def _searcher() -> Any:
    """One small real index shared by the property test's examples."""
    if "c" not in _CACHE:
        import tempfile
        from pathlib import Path

        from cairn.app import Cairn

        tmp = Path(tempfile.mkdtemp())
        (tmp / "notes").mkdir()
        (tmp / "notes" / "a.txt").write_text("C++ and ab: the 京都 note, NEAR and far\n")
        (tmp / "notes" / "b.txt").write_text("Another note about -draft tags #x\n")
        c = Cairn.open(db=tmp / "i.db")
        c.index([tmp / "notes"])
        _CACHE["c"] = c
    return _CACHE["c"]
