"""The shared keyword-search cases (``../shared/cases/035``, ``037``) on both backends.

Each case's notes are indexed into a real SQLite file and a real PostgreSQL database;
every line of its ``query.txt`` is searched in keyword mode (the mode whose tokenizer
differs between the engines) and each must find the file ``expected.md`` names. The
two backends must also agree on whether each query matches anything.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.store import open_store, open_url

pytestmark = [pytest.mark.postgres, pytest.mark.corpus]

CASES = Path(__file__).resolve().parents[3] / "shared" / "cases"

EXPECT = {
    "035-fts-hyphenated-terms": {
        "BENCH-100821": "notes/order.md",
        "ask-codex": "notes/helper.md",
        "state-of-the-art": "notes/parser.md",
    },
    "037-fts-punctuation-and-quotes": {
        "park.": "notes/park.md",
        "don't": "notes/advice.md",
        "C++": "notes/lang.md",
        "what's the budget, roughly?": "notes/budget.md",
        "ubuntu 20.04": "notes/servers.md",
        "(draft)": "notes/draft.md",
        "path/to/file.toml": "notes/paths.md",
    },
}


def _pair(case: str, tmp_path: Path, pg_url: str) -> tuple[Cairn, Cairn]:
    if not (CASES / case).is_dir():
        pytest.skip(f"{CASES / case} is not beside the clone")
    folder = tmp_path / "in"
    shutil.copytree(CASES / case / "notes", folder / "notes")
    for p in folder.rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    cfg = Config(db_path=tmp_path / "index.db", embed={"provider": "none"})
    lite = Cairn(cfg, store=open_store(tmp_path / "index.db"))
    pg = Cairn(cfg, store=open_url(pg_url))
    for c in (lite, pg):
        c.index([folder])
    return lite, pg


def _paths(c: Cairn, q: str) -> list[str]:
    return [str(h.path) for h in c.search(q, mode="keyword").hits]


@pytest.mark.parametrize("case", sorted(EXPECT))
def test_keyword_cases_on_both_backends(case: str, tmp_path: Path, pg_url: str) -> None:
    lite, pg = _pair(case, tmp_path, pg_url)
    queries = (CASES / case / "query.txt").read_text(encoding="utf-8").split("\n")
    for q in queries:
        got = {name: _paths(c, q) for name, c in (("sqlite", lite), ("postgres", pg))}
        assert bool(got["sqlite"]) == bool(got["postgres"]), (q, got)
        want = EXPECT[case].get(q)
        if want:
            for name, paths in got.items():
                assert want in paths[:3], (name, q, paths)


def test_a_database_made_with_the_english_parser_is_upgraded(tmp_path: Path,
                                                            pg_url: str) -> None:
    """A database as step 5 left it (vectors by the ``english`` configuration over raw
    text) gets step 6 on its next open: vectors, postings and statistics rebuilt, and
    the hyphenated query finds its note."""
    from cairn.store.postgres.steps import PG_COMPONENT, PG_STEPS

    case = "035-fts-hyphenated-terms"
    _, pg = _pair(case, tmp_path, pg_url)
    assert _paths(pg, "BENCH-100821") == ["notes/order.md"]
    raw = pg.store.db.raw  # type: ignore[attr-defined]
    raw.execute("DROP INDEX units_fts_doc")
    raw.execute("ALTER TABLE units_fts DROP COLUMN doc")
    raw.execute("DROP FUNCTION cairn_words(text)")
    raw.execute("DROP TEXT SEARCH CONFIGURATION cairn_fts")
    raw.execute("DROP TEXT SEARCH DICTIONARY cairn_stem")
    raw.execute(
        "ALTER TABLE units_fts ADD COLUMN doc tsvector GENERATED ALWAYS AS ("
        + " || ".join(f"setweight(to_tsvector('english', {c}), '{w}')" for c, w in
                      (("title", "A"), ("outline_path", "B"), ("tags", "C"), ("meta", "C"),
                       ("body", "D")))
        + " || setweight(to_tsvector('simple', cjk), 'D')) STORED")
    raw.execute("CREATE INDEX units_fts_doc ON units_fts USING gin(doc)")
    raw.execute("UPDATE components SET version = 5 WHERE name = %s", (PG_COMPONENT,))
    pg.close()

    upgraded = Cairn(Config(db_path=tmp_path / "index.db", embed={"provider": "none"}),
                     store=open_url(pg_url))
    raw = upgraded.store.db.raw  # type: ignore[attr-defined]
    version = raw.execute("SELECT version FROM components WHERE name = %s",
                          (PG_COMPONENT,)).fetchone()[0]
    assert version == len(PG_STEPS) == 7  # step 7 (strftime with localtime) runs too
    assert _paths(upgraded, "BENCH-100821") == ["notes/order.md"]
    # postings, lexicon and statistics agree with the rebuilt vectors
    lexemes, units = raw.execute(
        "SELECT coalesce(sum(length(doc)), 0), count(*) FROM units_fts").fetchone()
    assert raw.execute("SELECT count(*) FROM fts_postings").fetchone()[0] == lexemes
    assert raw.execute("SELECT units, lexemes FROM fts_stats").fetchone() == (units, lexemes)
    assert raw.execute("SELECT count(*) FROM fts_lex x WHERE df <> (SELECT count(*) FROM "
                       "fts_postings p WHERE p.lex = x.id)").fetchone()[0] == 0
    # the rewritten table has planner statistics (autovacuum would not give it any)
    assert raw.execute("SELECT count(*) FROM pg_stats WHERE tablename = 'units_fts' "
                       "AND attname = 'doc'").fetchone()[0] == 1
    assert raw.execute("SELECT count(*) FROM fts_lex WHERE lex IN ('-100821', "
                       "'bench-100821')").fetchone()[0] == 0
    upgraded.close()


NOTES = {
    "cafe.md": "# Café in Zürich\n\nThe naïve barista's crème brûlée.\n",
    "mail.md": "# Contact\n\nWrite to user@example.com or see https://example.org/a/b.\n",
    "versions.md": "# Releases\n\nVersion v2.3.1 shipped; the e-mail went out at 10:30.\n",
    "band.md": "# The Who\n\nTo be or not to be, said the band.\n",
    "lang.md": "# Languages\n\nWe write C# and F# here, and a little C++.\n",
}

QUERIES = ("cafe", "café", "zurich", "naive", "creme brulee", "barista", "user@example.com",
           "example", "example.org/a", "v2.3.1", "e-mail", "10:30", "the who",
           "to be or not to be", "not", "C#", "c++", "F#", "baristas")
NO_MATCH = ("2.3", "email")  # "v2", "3", "1" and "e", "mail" are the indexed tokens


def test_words_match_alike_on_both_backends(tmp_path: Path, pg_url: str) -> None:
    """Accents, e-mail addresses, URLs, versions, hyphens, stop words and ``C#``: a
    query finds the same notes on SQLite and on PostgreSQL."""
    folder = tmp_path / "in"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    cfg = Config(db_path=tmp_path / "index.db", embed={"provider": "none"})
    lite = Cairn(cfg, store=open_store(tmp_path / "index.db"))
    pg = Cairn(cfg, store=open_url(pg_url))
    for c in (lite, pg):
        c.index([folder])
    for q in QUERIES:
        a, b = sorted(_paths(lite, q)), sorted(_paths(pg, q))
        assert a == b and a, (q, a, b)
    for q in NO_MATCH:
        assert _paths(lite, q) == _paths(pg, q) == [], q
