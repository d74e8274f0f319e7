"""Metadata is text too: frontmatter keys and values, Org properties, TODO
keywords and tags found by plain words through the ``meta`` column; the old index
upgrades; ``tag:#7``, ``prop:categories=Books`` against ``"[[Books]]"``, one hit for a
document-level property match; the "nearest by meaning" note. Inputs are real files
copied from ``../shared/corpus``."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config, SearchConfig
from cairn.embed.base import Embedder
from cairn.ingest.embedding import embed_pass
from cairn.search.service import NEAREST_BY_MEANING, SearchService, SemanticConfig

os.environ.setdefault("HF_HUB_OFFLINE", "1")

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
KEPANO = CORPUS / "markdown" / "kepano-obsidian"
FILES = {
    "References/Out of Control.md": KEPANO / "References" / "Out of Control.md",
    "References/Blade Runner.md": KEPANO / "References" / "Blade Runner.md",
    "References/The Machine Stops.md": KEPANO / "References" / "The Machine Stops.md",
    "Clippings/Buy wisely.md": KEPANO / "Clippings" / "Buy wisely.md",
    "org/org-issues.org": CORPUS / "org" / "worg" / "org-issues.org",
    "org/property-inheritance.org": CORPUS
    / "org"
    / "org-mode"
    / "testing"
    / "examples"
    / "property-inheritance.org",
}

pytestmark = pytest.mark.corpus


@pytest.fixture(autouse=True)
def _no_embedding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[tuple[Cairn, Path]]:
    if not KEPANO.is_dir():
        pytest.skip("the shared corpus is not here")
    root = tmp_path / "vault"
    for rel, src in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, root / rel)
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        yield cairn, root


def _paths(cairn: Cairn, q: str, **kw: object) -> list[str]:
    return [h.path for h in cairn.search(q, mode="keyword", **kw).hits]  # type: ignore[arg-type]


def test_frontmatter_values_are_searchable_by_plain_words(vault: tuple[Cairn, Path]) -> None:
    cairn, _ = vault
    # the author is a wikilink value ("[[Kevin Kelly]]"), the ISBN a number: neither is in
    # the note's body (Out of Control has no body at all)
    assert _paths(cairn, "Kevin Kelly")[0] == "References/Out of Control.md"
    assert _paths(cairn, "9780201483406") == ["References/Out of Control.md"]
    assert _paths(cairn, "Ridley Scott")[0] == "References/Blade Runner.md"
    # key and value together: "genre sci-fi", and a frontmatter tag
    assert set(_paths(cairn, "Forster")) == {"References/The Machine Stops.md"}
    assert "References/The Machine Stops.md" in _paths(cairn, "to-read")


def test_org_todo_keywords_and_properties_are_searchable(vault: tuple[Cairn, Path]) -> None:
    cairn, _ = vault
    # a property drawer's name and value ("header-args: :var foo=7") are words of its heading
    hits = cairn.search("header-args foo", mode="keyword").hits
    assert hits and hits[0].path == "org/property-inheritance.org"
    assert "overwriting a file-wide property" in [h.title for h in hits]
    hits = cairn.search("TODO Agenda Search", mode="keyword").hits
    assert hits and hits[0].path == "org/org-issues.org" and hits[0].todo == "TODO"


def test_tag_with_hash_sign(vault: tuple[Cairn, Path]) -> None:
    """Org allows '#' in tags: ``:#7:`` in org-issues.org is found by ``tag:#7``."""
    cairn, _ = vault
    hits = cairn.search("tag:#7", mode="keyword").hits
    assert [h.path for h in hits] == ["org/org-issues.org"]
    assert "#7" in hits[0].tags
    assert cairn.search("-tag:#7 agenda", mode="keyword").hits[0].title != hits[0].title


def test_prop_matches_a_wikilink_value_once_per_document(vault: tuple[Cairn, Path]) -> None:
    cairn, _ = vault
    paths = _paths(cairn, "prop:categories=Books", limit=50)
    assert sorted(paths) == ["References/Out of Control.md", "References/The Machine Stops.md"]
    # The Machine Stops has a "Quotes" section too: a document-level match is one hit
    assert len(paths) == len(set(paths))
    # with words, the matching section itself is found
    hits = cairn.search("prop:categories=Books notifications", mode="keyword").hits
    assert [h.title for h in hits] == ["Quotes"]
    # spelled as stored, it matches the same notes
    assert sorted(_paths(cairn, "prop:categories=[[Books]]", limit=50)) == sorted(paths)
    assert "Clippings/Buy wisely.md" in _paths(cairn, "prop:status=Published")


def test_old_index_upgrades_and_fills_meta(tmp_path: Path) -> None:
    """An index made before the ``meta`` column (schema 1) opens, keeps searching, and
    the next index run fills ``meta``."""
    from cairn.store.sql.migrations import MIGRATIONS

    if not KEPANO.is_dir():
        pytest.skip("the shared corpus is not here")
    root = tmp_path / "vault"
    root.mkdir()
    shutil.copyfile(FILES["References/Out of Control.md"], root / "ooc.md")
    (root / "plain.md").write_text("# Plain\n\nemergence of order\n", encoding="utf-8")
    db = tmp_path / "old.db"
    with Cairn(Config(db_path=db)) as cairn:
        cairn.index([root])
    # rebuild it as the index before the meta migration: the FTS table without meta
    before_meta = next(i for i, m in enumerate(MIGRATIONS) if "units_fts_v2" in m)
    con = sqlite3.connect(db)
    con.executescript(
        "DROP TABLE units_fts;"
        "DROP VIEW units_fts_source;"  # (schema 4 keeps the FTS text apart)
        "DROP TABLE units_fts_text;"
        "CREATE VIRTUAL TABLE units_fts USING fts5(title, outline_path, tags, body, cjk,"
        " tokenize = 'porter unicode61 remove_diacritics 2');"
        "INSERT INTO units_fts(rowid, title, outline_path, tags, body, cjk)"
        " SELECT rowid, title, '', '', body, '' FROM units;"
        f"PRAGMA user_version = {before_meta};"
    )
    con.close()
    assert len(MIGRATIONS) >= 2
    with Cairn(Config(db_path=db)) as cairn:
        assert cairn.store.schema_version == len(MIGRATIONS)
        # old text kept (ooc.md's "topics: Emergence" property is named by the word:
        # query understanding brings it in below the text match)
        assert _paths(cairn, "emergence") == ["plain.md", "ooc.md"]
        assert _paths(cairn, "9780201483406") == []  # meta not there yet
        run = cairn.index()
        assert run.changed + run.added >= 1
        assert _paths(cairn, "9780201483406") == ["ooc.md"]


def test_nearest_by_meaning_note(tmp_path: Path) -> None:
    pytest.importorskip("model2vec")
    from cairn.embed.static import StaticEmbedder

    emb: Embedder = StaticEmbedder()
    root = tmp_path / "v"
    root.mkdir()
    (root / "cat.md").write_text("# Cat\n\nThe kitten naps on the windowsill.\n", "utf-8")
    (root / "dog.md").write_text("# Dog\n\nWalks in the park twice a day.\n", "utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        embed_pass(cairn.store, emb)
        s = SearchService(cairn.store, SearchConfig(), SemanticConfig(), embedder=emb)
        res = s.search("xyzzyplugh", mode="hybrid")
        if res.hits:
            assert NEAREST_BY_MEANING in res.notes
        matched = s.search("kitten", mode="hybrid")
        assert matched.hits and NEAREST_BY_MEANING not in matched.notes
