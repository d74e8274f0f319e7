"""Keyword search SQL a busy server leans on: a filter that names its units by rowid
(``id:``, ``tag:``) is checked on the FTS row before BM25 and the joins, with the
same hits and scores as the unfiltered ranking restricted afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.model import Filter, Term, TextQuery


def test_an_id_filter_ranks_only_its_documents_units(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    root = tmp_path / "v"
    root.mkdir()
    for i in range(6):
        (root / f"n{i}.md").write_text(
            f"# Compost {i}\n\nCompost and bread {i}.\n\n## Part\n\nMore compost {i} #kitchen\n")
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([root])
        store = c.store
        weights = c.config.search.weights
        words = TextQuery((Term(("compost",)), Term(("bread",))))
        everything = store.search_text(words, limit=1000, weights=weights)
        doc = c.search("compost", mode="keyword").hits[2].document_id
        facts = store.unit_facts([u for u, _ in everything])
        want = [(u, s) for u, s in everything if facts[u].document_id == doc]
        assert len(want) >= 2
        seen: list[str] = []
        db = store.db  # type: ignore[attr-defined]
        db.set_trace_callback(seen.append)
        try:
            got = store.search_text(TextQuery(words.terms, (Filter("id", doc),)),
                                    limit=1000, weights=weights)
            tagged = store.search_text(TextQuery(words.terms, (Filter("tag", "kitchen"),)),
                                       limit=1000, weights=weights)
        finally:
            db.set_trace_callback(None)
        assert got == want
        assert [u for u, _ in tagged] == [u for u, _ in everything if u in dict(tagged)]
        assert len(tagged) == 6
        ranked = [s for s in seen if "bm25(" in s]
        assert len(ranked) == 2 and all("f.rowid IN (SELECT" in s for s in ranked)
        only = store.search_text(TextQuery((), (Filter("id", doc),)), limit=1000,
                                 weights=weights)
        # filter-only: the document's units in order, its preamble last (ROUNDS_ORDER)
        assert [u for u, _ in only] == [r[0] for r in db.execute(
            "SELECT id FROM units WHERE document_id = ? ORDER BY kind = 'preamble', ordinal",
            (doc,))]
        unit = want[0][0]  # a unit's own id names that unit alone
        assert store.search_text(TextQuery((), (Filter("id", unit),)), limit=9,
                                 weights=weights) == [(unit, 0.0)]


def test_words_with_a_broad_filter_rank_the_best_rows_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``format:``, ``kind:``, ``path:`` … with words: FTS5's best rows by rank, then the
    filter on them, not a join of every match; the hits, scores and order equal the
    join's at every limit, for a filter most units pass and for one few pass."""
    from cairn.store.sqlite.fts import SearchMixin

    monkeypatch.setenv("CAIRN_EMBED", "none")
    root = tmp_path / "v"
    root.mkdir()
    for i in range(40):
        ext = "org" if i % 5 else "md"
        head = "* " if ext == "org" else "# "
        (root / f"n{i:02d}.{ext}").write_text(
            f"{head}Compost {i}\n\n{'compost ' * (i % 7 + 1)}and bread {i}.\n")
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([root])
        store = c.store
        weights = c.config.search.weights
        words = (Term(("compost",)), Term(("bread",)))
        filters = [Filter("format", "org"), Filter("format", "markdown"),
                   Filter("path", "n07"), Filter("kind", "heading", negate=True)]
        joined: dict[tuple[int, int], list[tuple[str, float]]] = {}
        with monkeypatch.context() as m:  # the join alone, as before
            m.setattr(SearchMixin, "_top_then_filter", lambda *a, **k: None)
            for i, f in enumerate(filters):
                for limit in (1, 3, 10, 40):
                    joined[i, limit] = store.search_text(
                        TextQuery(words, (f,)), limit=limit, weights=weights)
        assert len(joined[0, 40]) == 32 and len(joined[2, 40]) == 1
        db = store.db  # type: ignore[attr-defined]

        def check() -> list[str]:
            seen: list[str] = []
            db.set_trace_callback(seen.append)
            try:
                for i, f in enumerate(filters):
                    for limit in (1, 3, 10, 40):
                        got = store.search_text(TextQuery(words, (f,)), limit=limit,
                                                weights=weights)
                        assert got == joined[i, limit], (f, limit)
            finally:
                db.set_trace_callback(None)
            return seen

        seen = check()
        assert any("rank MATCH" in s for s in seen)
        assert not any("bm25(units_fts" in s for s in seen), "no join ranked every match"
        monkeypatch.setattr("cairn.store.sqlite.fts.FILTER_FIRST", 1)
        monkeypatch.setattr("cairn.store.sqlite.fts.FILTER_FIRST_MIN", 1)
        seen = check()  # too few of the best rows pass path:n07: then the join
        assert any("bm25(units_fts" in s for s in seen)
