"""``( … OR … )`` groups of the query language: how they parse, the FTS5 they become,
what they match in a real index (keyword, semantic and hybrid), and the notes that
name unbalanced parentheses."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.search.query import MAX_DEPTH, MAX_TERMS, parse_query
from cairn.store.sqlite.fts import fts_match


def to_fts(text: str) -> str | None:
    return fts_match(parse_query(text).for_store())


def test_a_group_is_and_within_and_or_between_alternatives() -> None:
    assert to_fts("(python venv OR conda)") == '(("python" AND "venv") OR "conda")'
    assert to_fts("(python AND venv)") == '("python" AND "venv")'
    assert to_fts('(a -b OR "c d" e) f') == '(("a" NOT ("b")) OR ("c d" AND "e")) OR "f"'
    assert to_fts("((a OR b) c OR d)") == '((("a" OR "b") AND "c") OR "d")'
    assert to_fts("-(a OR b) c") == '("c") NOT (("a" OR "b"))'
    assert to_fts("(全文 OR x)") == '(cjk : "全文" OR "x")'
    # function words go beside a content word, inside a group as outside
    assert to_fts("(the cat OR a dog)") == '("cat" OR "dog")'
    # lower-case or/and are words; OR outside a group is a word too (as before)
    assert to_fts("(cats or dogs)") == '("cats" AND "dogs")'
    assert to_fts("AND") == '"AND"'


def test_a_group_of_one_term_is_that_term() -> None:
    assert parse_query("(x)").terms == parse_query("x").terms
    assert parse_query("((x))").terms == parse_query("x").terms
    assert parse_query("-(x)").terms == parse_query("-x").terms
    assert to_fts("f(x)") == '"f x"'  # parentheses inside a word stay part of it
    assert to_fts("foo(a, b)") == '"foo a" OR "b"'


def test_must_and_must_not_groups() -> None:
    q = parse_query("+(python venv OR conda) install")
    (f,) = q.filters
    assert f.field == "match" and f.term is not None and f.term.group
    assert f.value == "python venv conda"
    assert to_fts("+(python venv OR conda) install") == (
        '(("python" AND "venv") OR "conda") OR "install"'
    )
    (single,) = parse_query("+(venv)").filters
    assert (single.field, single.value, single.term) == ("match", "venv", None)
    assert [t.text for t in q.positive] == ["python venv conda", "install"]
    assert q.words == ["python", "venv", "conda", "install"]


def test_unbalanced_parentheses_are_named_in_notes() -> None:
    q = parse_query("(python OR venv")
    assert q.notes == ("the '(' at character 1 is not closed; closed at the end of the query",)
    assert to_fts("(python OR venv") == '("python" OR "venv")'
    q = parse_query("a (b (c")
    assert "characters 3, 6 are not closed" in q.notes[0]
    q = parse_query("python venv)")
    assert q.notes == ("the ')' at character 12 closes no '('; ignored",)
    assert to_fts("python venv)") == '"python" OR "venv"'
    assert parse_query(") x").notes == ("the ')' at character 1 closes no '('; ignored",)
    assert parse_query("()").notes == ("the empty group at character 1 is ignored",)
    q = parse_query("(-a OR b)")
    assert "only excludes words" in q.notes[0] and to_fts("(-a OR b)") == '"b"'
    q = parse_query("(tag:work OR budget)")
    assert not q.filters and "filters apply to the whole query" in q.notes[0]
    q = parse_query("(" * 50 + "x" + ")" * 50)
    assert f"at most {MAX_DEPTH} deep" in q.notes[0] and len(q.notes) == 1
    assert to_fts("(" * 50 + "x" + ")" * 50) == '"x"'


def test_words_in_groups_count_against_the_bound() -> None:
    q = parse_query("(" + " OR ".join(f"w{i}" for i in range(MAX_TERMS + 8)) + ")")
    (group,) = q.terms
    assert len(group.leaves()) == MAX_TERMS
    assert any(f"first {MAX_TERMS} of {MAX_TERMS + 8}" in n for n in q.notes)


@pytest.mark.parametrize(
    "text",
    ["(", ")", "((((", "))))", "(a OR", "OR)", "( OR )", "-(", "+()", "(-)", '("a" OR "b',
     "(a (b OR (c -d)) OR e) -(f g)", "(NEAR OR *)", '("" OR "")', "(-(-x))"],
)
def test_any_group_text_is_valid_fts5(text: str) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(title, outline_path, tags, body, cjk, meta)")
    expr = to_fts(text)
    if expr is not None:
        db.execute("SELECT * FROM t WHERE t MATCH ?", (expr,)).fetchall()
    for f in parse_query(text).filters:
        assert f.term is None or f.term.searchable


NOTES = {
    "venv.md": "# Python venv\n\nActivate the python venv before you install.\n",
    "conda.md": "# Conda\n\nA conda environment is another way to install packages.\n",
    "snake.md": "# Snakes\n\nA python is a snake; pythons do not install anything.\n",
    "pip.md": "# Pip\n\nPip installs packages into the active environment.\n",
}


@pytest.fixture(scope="module")
def cairn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cairn]:
    """The notes indexed, with vectors of the shipped static model."""
    pytest.importorskip("model2vec")
    from cairn.embed.static import StaticEmbedder
    from cairn.ingest.embedding import embed_pass

    root = tmp_path_factory.mktemp("groups")
    notes = root / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    static = StaticEmbedder()
    c = Cairn(Config(db_path=root / "i.db"), embedder=static)
    c.index([notes])
    embed_pass(c.store, static)
    yield c
    c.close()


def _files(c: Cairn, text: str, mode: str = "keyword") -> set[str]:
    res = c.search(text, mode=mode, limit=20)
    assert not any("unavailable" in n for n in res.notes), res.notes
    return {Path(h.path).name for h in res.hits}


def test_groups_match_in_a_real_index(cairn: Cairn) -> None:
    assert _files(cairn, "(python venv OR conda)") == {"venv.md", "conda.md"}
    assert _files(cairn, "(python -snake OR pip)") == {"venv.md", "pip.md"}
    assert _files(cairn, "install -(snake OR conda)") == {"venv.md", "pip.md"}
    assert _files(cairn, "+(conda OR pip) install") == {"conda.md", "pip.md"}
    assert _files(cairn, "((python OR conda) install -snake)") == {"venv.md", "conda.md"}
    res = cairn.search("(python venv OR conda", mode="keyword")
    assert any("not closed" in n for n in res.notes)
    assert {Path(h.path).name for h in res.hits} == {"venv.md", "conda.md"}


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_groups_filter_and_exclude_in_every_mode(cairn: Cairn, mode: str) -> None:
    assert _files(cairn, "+(conda OR pip) packages", mode) == {"conda.md", "pip.md"}
    assert "snake.md" not in _files(cairn, "python -(snake OR pythons)", mode)
    assert "conda.md" not in _files(cairn, "environment -(conda)", mode)


def test_a_group_is_highlighted_and_explained(cairn: Cairn) -> None:
    res = cairn.search("(activate venv OR conda)", mode="keyword", explain=True)
    venv = next(h for h in res.hits if h.path.endswith("venv.md"))
    marked = {venv.snippet[a:b].casefold() for a, b in venv.highlights}
    assert {"activate", "venv"} <= marked
